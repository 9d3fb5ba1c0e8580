"""What the rules core may be told: the game's mode and the timings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import chess

from drivers.timecontrol import TimeControl

DEFAULT_BUTTON_ACTIONS = {"back": "last", "plus": "clock", "minus": "move_number", "ok": "board"}


@dataclass(slots=True)
class RulesSettings:
    """How the core decides.

    ``settle_time``: how long a placement must stand unchanged before the core
    decides on it without a clock press. 0.6 s is longer than a hand pauses on
    a square while sliding (the board scans about every 0.2 s) and short enough
    to be heard as "at once". An irregular placement must stand as long before
    the core calls it irregular, so passing states never raise an alarm.

    ``time_control``: the game's periods, so both flags fallen (6.11) can be
    decided: drawn in the last period, the game goes on in an earlier one.
    Without it the arbiter decides.
    """

    mode: Literal["tournament", "casual"] = "tournament"
    settle_time: float = 0.6
    chess960: bool = False
    use_clock: bool = True
    button_actions: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_BUTTON_ACTIONS))
    describe_move: Callable[[chess.Board, chess.Move], str] | None = None
    time_control: TimeControl | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("tournament", "casual"):
            raise ValueError(f"mode must be 'tournament' or 'casual', not {self.mode!r}")
        if not self.settle_time > 0:
            raise ValueError(f"settle_time must be positive, not {self.settle_time!r}")
