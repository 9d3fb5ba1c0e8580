"""What the rules core may be told: the game's mode and the timings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import chess

from drivers.records import Record
from drivers.timecontrol import TimeControl

DEFAULT_BUTTON_ACTIONS = {"back": "last", "plus": "clock", "minus": "move_number", "ok": "board"}


@dataclass(eq=False, repr=False, slots=True)
class RulesSettings(Record):
    """How the core decides.

    ``settle_time``: how long a placement must stand unchanged before the core
    decides on it without a clock press. 0.6 s is longer than a hand pauses on
    a square while sliding (the board scans about every 0.2 s) and short enough
    to be heard as "at once". An irregular placement must stand as long before
    the core calls it irregular, so passing states never raise an alarm.

    ``time_control``: the game's periods, so both flags fallen (6.11) can be
    decided: drawn in the last period, the game goes on in an earlier one.
    Without it the arbiter decides.

    ``laws``: which Laws of Chess the events cite and whose penalties follow:
    ``2009`` (the text the project was built on) or ``current`` (the Laws in
    force today: the second completed illegal move loses, a press without a move
    is an illegal move). See ``daemon.rules.laws``.

    ``result_on_board``: both kings set on the centre squares end the game with
    the result they signal (DGT's convention, as LiveChess and picochess read it).
    ``report_touches``: a ``touch`` event when the player to move lifts one of his
    own pieces that can move and puts it back, no move made (4.3a may bind him;
    the speech's ``tell_touches``, Appendix E.9.e, sets it).
    """

    mode: Literal["tournament", "casual"] = "tournament"
    settle_time: float = 0.6
    chess960: bool = False
    use_clock: bool = True
    button_actions: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_BUTTON_ACTIONS))
    #: (board before the move, the move, its SAN) -> the words said for it
    describe_move: Callable[[chess.Board, chess.Move, str], str] | None = None
    time_control: TimeControl | None = None
    laws: Literal["2009", "current", 2009] = "2009"
    result_on_board: bool = True
    report_touches: bool = False

    def __post_init__(self) -> None:
        if self.mode not in ("tournament", "casual"):
            raise ValueError(f"mode must be 'tournament' or 'casual', not {self.mode!r}")
        self.laws = str(self.laws)  # type: ignore[assignment]  # YAML reads 2009 as a number
        if self.laws not in ("2009", "current"):
            raise ValueError(f"laws must be '2009' or 'current', not {self.laws!r}")
        if not self.settle_time > 0:
            raise ValueError(f"settle_time must be positive, not {self.settle_time!r}")
