"""Irregularities judged: what no move explains, and a press on no completed move.

A placement that stood for the settle time and is neither a move, a move under way,
the board on its way back, a result signalled, nor the next game being set up, is
judged here: an illegal move when it is move-shaped (7.4), else displaced pieces
(7.3). At a press: the clock pressed without a move (6.7), a castling or a promotion
left half made (4.6), an illegal move. A lone king on a centre square waits
``SIGNAL_PATIENCE`` for the other before it is judged.
"""

from __future__ import annotations

from daemon.game.events import DomainEvent
from daemon.rules.base import COLOUR_NAMES
from daemon.rules.moves import Moves
from daemon.rules.newgame import NewGame
from daemon.rules.placement import (
    half_moves,
    in_progress,
    is_subset,
    move_shaped,
    result_signal,
    signalling_result,
    swapped_promotion,
    unpromoted_pawn_move,
)
from daemon.rules.state import Phase, Trigger

#: How long one king on a centre square waits for the other (a result signalled on
#: the board) before it is judged as the move or displacement it then is.
SIGNAL_PATIENCE = 3.0


class Irregularities(NewGame, Moves):
    """Judging a board that no move explains."""

    def _judge_unexplained(self, t: float, key: bytes, out: list[DomainEvent]) -> None:
        node = self._game.node
        assert node is not None
        if key == self._state.reported:
            return
        if self.settings.result_on_board and signalling_result(node.key, key):
            # the kings on their way to the centre squares; a king that stays there alone
            # was an illegal move or a displacement after all
            signal_until = self._view.changed_at + SIGNAL_PATIENCE
            if t < signal_until:
                self._deadline = signal_until
                self._game.signal_wait = (key, self._view.changed_at)
                return
        self._game.signal_wait = None
        if self._putting_back(key):
            return  # the placement reported on its way back: one alarm is enough
        if key != self._game.blocked_key and any(
            in_progress(base, key) for base in (node, *self._game.seen)
        ):
            return  # a move under way, from here or from a reply seen in passing
        if node.parent is not None and swapped_promotion(node, key) is not None:
            self._promotion_changed(t, COLOUR_NAMES[node.parent.turn], key, out)
            return
        if self._setting_up(t, key, out):
            return
        self._judge_shape(t, key, out)

    def _lone_king_left(self, t: float, key: bytes, out: list[DomainEvent]) -> None:
        """A king that waited alone on a centre square for the other, and left it before
        the wait ended: no result was signalled, so what stood there for the settle time
        is judged as what it was (an illegal king move, a displaced king)."""
        waiting, node = self._game.signal_wait, self._game.node
        if waiting is None or node is None or key == waiting[0]:
            return
        self._game.signal_wait = None
        shown, since = waiting
        if result_signal(node.key, key) or signalling_result(node.key, key):
            return  # the other king on its way, or the first one moved on to another square
        if t - since < self.settings.settle_time or shown == self._state.reported:
            return
        self._judge_shape(t, shown, out)

    def _judge_shape(self, t: float, key: bytes, out: list[DomainEvent]) -> None:
        """What no move explains: an illegal move when move-shaped, else displaced pieces."""
        node = self._game.node
        assert node is not None
        mover = COLOUR_NAMES[node.turn]
        if key != self._game.blocked_key and move_shaped(node, key):
            if not self._by_settle():
                return  # an illegal move is complete only with the press (6.7)
            self._report(out, self._illegal_move(t, mover, key), reported=key, touch_binds=True)
        else:
            event = self._irregularity(t, "displaced_pieces", None, key)
            self._report(out, event, reported=key, touch_binds=False)

    def _press_irregularity(self, t: float, key: bytes, out: list[DomainEvent]) -> None:
        """The clock was pressed, and what the board shows is no completed legal move."""
        node = self._game.node
        assert node is not None
        mover = COLOUR_NAMES[node.turn]
        node.pressed = True
        half = half_moves(node).get(key)
        counts = self._laws.press_counts_as_illegal  # today: 7.5.3, 7.5.2
        if half == "incomplete_promotion" and counts:
            self._unpromoted_pawn(t, mover, key, out)
            return
        if key == node.key or (half is None and is_subset(key, node.key)):
            if counts:
                event = self._illegal_move(t, mover, key, kind="clock_without_move")
            else:
                event = self._irregularity(t, "clock_without_move", mover, key)
        elif half is not None:
            event = self._irregularity(t, half, mover, key)
        elif move_shaped(node, key):
            event = self._illegal_move(t, mover, key)
        else:
            event = self._irregularity(t, "displaced_pieces", None, key)
        # nothing to put back after a press on the position itself: judged, not reported
        trigger = Trigger.JUDGED if key == node.key else Trigger.REPORT
        self._report(out, event, trigger, reported=key, touch_binds=True)

    def _unpromoted_pawn(self, t: float, mover: str, key: bytes, out: list[DomainEvent]) -> None:
        """Today's 7.5.2: the press with the pawn on the last rank is an illegal move, and
        the pawn is replaced by a queen: the move stands as a queen promotion."""
        node = self._game.node
        assert node is not None
        move = unpromoted_pawn_move(node, key)
        assert move is not None
        self._commit(t, move, out, settled=False)
        child = self._game.node
        assert child is not None
        event = self._illegal_move(
            t,
            mover,
            key,
            kind="incomplete_promotion",
            target=child.key,
            before="the pawn is replaced by a queen (7.5.2); ",
        )
        # the queen's move stands; the board owes the queen unless it already shows it
        owed = self._state.phase is Phase.PLAYING and key != child.key
        self._report(out, event, Trigger.REPORT if owed else None, reported=key, touch_binds=False)
