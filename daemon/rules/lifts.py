"""The pieces lifted: kept, put back, and which of them bind the player (4.3-4.5).

Every lift is remembered with its time (``GameMemory.lifts``); a piece put back on its
square marks its lift returned (a brush, an adjustment, a touched piece put back). When
a move is committed, the lifts made in its position decide whether a touched piece had
to be moved or captured (``daemon.rules.touch`` rules on them), once the previous
mover's hand is told apart: a brush re-centring the piece it released, a knock while
withdrawing. With ``report_touches`` a piece put back gives a ``touch`` event (E.9.e).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from operator import attrgetter

import chess

from daemon.game.events import DomainEvent, Irregularity, Touch
from daemon.rules.base import COLOUR_NAMES
from daemon.rules.placement import captured_square, castling_squares
from daemon.rules.report import Reporting
from daemon.rules.state import Phase
from daemon.rules.touch import touch_ruling
from daemon.rules.tree import Lift, Node

#: A hand that re-centres the piece it has just released, or brushes one while
#: withdrawing, lifts it within this long of the release (the board's report lags up
#: to 0.4 s; the fastest reply in the real capture touched 1.0 s after the press)...
BRUSH_WINDOW = 1.0

#: ... and sets it straight back within this long: not the opponent's touch (4.3b).
BRUSH_HOLD = 0.5

#: A piece of the player on move emptied this soon after the previous mover released
#: (or pressed), on a square next to where his hand set the piece down, is that hand
#: knocking it while withdrawing: a knock (7.3 if it is not put back), no touch (4.3).
KNOCK_WINDOW = 0.5


#: a lift's time, the key the time-ordered lifts are bisected by (in C: issue 28)
_lift_time = attrgetter("t")


class Lifts(Reporting):
    """The lifts, and the touch irregularities they make."""

    def _lifts_between(self, start: float | None, end: float | None) -> list[Lift]:
        """The lifts from ``start`` to ``end``, both included.

        ``lifts`` is in time order: only square changes append to it, and ``_in_order``
        makes their times strictly increase for the core's life. So the window is found
        by bisection: scanning all ``_MAX_LIFTS`` on each move cost a tenth of the
        core's work late in a long game (issue 28).
        """
        start = max(start or 0.0, self._game.touch_floor)
        lifts = self._game.lifts
        first = bisect_left(lifts, start, key=_lift_time)
        last = len(lifts) if end is None else bisect_right(lifts, end, lo=first, key=_lift_time)
        return lifts[first:last]

    def _mark_returned(self, t: float, square: int, piece: str) -> Lift | None:
        """The piece lifted last from ``square`` stands there again (a brush, an
        adjustment) since ``t`` at the earliest (never before the lift): that lift, or
        None. A DGT bus reads a board every 0.1-0.3 s (several times that in game
        time in the demo, or on a loaded machine): a re-centring held 0.3 s then read
        as held 0.6 s, past ``BRUSH_HOLD``, and was charged to the opponent (4.3b)."""
        for index in range(len(self._game.lifts) - 1, max(-1, len(self._game.lifts) - 9), -1):
            lift = self._game.lifts[index]
            if lift.square == square:
                if lift.piece == piece and lift.returned is None:
                    back = max(t, lift.t)
                    self._game.lifts[index] = Lift(
                        lift.t, lift.square, lift.piece, returned=back, since=lift.since
                    )
                    return lift
                return None
        return None

    def _report_touch(self, t: float, lift: Lift, out: list[DomainEvent]) -> None:
        """E.9.e: the player to move put back a piece of his own he had lifted in this
        turn, and it could have moved (4.3a may bind him): a ``touch`` event."""
        node = self._game.node
        if node is None or not self._state.in_game or self._state.phase is Phase.OVER:
            return
        seen = node.seen_at if node.seen_at is not None else 0.0
        if lift.t < max(seen, self._game.touch_floor or 0.0):
            return  # lifted before the last move (or before a restart): not this turn's
        board = node.board
        colour = chess.WHITE if lift.piece.isupper() else chess.BLACK
        if colour != board.turn:
            return
        if not any(move.from_square == lift.square for move in board.legal_moves):
            return  # a piece that cannot move binds nobody (4.5)
        out.append(Touch(t, "white" if colour else "black", chess.square_name(lift.square),
                         lift.piece))  # fmt: skip

    def _touch_irregularities(
        self, t: float, node: Node, move: chess.Move, child: Node
    ) -> list[Irregularity]:
        """4.3, 4.4: every piece touched in this position counts (``daemon.rules.touch``).

        The touches that count are those made between the board first showing
        the position and first showing the move's result, of pieces standing on
        their squares in that position: with fast hands the opponent's next
        touch can come before the move was decided. An opposing piece counts
        only once the position is decided, and not when the previous mover's hand
        re-centred or brushed it on the way back from his move.
        """
        mover_letters = "PNBRQK" if node.turn == chess.WHITE else "pnbrqk"
        window = [
            lift
            for lift in self._lifts_between(node.seen_at, child.seen_at)
            if chr(node.key[lift.square]) == lift.piece
        ]
        if all(lift.square == move.from_square for lift in window):
            return []  # only the piece moved was touched (the usual move, castling or not)
        if not node.board.is_castling(move):
            # only the move's own pieces touched (the usual move): nothing to rule on,
            # as ``touch_ruling`` would find after weighing each lift (issue 28)
            own_squares = (move.from_square, captured_square(node.board, move))
            if all(lift.square in own_squares for lift in window):
                return []
        first_own = next((lift.t for lift in window if lift.piece in mover_letters), None)
        # the pieces his move moves were his own touch, however fast he replied
        moving = {move.from_square}
        if node.board.is_castling(move):
            moving.add(castling_squares(node.board, move)[2])
        lifts = [
            lift
            for lift in window
            if (
                lift.piece in mover_letters
                and (lift.square in moving or not self._knocked(node, lift))
            )
            or (
                node is not self._game.release_unknown  # 4.3: not charged on a guess
                and lift.t >= node.current_at
                and not self._brush(node, lift, first_own)
            )
        ]
        ruling = touch_ruling(node.board, lifts, move, self._laws.touch_cases)
        if ruling is None:
            return []
        mover = COLOUR_NAMES[node.turn]
        return [self._plain_irregularity(t, ruling.kind, mover, ruling.squares, ruling.detail)]

    @staticmethod
    def _knock(node: Node, lift: Lift) -> bool:
        """The previous mover's hand knocking a piece of the player now on move, while
        withdrawing from the piece it released: within ``KNOCK_WINDOW`` of the release
        (or of the press), next to the square it set the piece down on."""
        move = node.move
        if move is None or chess.square_distance(lift.square, move.to_square) > 1:
            return False
        acts = [node.seen_at, node.pressed_at]
        return any(
            act is not None and lift.t >= act and lift.earliest - act <= KNOCK_WINDOW
            for act in acts
        )

    def _knocked(self, node: Node, lift: Lift) -> bool:
        """``_knock``, counted also from the hand's last lift of the move it finished (a
        captured piece parked next door and taken off): the hand withdraws after that."""
        if self._knock(node, lift):
            return True
        start = node.seen_at
        if node.move is None or start is None:
            return False
        if chess.square_distance(lift.square, node.move.to_square) > 1:
            return False
        lifts = self._game.lifts  # in time order (``_lifts_between``): only those between
        first = bisect_left(lifts, start, key=_lift_time)
        return any(
            lift.t <= other.t + KNOCK_WINDOW and chr(node.key[other.square]) != other.piece
            for other in lifts[first : bisect_left(lifts, lift.t, lo=first, key=_lift_time)]
        )

    @staticmethod
    def _brush(node: Node, lift: Lift, first_own: float | None) -> bool:
        """The previous mover's hand finishing his move, not the opponent's touch.

        Counted from the hand's last act of the move: the release, or the press
        when the clock completed it (the hand goes from the clock back to the piece);
        a polled board's lift from the earliest it may have been made (a lift read a
        slow poll after the press was not that late).
        """
        released = node.pressed_at or node.seen_at or node.current_at
        return (
            lift.returned is not None
            and lift.returned - lift.t <= BRUSH_HOLD
            and lift.earliest - released <= BRUSH_WINDOW
            and (first_own is None or first_own > lift.t)
        )
