"""Placements as 64-byte keys: the one representation the core compares.

A placement key is ``bytes`` of length 64, indexed by python-chess square
numbers (a1 = 0 ... h8 = 63), each byte a FEN piece letter or ``.`` for an
empty square. Comparing two positions, or looking a sensor picture up among a
node's children, is then a dict lookup on bytes, not a move generation.

A board turned round by 180 degrees reports square ``s`` where the true square
is ``63 - s``; the true key is the reported key reversed (Article 7.1b).
"""

from __future__ import annotations

import re

import chess

EMPTY = ord(".")
EMPTY_KEY = b"." * 64
_RUNS = re.compile(r"\.+")
_KINGS = frozenset(b"Kk")
_PAWNS = frozenset(b"Pp")
_WHITE_LETTERS = frozenset(b"PNBRQK")
_BLACK_LETTERS = frozenset(b"pnbrqk")


def key_from_placement(placement: str) -> bytes:
    """The key of a FEN placement field (a8 first)."""
    squares = bytearray(EMPTY_KEY)
    rank, file = 7, 0
    for char in placement:
        if char == "/":
            rank, file = rank - 1, 0
        elif char.isdigit():
            file += int(char)
        else:
            squares[rank * 8 + file] = ord(char)
            file += 1
    return bytes(squares)


def key_from_board(board: chess.Board) -> bytes:
    squares = bytearray(EMPTY_KEY)
    for square, piece in board.piece_map().items():
        squares[square] = ord(piece.symbol())
    return bytes(squares)


def placement_from_key(key: bytes) -> str:
    """The FEN placement field of a key (a8 first)."""
    return "/".join(_fen_row(key[rank * 8 : rank * 8 + 8]) for rank in range(7, -1, -1))


#: Rows of eight squares met so far, with their FEN text (a rank recurs from move to
#: move). Kept to ``ROWS_KEPT`` and then started afresh: a daemon up for a tournament
#: week meets new rows with every game (about 20), and at the former bound of 100,000
#: the cache alone would have held 15 MB of a Pi's memory (issue 19); 4096 are 0.6 MB.
_ROWS: dict[bytes, str] = {}
ROWS_KEPT = 4096


def _fen_row(row: bytes) -> str:
    text = _ROWS.get(row)
    if text is None:
        text = _RUNS.sub(lambda run: str(len(run.group())), row.decode("ascii"))
        if len(_ROWS) >= ROWS_KEPT:
            _ROWS.clear()
        _ROWS[row] = text
    return text


def turned(key: bytes) -> bytes:
    """The key of the same pieces seen from the other side of the board."""
    return key[::-1]


def colour_of(code: int) -> chess.Color | None:
    if code in _WHITE_LETTERS:
        return chess.WHITE
    if code in _BLACK_LETTERS:
        return chess.BLACK
    return None


def differing_squares(a: bytes, b: bytes) -> list[int]:
    """Squares whose contents differ; compares whole ranks first (this is on the hot path)."""
    squares: list[int] = []
    for start in range(0, 64, 8):
        end = start + 8
        if a[start:end] != b[start:end]:
            squares.extend(s for s in range(start, end) if a[s] != b[s])
    return squares


def is_subset(part: bytes, whole: bytes) -> bool:
    """Every piece of ``part`` stands on the same square in ``whole`` (pieces lifted)."""
    return all(p in (EMPTY, w) for p, w in zip(part, whole, strict=True))


def castling_squares(board: chess.Board, move: chess.Move) -> tuple[int, int, int, int]:
    """(king from, king to, rook from, rook to) of a castling move, standard or Chess960."""
    king_from = move.from_square
    back_rank = chess.square_rank(king_from)
    kingside = board.is_kingside_castling(move)
    rook_from = move.to_square if board.chess960 else chess.square(7 if kingside else 0, back_rank)
    king_to = chess.square(6 if kingside else 2, back_rank)
    rook_to = chess.square(5 if kingside else 3, back_rank)
    return king_from, king_to, rook_from, rook_to


def child_key(key: bytes, board: chess.Board, move: chess.Move) -> bytes:
    """The placement after ``move``, computed from the parent's key without a push.

    Called for every pseudo-legal move of every position reached, so it reads
    the key instead of asking python-chess what kind of move this is.
    """
    squares = bytearray(key)
    frm, to = move.from_square, move.to_square
    piece = squares[frm]
    if piece in _KINGS and (abs(to - frm) == 2 or colour_of(squares[to]) == colour_of(piece)):
        king_from, king_to, rook_from, rook_to = castling_squares(board, move)
        king, rook = squares[king_from], squares[rook_from]
        squares[king_from] = squares[rook_from] = EMPTY
        squares[king_to], squares[rook_to] = king, rook
        return bytes(squares)
    if move.promotion:
        symbol = chess.piece_symbol(move.promotion)
        piece = ord(symbol.upper() if board.turn == chess.WHITE else symbol)
    elif piece in _PAWNS and squares[to] == EMPTY and (to - frm) % 8:
        squares[to - 8 if board.turn == chess.WHITE else to + 8] = EMPTY  # en passant
    squares[frm] = EMPTY
    squares[to] = piece
    return bytes(squares)


STANDARD_START_KEY = key_from_placement(chess.STARTING_BOARD_FEN)


def chess960_start_index(key: bytes) -> int | None:
    """The Chess960 number (0-959) of a start placement (Appendix F), else None."""
    if key[8:16] != b"P" * 8 or key[48:56] != b"p" * 8 or key[16:48] != b"." * 32:
        return None
    white_back, black_back = key[0:8], key[56:64]
    if black_back != white_back.lower():
        return None
    try:
        board = chess.Board(placement_from_key(key) + " w KQkq - 0 1", chess960=True)
    except ValueError:
        return None
    return board.chess960_pos()


def looks_like_a_setup(key: bytes) -> bool:
    """32 pieces with both pawn rows in place: someone set up a game (7.1a checks it)."""
    pawns = (key[8:16] == b"P" * 8 and key[48:56] == b"p" * 8) or (
        key[8:16] == b"p" * 8 and key[48:56] == b"P" * 8
    )
    return pawns and key[16:48] == b"." * 32 and EMPTY not in key[0:8] + key[56:64]
