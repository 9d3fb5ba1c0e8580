"""Placements as 64-byte keys: the one representation the core compares.

A placement key is ``bytes`` of length 64, indexed by python-chess square
numbers (a1 = 0 ... h8 = 63), each byte a FEN piece letter or ``.`` for an
empty square. Comparing two positions, or looking a sensor picture up among a
node's children, is then a dict lookup on bytes, not a move generation.

A board turned round by 180 degrees reports square ``s`` where the true square
is ``63 - s``; the true key is the reported key reversed (Article 7.1b).

What a placement looks like next to a position (the second half of this module,
once ``shapes.py``): pure predicates the rules core asks on every board change - a
move under way (a piece in the hand, a capture half done), a half-made castling or
promotion, a move-shaped change that is no legal move (7.4), the board between a
position and one of its moves, which square a move captures on, which positions
seen in passing lie on a line of moves, a result signalled with the kings, the next
game being set up. None of them looks at time or at the core's phase, so each is
true or false of the placements alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import chess

from drivers.dgt.resultsignals import CENTRE_SQUARES
from drivers.dgt.resultsignals import RESULT_SIGNALS as SIGNAL_TABLE

if TYPE_CHECKING:  # the tree builds on the keys; the shapes only name its nodes
    from daemon.rules.tree import Node

EMPTY = ord(".")
EMPTY_KEY = b"." * 64
_KINGS = frozenset(b"Kk")
_PAWNS = frozenset(b"Pp")
_WHITE_LETTERS = frozenset(b"PNBRQK")
#: where a pawn of each side (by ``board.turn``) stands one step from promoting
_PROMOTING_FROM = {chess.WHITE: chess.BB_RANK_7, chess.BLACK: chess.BB_RANK_2}
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
    """The key of a board's placement: each kind of piece's squares read off its
    bitboard (``piece_map`` asks every square: a tenth of a game's start, issue 28)."""
    squares = bytearray(EMPTY_KEY)
    white = board.occupied_co[chess.WHITE]
    for mask, letters in (
        (board.pawns, b"Pp"),
        (board.knights, b"Nn"),
        (board.bishops, b"Bb"),
        (board.rooks, b"Rr"),
        (board.queens, b"Qq"),
        (board.kings, b"Kk"),
    ):
        for square in chess.scan_forward(mask & board.occupied):
            squares[square] = letters[0] if white & chess.BB_SQUARES[square] else letters[1]
    return bytes(squares)


def placement_from_key(key: bytes) -> str:
    """The FEN placement field of a key (a8 first). Every move's FEN is made here."""
    return "/".join(placement_rows(key))


def placement_rows(key: bytes) -> list[str]:
    """The FEN placement field's eight rows, the eighth rank first."""
    rows = _ROWS
    return [rows.get(row) or _fen_row(row) for row in (key[start : start + 8] for start in _RANKS)]


def rank_row(key: bytes, rank: int) -> str:
    """The FEN row of one rank (0: the first) of a key."""
    row = key[rank * 8 : rank * 8 + 8]
    return _ROWS.get(row) or _fen_row(row)


_RANKS = range(56, -1, -8)  # each rank's first square, the eighth rank first


#: Rows of eight squares met so far, with their FEN text (a rank recurs from move to
#: move). Kept to ``ROWS_KEPT`` and then started afresh: a daemon up for a tournament
#: week meets new rows with every game (about 20), and at the former bound of 100,000
#: the cache alone would have held 15 MB of a Pi's memory (issue 19); 4096 are 0.6 MB.
_ROWS: dict[bytes, str] = {}
_DOT_RUNS = [(str(n), "." * n) for n in range(8, 0, -1)]
ROWS_KEPT = 4096


def _fen_row(row: bytes) -> str:
    text = _ROWS.get(row)
    if text is None:
        text = row.decode("ascii")
        for length, dots in _DOT_RUNS:  # longest first: each run is replaced whole
            text = text.replace(dots, length)
        if len(_ROWS) >= ROWS_KEPT:
            _ROWS.clear()
        _ROWS[row] = text
    return text


_SQUARE_NUMBERS = {name: square for square, name in enumerate(chess.SQUARE_NAMES)}


def square_number(name: str) -> int:
    """``chess.parse_square`` by a dict: python-chess's searches the 64 names, a
    twentieth of the rules core's work on a piece lifted (issue 28)."""
    try:
        return _SQUARE_NUMBERS[name]
    except KeyError:
        raise ValueError(f"{name!r} is not a square name") from None


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
    """Squares whose contents differ, in square order.

    On every board change (``Node.match``): the two keys are read as one integer
    each, and their XOR's non-zero bytes are the squares, so the work is per
    differing square, not per rank (issue 28).
    """
    diff = int.from_bytes(a, "little") ^ int.from_bytes(b, "little")
    squares: list[int] = []
    while diff:
        square = ((diff & -diff).bit_length() - 1) >> 3
        squares.append(square)
        diff &= ~(0xFF << (square << 3))
    return squares


def is_subset(part: bytes, whole: bytes) -> bool:
    """Every piece of ``part`` stands on the same square in ``whole`` (pieces lifted).

    Asked for each legal move of unexplained boards: only the differing squares
    are read (they must be empty in ``part``), not all 64 (issue 28).
    """
    if len(part) != len(whole):
        raise ValueError("keys of different lengths")
    return all(part[square] == EMPTY for square in differing_squares(part, whole))


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


# ---------------------------------------------------------------- shapes of a placement

#: how many plies deep the positions seen in passing go at most
MAX_SEEN = 12


def captured_square(board: chess.Board, move: chess.Move) -> int | None:
    """The square of the piece ``move`` captures (en passant: beside the target), or None."""
    if board.is_en_passant(move):
        return move.to_square - 8 if board.turn == chess.WHITE else move.to_square + 8
    if board.is_castling(move):
        return None
    return move.to_square if board.piece_at(move.to_square) else None


def descends(node: Node, ancestor: Node) -> bool:
    """``ancestor`` is on the way to ``node`` (seen positions are a few plies deep)."""
    parent = node.parent
    for _ in range(MAX_SEEN + 1):
        if parent is None:
            return False
        if parent is ancestor:
            return True
        parent = parent.parent
    return False


def seen_path(current: Node, seen: Sequence[Node], target: Node) -> list[Node]:
    """The seen nodes from ``current``'s child down to ``target``; [] when not a line."""
    path = [target]
    while path[-1].parent is not current:
        parent = path[-1].parent
        if parent is None or parent not in seen:
            return []
        path.append(parent)
    return path[::-1]


def half_moves(node: Node) -> dict[bytes, str]:
    """King alone on its castling square, pawn alone on the last rank: moves not yet made (4.6)."""
    shapes: dict[bytes, str] = {}
    board = node.board
    own = board.occupied_co[board.turn]
    # only the king's moves and the pawns' one step from the last rank are read
    about_to_promote = board.pawns & own & _PROMOTING_FROM[board.turn]
    for move in node.legal_moves(board.kings & own | about_to_promote):
        if board.is_castling(move):
            king_from, king_to, _, _ = castling_squares(board, move)
            if king_from != king_to:
                squares = bytearray(node.key)
                squares[king_to], squares[king_from] = squares[king_from], EMPTY
                shapes[bytes(squares)] = "incomplete_castling"
        elif move.promotion == chess.QUEEN:
            squares = bytearray(node.key)
            squares[move.to_square], squares[move.from_square] = squares[move.from_square], EMPTY
            shapes[bytes(squares)] = "incomplete_promotion"
    return shapes


def promotion_before_pawn(node: Node, key: bytes) -> bool:
    """The new piece already on the promotion square, the pawn not yet lifted (4.6c).

    A player may set the queen down first and then take the pawn away: for a
    moment both stand. With a capture the victim may be gone or still there
    (the code replaced by the new piece's).
    """
    board = node.board
    own = "QRBN" if board.turn == chess.WHITE else "qrbn"
    pawns = board.pawns & board.occupied_co[board.turn] & _PROMOTING_FROM[board.turn]
    for move in node.legal_moves(pawns) if pawns else ():
        if not move.promotion:
            continue
        placed = key[move.to_square]
        if placed == node.key[move.to_square] or chr(placed) not in own:
            continue
        if key[move.from_square] != node.key[move.from_square]:
            continue
        if all(
            k == n
            for s, (k, n) in enumerate(zip(key, node.key, strict=True))
            if s != move.to_square
        ):
            return True
    return False


def illegal_castlings(node: Node) -> list[tuple[bytes, bytes]]:
    """The castlings the board may show although they are not legal (the right lost, a
    square attacked): (the king alone on its castling square, king and rook castled).

    Standard chess only: king and rook on their squares, the squares between empty.
    A player castling so is making a move, slowly perhaps (the rook in his hand): an
    illegal move once it is complete, never a displacement on the way (4.4c, 7.4a).
    """
    board = node.board
    if board.chess960:
        return []
    rank = 0 if board.turn == chess.WHITE else 7
    king_from = chess.square(4, rank)
    king = node.key[king_from]
    if chr(king) != ("K" if board.turn == chess.WHITE else "k"):
        return []
    shapes = []
    for rook_file, king_file, rook_file_to in ((7, 6, 5), (0, 2, 3)):
        rook_from = chess.square(rook_file, rank)
        rook = node.key[rook_from]
        if chr(rook) != ("R" if board.turn == chess.WHITE else "r"):
            continue
        low, high = sorted((4, rook_file))
        if any(node.key[chess.square(f, rank)] != EMPTY for f in range(low + 1, high)):
            continue
        king_to, rook_to = chess.square(king_file, rank), chess.square(rook_file_to, rank)
        if chess.Move(king_from, king_to) in board.legal_moves:
            continue
        half = bytearray(node.key)
        half[king_from], half[king_to] = EMPTY, king
        whole = bytearray(half)
        whole[rook_from], whole[rook_to] = EMPTY, rook
        shapes.append((bytes(half), bytes(whole)))
    return shapes


def in_progress(node: Node, key: bytes) -> bool:
    """Pieces in hand, a half-made move, a captured piece on its way off the board."""
    if is_subset(key, node.key) or key in half_moves(node):
        return True
    for half, whole in illegal_castlings(node):
        if key == half or (key != whole and is_subset(key, whole)):
            return True  # an illegal castling under way: judged once it is complete
    board = node.board
    for child_key, move in node.legal_children().items():
        if is_subset(key, child_key):
            return True
        victim_square = captured_square(board, move)
        if victim_square is None:
            continue
        extra = differing_squares(child_key, key)
        if (
            len(extra) == 1
            and child_key[extra[0]] == EMPTY
            and key[extra[0]] == node.key[victim_square]
        ):
            return True
    return promotion_before_pawn(node, key)


def between(node: Node, key: bytes) -> bool:
    """Each square as in ``node`` or as in one legal move of it, or emptied by a hand.

    A piece set down on its new square before its old one is lifted, a captured
    piece still standing: the board between a position and a legal move of it.
    """
    for child_key in node.legal_children():
        if all(k in (c, n, EMPTY) for k, c, n in zip(key, child_key, node.key, strict=True)):
            return True
    return False


def explains(node: Node, key: bytes) -> bool:
    """A legal move of ``node`` on the board, or under way."""
    return node.match(key) is not None or in_progress(node, key) or between(node, key)


def move_shaped(node: Node, key: bytes) -> bool:
    """The mover's piece taken to another square, maybe removing an opposing one (7.4a).

    Also a pawn on the last rank replaced by a piece of the wrong colour: a
    promotion that fails its requirements is an illegal move, not a displacement.
    """
    mover = node.turn
    vacated, arrived, removed, foreign = [], [], [], []
    for square in _changed(node.key, key):
        before, after = node.key[square], key[square]
        if colour_of(before) == mover and after == EMPTY:
            vacated.append(square)
        elif colour_of(after) == mover and colour_of(before) != mover:
            arrived.append(square)
        elif colour_of(before) == (not mover) and after == EMPTY:
            removed.append(square)
        elif colour_of(after) == (not mover) and colour_of(before) != mover:
            foreign.append(square)
        else:
            return False
    if foreign:
        return _wrong_colour_promotion(node, vacated, removed, foreign, arrived)
    if len(vacated) == 1 and len(arrived) == 1 and len(removed) <= 1:
        piece, placed = node.key[vacated[0]], key[arrived[0]]
        if removed and node.key[arrived[0]] != EMPTY:
            return False
        last_rank = chess.square_rank(arrived[0]) in (0, 7)
        return piece == placed or (chr(piece) in "Pp" and last_rank)
    if len(vacated) == 2 and len(arrived) == 2 and not removed:
        return sorted(node.key[s] for s in vacated) == sorted(key[s] for s in arrived)
    return False


def _wrong_colour_promotion(
    node: Node, vacated: list[int], removed: list[int], foreign: list[int], arrived: list[int]
) -> bool:
    """The mover's pawn gone from the seventh rank, an opposing piece on the last rank."""
    if len(vacated) != 1 or len(foreign) != 1 or arrived or removed:
        return False
    pawn, target = vacated[0], foreign[0]
    if chr(node.key[pawn]) not in "Pp" or chess.square_rank(target) not in (0, 7):
        return False
    return abs(chess.square_file(pawn) - chess.square_file(target)) <= 1


def _changed(a: bytes, b: bytes) -> Iterable[int]:
    return iter(differing_squares(a, b))


def unpromoted_pawn_move(node: Node, key: bytes) -> chess.Move | None:
    """The queen promotion whose pawn stands unpromoted on the last rank in ``key``."""
    board = node.board
    for move in board.legal_moves:
        if move.promotion != chess.QUEEN:
            continue
        squares = bytearray(node.key)
        squares[move.to_square], squares[move.from_square] = squares[move.from_square], EMPTY
        if bytes(squares) == key:
            return move
    return None


def on_the_way_back(before: bytes, reported: bytes, key: bytes) -> bool:
    """Every square as in the position, as in the placement reported, or emptied by a hand.

    The player putting an illegal move (or a displacement) right: a rook lifted
    while the king already stands on its square again is no new alarm.
    """
    return key != before and all(
        k in (b, r, EMPTY) for k, b, r in zip(key, before, reported, strict=True)
    )


def swapped_promotion(node: Node, key: bytes) -> chess.Move | None:
    """The promotion into ``node`` made again with another piece (4.4d forbids the swap)."""
    move, parent = node.move, node.parent
    if move is None or parent is None or not move.promotion:
        return None
    other = parent.match(key)
    if (
        other is not None
        and other.from_square == move.from_square
        and other.to_square == move.to_square
        and other.promotion not in (None, move.promotion)
    ):
        return other
    return None


# ---------------------------------------------------------------- the end of a game

CENTRE = frozenset(chess.parse_square(name) for name in CENTRE_SQUARES)
#: DGT's convention (``drivers.dgt.resultsignals``: both kings on light centre squares,
#: White wins; on dark ones, Black wins; side by side on the 4th or 5th rank, a draw),
#: by square number.
RESULT_SIGNALS = {
    frozenset(chess.parse_square(name) for name in pair): result
    for pair, result in SIGNAL_TABLE.items()
}


def _kings_moved_only(before: bytes, key: bytes) -> list[int] | None:
    """The kings' squares in ``key`` when nothing but the kings changed, else None.

    A king may stand on a centre square, or on its own square, or be in the hand;
    a piece on a centre square may have been taken off to make room.
    """
    # Asked on every unexplained board: only the changed squares are read (issue 28).
    for square in differing_squares(before, key):
        now, was = key[square], before[square]
        if now in _KINGS:
            if square not in CENTRE:
                return None
        elif not (now == EMPTY and (was in _KINGS or square in CENTRE)):
            return None
    return sorted(_squares_of(key, ord("K")) + _squares_of(key, ord("k")))


def _squares_of(key: bytes, letter: int) -> list[int]:
    """The squares holding ``letter``, in square order."""
    squares = []
    square = key.find(letter)
    while square >= 0:
        squares.append(square)
        square = key.find(letter, square + 1)
    return squares


def result_signal(before: bytes, key: bytes) -> str | None:
    """The result the two kings on the centre squares signal, else None (a legal position
    never has the kings side by side, so this is never a move)."""
    kings = _kings_moved_only(before, key)
    if kings is None or len(kings) != 2 or key[kings[0]] == key[kings[1]]:
        return None
    return RESULT_SIGNALS.get(frozenset(kings))


def signalling_result(before: bytes, key: bytes) -> bool:
    """A king already on a centre square, the other on its way: no alarm meanwhile."""
    kings = _kings_moved_only(before, key)
    if kings is None:
        return False
    return any(square in CENTRE and before[square] != key[square] for square in kings)


# ---------------------------------------------------------------- setting up the next game


def setting_up(before: bytes, key: bytes) -> int:
    """How many pieces stand on start squares they were not on, when nothing else moved.

    Every square that differs from the position is either emptied or holds its
    piece of the start position (either way round): the players are setting up
    the next game. 0 when anything else differs.
    """
    best = 0
    for start in (STANDARD_START_KEY, STANDARD_START_KEY[::-1]):
        placed = 0
        for square in range(64):
            now, was = key[square], before[square]
            if now in (was, EMPTY):
                continue
            if now != start[square]:
                placed = 0
                break
            placed += 1
        best = max(best, placed)
    return best


def set_up_step(before: bytes, move: chess.Move) -> bool:
    """``move`` puts a piece off its start square back on it, capturing nothing: what a
    step of setting up the next game looks like (either way round)."""
    piece = before[move.from_square]
    if before[move.to_square] != EMPTY or move.promotion:
        return False
    return any(
        start[move.to_square] == piece and start[move.from_square] != piece
        for start in (STANDARD_START_KEY, STANDARD_START_KEY[::-1])
    )


def moved_next_door(before: bytes, key: bytes) -> bool:
    """A piece now stands on a square next to the one it left: what a knock does."""
    changed = differing_squares(before, key)  # both kinds of square differ
    placed = [s for s in changed if key[s] != EMPTY]
    vacated = [s for s in changed if key[s] == EMPTY]
    return any(
        before[v] == key[p] and chess.square_distance(p, v) <= 1 for p in placed for v in vacated
    )


def standard_start_orientation(raw: bytes) -> bool | None:
    """The board as reported shows the standard start position: False the right way
    round, True turned round (7.1b); None: not the start position."""
    if raw == STANDARD_START_KEY:
        return False
    if turned(raw) == STANDARD_START_KEY:
        return True
    return None


def start_in_view(raw: bytes, chess960: bool) -> tuple[chess.Board, bool, bool] | None:
    """The start position the board as reported shows (either way round; a Chess960
    start only when ``chess960`` allows it): (its board, turned round, a Chess960 game
    other than the standard position), or None."""
    flipped = standard_start_orientation(raw)
    if flipped is not None:
        return chess.Board(), flipped, False
    if not chess960:
        return None
    for flipped, key in ((False, raw), (True, turned(raw))):
        index = chess960_start_index(key)
        if index is not None:
            return chess.Board.from_chess960_pos(index), flipped, index != 518
    return None
