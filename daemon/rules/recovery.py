"""Moves made while the board was out of reach, recovered without a guess.

When the link to the board comes back (a cable out, a Bluetooth drop, a board
gone silent), the board may show a position several moves on from the last one
the rules core decided. The moves in between are lost unless they can be found
again. Two sources, both pure:

- **The board's own memory.** A DGT board logs every field change in its
  EEPROM (``../shared/docs/dgt-protocol.md``, EE_MOVES); the link reads it back
  and hands over the placements the board passed through (``history``). A line
  of legal moves whose positions appear there, in order, is what was played.
- **A search**: every line of legal moves from the last known position to the
  one the board shows, within ``max_plies``. The shortest such lines are the
  candidates (a longer one only adds moves made and taken back, which nobody
  can see; nor does a line count in which a player's move undoes his last);
  exactly one is the answer.

Two lines reach the same position more often than one thinks (``Nf3`` and
``e4`` in either order): then nothing is recovered and the caller asks the
arbiter. This module never picks one of several.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import chess

from drivers.records import FrozenRecord

#: How far the search looks: two moves each, what a short outage allows (beyond,
#: lines that transpose are the rule, and only the board's own log can tell).
MAX_PLIES = 4
#: Positions the search may visit before it gives up (well under a second).
NODE_BUDGET = 30_000
#: Candidate lines kept to show the arbiter.
MAX_CANDIDATES = 4
#: Moves the board's log may hold since the last known position.
MAX_HISTORY_PLIES = 200


@dataclass(eq=False, repr=False)
class Recovery(FrozenRecord):
    """What was found between the last known position and the board's.

    ``moves`` is the line recovered (empty when none or several were found);
    ``how`` is ``eeprom`` (the board's log chose it), ``search`` (the only line),
    ``ambiguous`` (several lines, ``candidates``), ``none`` (no line within
    ``max_plies``) or ``gave_up`` (the search's budget ran out).
    """

    moves: tuple[chess.Move, ...]
    how: str
    candidates: tuple[tuple[chess.Move, ...], ...] = field(default=())
    nodes: int = 0

    @property
    def found(self) -> bool:
        return bool(self.moves)


def recover(
    board: chess.Board,
    target: str,
    *,
    history: Sequence[str] = (),
    max_plies: int = MAX_PLIES,
    node_budget: int = NODE_BUDGET,
) -> Recovery:
    """The line of legal moves from ``board`` to the placement ``target`` (FEN
    placement field, true orientation), if exactly one is certain.

    ``history``: placements the board's EEPROM says it showed meanwhile, oldest
    first (pieces in hand included); when given, a line counts only if each of its
    positions appears there in order, and the history may make one of several
    shortest lines the answer.
    """
    if board.board_fen() == target:
        return Recovery((), "none")
    if history:
        logged = logged_lines(board, target, history)
        if len(logged) == 1:
            return Recovery(logged[0], "eeprom", tuple(logged))
        if len(logged) > 1:
            return Recovery((), "ambiguous", tuple(logged[:MAX_CANDIDATES]))
    goal = chess.BaseBoard(target)
    search = _Search(goal, node_budget)
    for plies in range(1, max_plies + 1):
        lines = search.lines(board.copy(stack=False), plies)
        if search.exhausted:
            return Recovery((), "gave_up", tuple(lines[:MAX_CANDIDATES]), search.nodes)
        if not lines:
            continue
        if history:
            kept = [line for line in lines if _follows(board, line, history)]
            if len(kept) == 1:
                return Recovery(kept[0], "eeprom", tuple(lines[:MAX_CANDIDATES]), search.nodes)
            if kept:
                lines = kept
        if len(lines) == 1:
            return Recovery(lines[0], "search", tuple(lines), search.nodes)
        return Recovery((), "ambiguous", tuple(lines[:MAX_CANDIDATES]), search.nodes)
    return Recovery((), "none", (), search.nodes)


def describe(board: chess.Board, line: Sequence[chess.Move]) -> str:
    """A line in SAN with move numbers: ``12. Nf3 Nc6 13. e4``."""
    return board.variation_san(list(line))


def logged_lines(
    board: chess.Board, target: str, history: Sequence[str]
) -> list[tuple[chess.Move, ...]]:
    """The lines of legal moves whose positions the board's log shows in order,
    from ``board`` to ``target`` (the last move may be one made after the log was
    read); the shortest ones (a piece put down by chance on a square that makes a
    legal position can add a longer line).

    Placements are compared as bitboards (``_placement_key``), each of the log's
    parsed once a call: a restarted hall runs this for every board that moved on, at
    each of its changes until it resumes, and a FEN string made for every legal move
    of every position walked was 5-6 ms a call (``benchmarks/recovery_cost.py``)."""
    found: list[tuple[chess.Move, ...]] = []
    start = board.copy(stack=False)
    goal = _key_of(target)
    logged = [_key_of(placement) for placement in history]

    def walk(position: chess.Board, at: int, line: list[chess.Move]) -> None:
        if len(found) > MAX_CANDIDATES or len(line) > MAX_HISTORY_PLIES:
            return
        here = _placement_key(position)
        if here == goal:
            found.append(tuple(line))
        children: dict[_Key, chess.Move] = {}
        for move in position.legal_moves:
            position.push(move)
            children.setdefault(_placement_key(position), move)
            position.pop()
        final = children.get(goal) if goal is not None else None
        if final is not None and here != goal:
            found.append((*line, final))  # one more move, made after the log was read
        seen: set[_Key] = set()
        for index in range(at, len(logged)):
            placement = logged[index]
            if placement is None or placement in seen:
                continue
            step = children.get(placement)
            if step is None:
                continue
            seen.add(placement)
            position.push(step)
            line.append(step)
            walk(position, index + 1, line)
            line.pop()
            position.pop()

    walk(start, 0, [])
    if not found:
        return []
    shortest = min(len(line) for line in found)
    return list(dict.fromkeys(line for line in found if len(line) == shortest))


#: A placement as bitboards: White's squares and each kind of piece's (which side a
#: piece is on follows from White's).
_Key = tuple[int, int, int, int, int, int, int]


def _placement_key(board: chess.BaseBoard) -> _Key:
    """The placement of ``board``, cheap to make and compare (a FEN string walks
    all 64 squares)."""
    return (
        board.occupied_co[chess.WHITE],
        board.pawns,
        board.knights,
        board.bishops,
        board.rooks,
        board.queens,
        board.kings,
    )


def _key_of(placement: str) -> _Key | None:
    """A FEN placement's key; None for one no position has (no legal move leads
    to it, as no board's FEN would equal it)."""
    try:
        return _placement_key(chess.BaseBoard(placement))
    except ValueError:
        return None


def _follows(board: chess.Board, line: Sequence[chess.Move], history: Sequence[str]) -> bool:
    """Each position of ``line`` appears in ``history``, in order."""
    position = board.copy(stack=False)
    at = 0
    for move in line:
        position.push(move)
        placement = position.board_fen()
        while at < len(history) and history[at] != placement:
            at += 1
        if at == len(history):
            return False
        at += 1
    return True


def _masks(board: chess.BaseBoard) -> tuple[int, ...]:
    """Where each kind of piece stands: twelve bitboards, cheap to compare."""
    return tuple(
        board.pieces_mask(piece_type, colour)
        for colour in (chess.WHITE, chess.BLACK)
        for piece_type in chess.PIECE_TYPES
    )


class _Search:
    """Depth-first search for every line of exactly ``plies`` moves to the goal."""

    def __init__(self, goal: chess.BaseBoard, budget: int) -> None:
        self.goal = _masks(goal)
        self.goal_empty = ~goal.occupied & chess.BB_ALL
        self.budget = budget
        self.nodes = 0
        self.exhausted = False

    def lines(self, board: chess.Board, plies: int) -> list[tuple[chess.Move, ...]]:
        found: list[tuple[chess.Move, ...]] = []
        self._walk(board, plies, [], found)
        return found

    def _walk(
        self,
        board: chess.Board,
        left: int,
        line: list[chess.Move],
        found: list[tuple[chess.Move, ...]],
    ) -> None:
        if self.exhausted or len(found) > MAX_CANDIDATES:
            return
        self.nodes += 1
        if self.nodes > self.budget:
            self.exhausted = True
            return
        masks = _masks(board)
        if left == 0:
            if masks == self.goal:
                found.append(tuple(line))
            return
        if not self._reachable(board, masks, left):
            return
        own_last = line[-2] if len(line) >= 2 else None
        for move in list(board.legal_moves):
            if own_last is not None and (move.from_square, move.to_square) == (
                own_last.to_square,
                own_last.from_square,
            ):
                continue  # a move and its undo change nothing anybody could see
            board.push(move)
            line.append(move)
            self._walk(board, left - 1, line, found)
            line.pop()
            board.pop()

    def _reachable(self, board: chess.Board, masks: tuple[int, ...], left: int) -> bool:
        """A lower bound: each move sets down at most one piece where the goal wants
        it (two when castling), so the pieces still missing must fit the moves left;
        and each move empties at most two squares the goal wants empty."""
        for index, colour in ((0, chess.WHITE), (6, chess.BLACK)):
            missing = sum(
                chess.popcount(goal & ~have)
                for goal, have in zip(
                    self.goal[index : index + 6], masks[index : index + 6], strict=True
                )
            )
            moves = (left + 1) // 2 if board.turn == colour else left // 2
            per_move = 2 if board.has_castling_rights(colour) else 1
            if missing > moves * per_move:
                return False
        return chess.popcount(board.occupied & self.goal_empty) <= left * 2
