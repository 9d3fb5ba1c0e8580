"""Article 4.3-4.5: which touched piece had to be moved or captured, from the lifts alone.

Pure: the position, the pieces lifted in it (in order), the move made. Every
piece the player on move touched counts, not only the first one lifted:

- his own pieces (4.3a): the first touched that can be moved must move;
- the opponent's (4.3b): the first touched that can be captured must be;
- both colours (4.3c): he must capture that opposing piece with that piece of
  his own; if that is illegal, whichever of the two was touched first must be
  moved or captured;
- none of them can be moved or captured (4.5): any legal move.

The piece moved is touched too (the hand lifts it), so a clean move satisfies
the rule by itself; the article named in ``detail`` is the one the touches
*besides* the move's own pieces call for.

A rook touched before the king, then castling on that side, is 4.4b
(``castling_rook_first``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import chess

from daemon.rules.placement import captured_square, castling_squares
from daemon.rules.tree import Lift
from drivers.records import FrozenRecord

_NAMES = {"p": "pawn", "n": "knight", "b": "bishop", "r": "rook", "q": "queen", "k": "king"}


@dataclass(eq=False, repr=False, slots=True)
class TouchRuling(FrozenRecord):
    """A broken touch rule: the kind, the squares (touched, then moved), what went wrong."""

    kind: str  # touch_move or castling_rook_first
    squares: list[str]
    detail: str


def piece_name(letter: str, square: int) -> str:
    """ "the white knight on g1"."""
    colour = "white" if letter.isupper() else "black"
    return f"the {colour} {_NAMES[letter.lower()]} on {chess.square_name(square)}"


def first_touches(lifts: Sequence[Lift]) -> list[Lift]:
    """Each square once, in the order it was first touched."""
    seen: set[int] = set()
    touched = []
    for lift in lifts:
        if lift.square not in seen:
            seen.add(lift.square)
            touched.append(lift)
    return touched


def _castling_rook(board: chess.Board, own: Sequence[Lift], lift: Lift) -> bool:
    """4.4c: a rook touched after its king, to castle on a side where castling is not
    legal, was touched as part of the castling: it does not bind (4.4b binds a rook
    only when it was touched first). The king still does: another legal king move, or,
    when the king has none, any legal move."""
    king = board.king(board.turn)
    piece = board.piece_at(lift.square)
    if king is None or piece is None or piece.piece_type != chess.ROOK:
        return False
    if chess.square_rank(lift.square) != chess.square_rank(king):
        return False
    order = [touch.square for touch in own]
    if king not in order or order.index(king) > order.index(lift.square):
        return False
    kingside = chess.square_file(lift.square) > chess.square_file(king)
    return not any(
        board.is_castling(m) and board.is_kingside_castling(m) == kingside
        for m in board.legal_moves
    )


def touch_ruling(
    board: chess.Board, lifts: Sequence[Lift], move: chess.Move, cases: Mapping[str, str]
) -> TouchRuling | None:
    """What 4.3/4.4 say about ``move`` after these ``lifts`` (None: nothing broken).

    ``cases`` names the edition's sub-articles (``own``, ``opposing``, ``both``).
    """
    touched = first_touches(lifts)
    if not touched:
        return None
    turn = board.turn
    own = [lift for lift in touched if lift.piece.isupper() == (turn == chess.WHITE)]
    theirs = [lift for lift in touched if lift not in own]
    moved = chess.square_name(move.from_square)
    if own and board.is_castling(move):
        _, _, rook_from, _ = castling_squares(board, move)
        order = [lift.square for lift in own]
        king_at = order.index(move.from_square) if move.from_square in order else len(order)
        if rook_from in order[:king_at]:
            return TouchRuling(
                "castling_rook_first",
                [chess.square_name(rook_from), moved],
                "rook touched before the king; the castling stands as played",
            )
    victim = captured_square(board, move)
    part_of_move = {move.from_square, victim}
    if board.is_castling(move):
        part_of_move.add(castling_squares(board, move)[2])
    if all(lift.square in part_of_move for lift in touched):
        # only the move's own pieces were touched: the move itself (the usual case,
        # decided before the castling rook's legal-move test below: issue 28)
        return None
    own = [lift for lift in own if not _castling_rook(board, own, lift)]
    touched = [lift for lift in touched if lift in own or lift in theirs]
    extra = [lift for lift in touched if lift.square not in part_of_move]
    if not extra:
        return None  # only the move's own pieces were touched: the move itself
    legal = list(board.legal_moves)
    movable = {m.from_square for m in legal}
    captures = {captured_square(board, m) for m in legal}
    # the first of his own that can be moved, the first opposing one that can be captured
    mine = next((lift for lift in own if lift.square in movable), None)
    other = next((lift for lift in theirs if lift.square in captures), None)
    colours = {lift in own for lift in extra}
    if sum(1 for lift in lifts if lift.square == move.from_square) > 1:
        # the piece moved was touched before the touch that moved it (an illegal move
        # with it, put back: 7.4a): one of each colour touched is 4.3c
        colours.add(True)
    case = cases["both"] if len(colours) == 2 else cases["own" if True in colours else "opposing"]
    if mine is not None and other is not None:
        pair = next(
            (
                m
                for m in legal
                if m.from_square == mine.square and captured_square(board, m) == other.square
            ),
            None,
        )
        if pair is not None:  # 4.3c: capture the opposing piece with his own
            if move.from_square == mine.square and victim == other.square:
                return None
            return TouchRuling(
                "touch_move",
                [chess.square_name(mine.square), chess.square_name(other.square), moved],
                f"{cases['both']}: pieces of both colours were touched; "
                f"{piece_name(mine.piece, mine.square)} could capture "
                f"{piece_name(other.piece, other.square)} and had to",
            )
        due: Lift | None = mine if touched.index(mine) < touched.index(other) else other
    else:
        due = mine or other
    if due is None:
        return None  # 4.5: none of the touched pieces can be moved or captured
    if due is mine and move.from_square == due.square:
        return None
    if due is other and victim == due.square:
        return None
    duty = "moved" if due is mine else "captured"
    return TouchRuling(
        "touch_move",
        [chess.square_name(due.square), moved],
        f"{case}: {piece_name(due.piece, due.square)} was the first touched piece that "
        f"could be {duty}, and had to be {duty}",
    )
