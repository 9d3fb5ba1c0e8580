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
_PAWNS = frozenset(b"Pp")
_WHITE = frozenset(b"PNBRQK")
_EMPTY = ord(".")
_FILES = chess.FILE_NAMES
_SQUARES = chess.SQUARE_NAMES
_LETTERS = {piece_type: chess.piece_symbol(piece_type).upper() for piece_type in chess.PIECE_TYPES}
_TYPES = {letter: piece_type for piece_type, letter in _LETTERS.items()}


def san(
    board: chess.Board,
    move: chess.Move,
    after: chess.Board | None = None,
    after_has_legal_move: bool | None = None,
    *,
    key: bytes | None = None,
    check: bool | None = None,
) -> str:
    """The move's SAN, as PGN writes it, the same text as python-chess's ``Board.san``.

    ``Board.san`` pushes the move to look for check and mate and generates the legal
    replies; the core has the position after the move already (``after``, or whether
    it is ``check``) and asks it those questions anyway, so given them only the text
    before the suffix is made here (issue 28: a fifth of a move's cost). With ``key``
    (the placement before the move) that text is read off the squares unless another
    piece of the same kind could go to the same square (python-chess then writes
    which one). Without them, ``Board.san`` itself.
    """
    if check is None:
        if after is None:
            return board.san(move)
        check = after.is_check()
    if check and after_has_legal_move is None:
        return board.san(move)
    text = (key is not None and _plain_san(board, key, move)) or board._algebraic_without_suffix(
        move
    )
    if check:
        return text + ("+" if after_has_legal_move else "#")
    return text


def _plain_san(board: chess.Board, key: bytes, move: chess.Move) -> str | None:
    """The SAN before its suffix, when nothing needs telling apart; else None."""
    frm, to = move.from_square, move.to_square
    piece = key[frm]
    if piece in _PAWNS:
        text = f"{_FILES[frm & 7]}x{_SQUARES[to]}" if (frm ^ to) & 7 else _SQUARES[to]
        return f"{text}={_LETTERS[move.promotion]}" if move.promotion else text
    letter = chr(piece).upper()
    taken = key[to] != _EMPTY and (key[to] in _WHITE) != (piece in _WHITE)
    if letter == "K" and ((key[to] != _EMPTY and not taken) or abs((frm & 7) - (to & 7)) == 2):
        return "O-O-O" if to & 7 < frm & 7 else "O-O"  # castling (king takes rook)
    rivals = board.pieces_mask(_TYPES[letter], board.turn) & ~chess.BB_SQUARES[frm]
    target = chess.BB_SQUARES[to]
    for square in chess.scan_forward(rivals):
        if board.attacks_mask(square) & target:
            return None  # another could go there: python-chess tells them apart
    return f"{letter}x{_SQUARES[to]}" if taken else f"{letter}{_SQUARES[to]}"


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
        # a legal move's SAN begins with its piece's letter (a pawn's: its file, in
        # lower case) and has an x when it captures, as python-chess writes it
        piece = _PIECE_WORDS.get(body[0], "pawn")
        takes = "x" in body
        words += [
            piece,
            _SQUARES[move.from_square],
            "takes" if takes else "to",
            _SQUARES[move.to_square],
        ]
        if takes and piece == "pawn" and board.is_en_passant(move):
            words.append("en passant")
        if move.promotion:
            words.append("promotes to " + _PIECE_WORDS[_LETTERS[move.promotion]])
    if san_text.endswith("#"):
        words.append("checkmate")
    elif san_text.endswith("+"):
        words.append("check")
    return " ".join(words)
