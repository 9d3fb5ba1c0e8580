"""The phases a game and its move in progress pass through, and the only ways between them.

The rules core used to hold this as a dozen booleans reset in many places; here
it is one value. ``TRANSITIONS`` is the whole table: a trigger the table does not
list for a phase is a bug in the core, and ``GameState.enter`` says so at once
instead of letting two flags drift apart. ``enter`` is also the one place that
resets what belongs to the phase left behind (the placement last reported, what
an irregularity keeps of the touches).

What the board shows *inside* a phase (at rest, a piece in hand, a move shaped,
a half-made castling or promotion) is read off the placement by
``daemon.rules.placement`` each time; it is not stored, so it cannot go stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from drivers.records import Record


class Phase(Enum):
    """Where the game stands. Only PLAYING, PRESSED and IRREGULAR take moves."""

    NO_GAME = "no_game"  # waiting for a start position (7.1)
    RESUMING = "resuming"  # after a restart: the board not yet agreeing with the journal
    PLAYING = "playing"  # at rest or a move under way; nothing is owed
    PRESSED = "pressed"  # the mover pressed (6.7): his move must stand within one settle time
    IRREGULAR = "irregular"  # an irregularity reported: the position must stand again (7.3, 7.4)
    OVER = "over"  # the game ended (5, 6.9, arbiter, a result on the board): no more moves


#: the phases in which a game is running (a tuple: compared by identity, no hashing)
_IN_GAME = (Phase.RESUMING, Phase.PLAYING, Phase.PRESSED, Phase.IRREGULAR)
#: Members asked for on every board change, kept as plain names: on Python 3.11 each
#: ``Phase.X`` goes through ``EnumType.__getattr__``'s hook, a cost worth a tenth of
#: ``enter`` (issue 28).
_PRESSED, _IRREGULAR = Phase.PRESSED, Phase.IRREGULAR
_ALARM_KEPT = (_IRREGULAR, _PRESSED)


class Trigger(Enum):
    """What happened."""

    START = "start"  # a start position stands, or new_game / set_position
    RESUME = "resume"  # resume() from the journal
    AGREE = "agree"  # the board agrees with the journal, or shows a move of it (game_resumed)
    PRESS = "press"  # the player on move pressed his clock
    MOVE = "move"  # a move was committed (also a correction, a takeback, accept_position)
    JUDGED = "judged"  # a press judged with nothing to put back (clock without a move)
    REPORT = "report"  # an irregularity reported with something to put back
    RESTORE = "restore"  # the position stands again (position_restored)
    END = "end"  # game_end


#: Triggers every phase accepts: a new game, a restart, or the end (an arbiter's result).
ANYWHERE = {Trigger.START: Phase.PLAYING, Trigger.RESUME: Phase.RESUMING, Trigger.END: Phase.OVER}
_RESTORE, _REPORT = Trigger.RESTORE, Trigger.REPORT
_FRESH = (Trigger.START, Trigger.RESUME)  # the touch that began an alarm binds no more

TRANSITIONS: dict[Phase, dict[Trigger, Phase]] = {
    Phase.NO_GAME: {Trigger.REPORT: Phase.NO_GAME},  # wrong_setup: wait for the start position
    Phase.RESUMING: {
        Trigger.AGREE: Phase.PLAYING,
        Trigger.REPORT: Phase.RESUMING,  # displaced pieces after the restart: still resuming
        Trigger.MOVE: Phase.RESUMING,  # a request (takeback, correction) before the board agrees
    },
    Phase.PLAYING: {
        Trigger.PRESS: Phase.PRESSED,
        Trigger.MOVE: Phase.PLAYING,
        Trigger.REPORT: Phase.IRREGULAR,
    },
    Phase.PRESSED: {
        Trigger.PRESS: Phase.PRESSED,
        Trigger.MOVE: Phase.PLAYING,
        Trigger.JUDGED: Phase.PLAYING,
        Trigger.REPORT: Phase.IRREGULAR,
        Trigger.RESTORE: Phase.PRESSED,  # pressed while putting back; the press still waits
    },
    Phase.IRREGULAR: {
        Trigger.PRESS: Phase.PRESSED,  # the alarm stays open through the press
        Trigger.MOVE: Phase.PLAYING,
        Trigger.REPORT: Phase.IRREGULAR,
        Trigger.RESTORE: Phase.PLAYING,
    },
    Phase.OVER: {
        Trigger.MOVE: Phase.PLAYING,  # a takeback or a corrected move reopens the game
        Trigger.REPORT: Phase.OVER,  # wrong_setup while the next game is set up
    },
}


class StateError(RuntimeError):
    """A trigger the table does not allow: a bug in the rules core, never the user's."""


@dataclass(eq=False, repr=False, slots=True)
class GameState(Record):
    """The phase, and what only has a meaning while an alarm is open.

    ``reported``: the placement the last alarm was about; the same placement is
    not reported twice. ``owed_restore``: a ``position_restored`` is owed when the
    position stands again. ``touch_binds``: that alarm was an illegal move, so
    the touch that began it still binds the replacing move (7.4a applies 4.3).
    """

    phase: Phase = Phase.NO_GAME
    reported: bytes | None = None
    owed_restore: bool = False
    touch_binds: bool = False

    def enter(
        self,
        trigger: Trigger,
        *,
        reported: bytes | None = None,
        touch_binds: bool | None = None,
    ) -> Phase:
        """Take the transition ``trigger`` and reset what the old phase held."""
        new = TRANSITIONS[self.phase].get(trigger) or ANYWHERE.get(trigger)
        if new is None:
            raise StateError(f"{trigger.value} is not allowed in phase {self.phase.value}")
        alarm_stays = new in _ALARM_KEPT and self.owed_restore
        if trigger is _RESTORE or not alarm_stays:
            self.reported = None
            self.owed_restore = False
        if trigger is _REPORT:
            self.reported = reported
            self.owed_restore = new is _IRREGULAR
        if touch_binds is not None:
            self.touch_binds = touch_binds
        elif trigger in _FRESH:
            self.touch_binds = False
        self.phase = new
        return new

    @property
    def in_game(self) -> bool:
        """A game is running (moves, flags and lifts count)."""
        return self.phase in _IN_GAME

    @property
    def press_pending(self) -> bool:
        return self.phase is _PRESSED
