"""A move's text: its SAN, made once, and a plain fallback for its ``speech``.

``san`` is the one place a move is written: the rules core writes each move's SAN
with it once, into the Move event; the journal's PGN, the page, MQTT and the
clock's display show that text, and the speech says the same move value in its own
words (``daemon.speech.tokens`` takes the SAN as given, never writing it again).

The real Appendix E phrasing lives in ``daemon.speech`` and is injected through
``RulesSettings.describe_move`` (called with the board before the move, the move and
its SAN); ``describe_move`` here only keeps the feed useful without it.
"""

from __future__ import annotations

import chess

_PIECE_WORDS = {"K": "king", "Q": "queen", "R": "rook", "B": "bishop", "N": "knight"}


def san(
    board: chess.Board,
    move: chess.Move,
    after: chess.Board | None = None,
    after_has_legal_move: bool | None = None,
) -> str:
    """The move's SAN, as PGN writes it, the same text as python-chess's ``Board.san``.

    ``Board.san`` pushes the move to look for check and mate and generates the legal
    replies; the core has the position after the move already (``after``) and asks it
    those questions anyway, so given them only the text before the suffix is made
    here (issue 28: a fifth of a move's cost). Without them, ``Board.san`` itself.
    """
    without_suffix = getattr(board, "_algebraic_without_suffix", None)
    if after is None or after_has_legal_move is None or without_suffix is None:
        return board.san(move)
    text: str = without_suffix(move)
    if after.is_check():
        return text + ("+" if after_has_legal_move else "#")
    return text


def describe_move(board: chess.Board, move: chess.Move, written: str | None = None) -> str:
    """Plain English words for the move (``written``: its SAN, when made already)."""
    san_text = written or san(board, move)
    words: list[str] = []
    body = san_text.rstrip("+#")
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
    if san_text.endswith("#"):
        words.append("checkmate")
    elif san_text.endswith("+"):
        words.append("check")
    return " ".join(words)
