"""A plain SAN-to-words fallback for the Move event's ``speech`` field.

The real Appendix E phrasing lives in ``daemon.speech`` and is injected through
``RulesSettings.describe_move``; this only keeps the feed useful without it.
"""

from __future__ import annotations

import chess

_PIECE_WORDS = {"K": "king", "Q": "queen", "R": "rook", "B": "bishop", "N": "knight"}


def describe_move(board: chess.Board, move: chess.Move, san: str | None = None) -> str:
    san = san or board.san(move)
    words: list[str] = []
    body = san.rstrip("+#")
    if body.startswith("O-O-O"):
        words.append("castles queenside")
    elif body.startswith("O-O"):
        words.append("castles kingside")
    else:
        piece = chess.piece_symbol(board.piece_type_at(move.from_square) or chess.PAWN).upper()
        words.append(_PIECE_WORDS.get(piece, "pawn"))
        words.append(chess.square_name(move.from_square))
        words.append("takes" if board.is_capture(move) else "to")
        words.append(chess.square_name(move.to_square))
        if board.is_en_passant(move):
            words.append("en passant")
        if move.promotion:
            words.append("promotes to " + _PIECE_WORDS[chess.piece_symbol(move.promotion).upper()])
    if san.endswith("#"):
        words.append("checkmate")
    elif san.endswith("+"):
        words.append("check")
    return " ".join(words)
