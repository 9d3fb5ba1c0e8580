"""What every decision path of the rules core shares, and the questions all of them ask.

``CoreBase`` holds the core's memory, grouped by how long it lives
(``daemon.rules.lifetimes``: the game, the board as last seen, the reach), the phase
(``daemon.rules.state``), the settle timer, the clock as last reported, and the
settings. Each decision path is a class of its own module that inherits what it
calls (``daemon.rules.core`` lists them); this is the root they share, so none of
them imports the dispatcher and none imports another that imports it back.
"""

from __future__ import annotations

import chess

from daemon.game.events import DomainEvent, GameEnd
from daemon.rules.laws import laws
from daemon.rules.lifetimes import BoardView, GameMemory, Reach
from daemon.rules.placement import turned
from daemon.rules.settings import RulesSettings
from daemon.rules.state import GameState, Trigger

COLOUR_NAMES = {chess.WHITE: "white", chess.BLACK: "black"}


class CoreBase:
    """The core's memory and its smallest questions: the board's key, the clock, the end."""

    def __init__(self, settings: RulesSettings | None = None) -> None:
        self.settings = settings or RulesSettings()
        self._laws = laws(str(self.settings.laws))
        self._describe = self.settings.describe_move
        self._game = GameMemory()  # the game: made anew by each start (lifetimes.py)
        self._view = BoardView()  # the board as last seen
        self._reach = Reach()  # whether the board is within reach and heard
        self._state = GameState()  # the phase, and what an open alarm holds (state.py)
        self._deadline: float | None = None  # the settle timer: when the next decision is due
        #: the clock as last reported (white, black, whose clock runs, flags): it lives as
        #: long as the core, across games
        self._clock: tuple[float, float, str | None, tuple[str, ...]] | None = None

    def _key(self) -> bytes:
        return turned(bytes(self._view.raw)) if self._view.flipped else bytes(self._view.raw)

    def _true_square(self, raw_square: int) -> int:
        return 63 - raw_square if self._view.flipped else raw_square

    def _arm(self, t: float) -> None:
        self._deadline = t + self.settings.settle_time
        self._reach.held_at = None  # the new deadline's decision replaces a held one

    def _clock_running(self) -> bool:
        return self.settings.use_clock and self._clock is not None and self._clock[2] is not None

    def _clock_dict(self) -> dict[str, float] | None:
        if self._clock is None:
            return None
        return {"white": self._clock[0], "black": self._clock[1]}

    def _article(self, kind: str) -> str:
        return self._laws.articles[kind]

    def _end(self, t: float, result: str, reason: str, out: list[DomainEvent]) -> None:
        self._state.enter(Trigger.END)
        self._deadline = None
        out.append(GameEnd(t, result, reason))

    def _on_board_change(self, t: float, out: list[DomainEvent]) -> None:
        """What a board change decides: the dispatcher's (``daemon.rules.core``). A
        resumed game hands a move under way back to it (``daemon.rules.resuming``)."""
        raise NotImplementedError
