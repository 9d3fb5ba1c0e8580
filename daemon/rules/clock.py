"""The clock and its presses (6): a press completes the move, a flag falls.

A clock report is passed on when it changed. The press of the player on move
completes his move (6.7; it must stand within one settle time, ``daemon.rules.moves``);
each press is kept for moves the arbiter types in later; a fallen flag is ruled on
once a game (6.9, 6.11, ``daemon.rules.flags``).
"""

from __future__ import annotations

from daemon.game.events import ClockUpdate, DomainEvent
from daemon.rules.base import COLOUR_NAMES
from daemon.rules.flags import fallen_flags, flag_ruling
from daemon.rules.moves import Moves
from daemon.rules.state import Phase, Trigger
from drivers.sensors import ClockReport

MAX_PRESSES = 600  # the presses kept for moves typed in later (a game's plies at most)


class Clock(Moves):
    """The clock's reports."""

    def _on_clock(self, event: ClockReport, out: list[DomainEvent]) -> None:
        previous = self._clock
        state = (event.white, event.black, event.running, tuple(event.flags))
        self._clock = state
        if previous is None or previous[:3] != state[:3]:
            out.append(ClockUpdate(event.t, event.white, event.black, event.running))
        before = previous[2] if previous else None
        node = self._game.node
        if self._state.in_game and before and event.running and before != event.running:
            presses = self._game.presses  # the clocks at a press, for moves typed in later
            presses.append((event.t, {"white": event.white, "black": event.black}, event.running))
            del presses[:-MAX_PRESSES]
        if self._game.resume_clock_open and event.running and node is not None:
            # the first report after a restart: the opponent's clock running means the
            # player on move pressed while the daemon was down; that press is spent
            self._game.resume_clock_open = False
            if event.running != COLOUR_NAMES[node.turn]:
                node.pressed = True
        if (
            self._state.in_game
            and node is not None
            and before
            and event.running
            and before != event.running
        ):
            on_move = COLOUR_NAMES[node.turn]
            if before == on_move:
                self._on_press(event.t, out)
            elif event.running == on_move:
                node.pressed = False
        self._check_flags(event, out)

    def _on_press(self, t: float, out: list[DomainEvent]) -> None:
        node = self._game.node
        assert node is not None
        if self._state.phase is Phase.RESUMING:
            return
        key = self._key()
        self._state.enter(Trigger.PRESS)
        if key != node.key and self._commit_if_move(t, key, out, by_press=True):
            return
        self._arm(t)

    def _check_flags(self, event: ClockReport, out: list[DomainEvent]) -> None:
        """6.9, 6.11: a flag fallen (``daemon.rules.flags`` rules on it), once a game,
        or again once both clocks show the next period's time."""
        game = self._game
        if game.flags_may_fall_again and not event.flags and min(event.white, event.black) > 0:
            # the next period's time is on both clocks: a flag may fall again there
            game.flags_may_fall_again = game.flag_reported = False
        if game.flag_reported or not self._state.in_game or game.node is None:
            return
        fallen = fallen_flags(event)
        if not fallen:
            return
        game.flag_reported = True
        ruling = flag_ruling(event.t, fallen, game.node.board, self.settings.time_control)
        out.append(ruling.event)
        if ruling.end is not None:
            self._end(event.t, *ruling.end, out)
        if ruling.may_fall_again:
            game.flags_may_fall_again = True
