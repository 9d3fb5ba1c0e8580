"""Which clock side is White's, learnt from evidence that cannot mislead.

A clock knows left and right; the players decide which is whose by where they
sit. That is a decision about the game, so it is the daemon's, not the clock
driver's: the driver (``drivers.clock.dgt3000``) reads left and right and asks
the ``SideMapper`` it is given for colours; the daemon gives it this one, which
reads the board (the rules core) and the game's events. Guessing from the first
side seen running goes wrong whenever the clock was already running as the pieces
were set up, or the player on move pressed while the daemon was down: every move
is then announced a press late, and a game's last move never. So in ``auto`` mode
nothing is guessed:

- **A press is evidence.** A press is a running side that stops while the
  other starts. On a DGT clock only the running side can be stopped, so a press
  is its owner's; the board says who that is. A press made while the board
  shows a player's move (made, or under way with a piece set down, and not yet
  decided) is that player's; so is a press right after the rules core decided a
  player's move on the settle time (the clock counted as stopped, so the move
  did not wait for it), before anyone pressed. Any other press proves nothing:
  on the start position (Black starting White's clock), with only pieces lifted
  (the opponent's hand may already be on his reply).
- **Until the sides are known** the clock is reported as stopped, so the core
  decides moves on the settle time and none waits for a press it would credit
  to the wrong player. The first move's press normally teaches the sides.
- **Checked again at every press.** A press that the board attributes to the
  player the mapping does not give that side is a contradiction: reported,
  the mapping forgotten, and learnt again from the next press; nothing acts on
  a guess.
- **Kept** in the game's journal (``clock_sides``), so a restart reuses it
  (``known=``) instead of learning it from a clock the player may have pressed
  while the daemon was down.

``after_event`` hands the mapper each feed event (typed) and turns what it learnt
into feed events of its own: ``clock_sides`` and, when a press contradicts the
mapping, a ``notice`` for the arbiter. Pure: the pipeline submits the returned
clock reports to the core and publishes the returned events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from daemon.events import (
    ClockSides,
    DomainEvent,
    GameEnd,
    GameResumed,
    GameStart,
    Move,
    Notice,
    PositionRestored,
    Takeback,
)
from drivers.clock.dgt3000 import DgtClockInterpreter
from drivers.clock.tracker import Side, SideMapper, SideMapping, other
from drivers.sensors import Colour, SensorEvent


class BoardView(Protocol):
    """What the mapper asks the board at a press (the rules core)."""

    def mover_on_board(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class SidesLearnt:
    """The mapping became known: ``white`` is White's side."""

    t: float
    white: Side
    evidence: str


@dataclass(frozen=True, slots=True)
class SidesContradicted:
    """A press stopped the side the mapping gives to the other player."""

    t: float
    white: Side  # the mapping that was contradicted (now forgotten)
    stopped: Side
    presser: Colour
    detail: str


SidesChange = SidesLearnt | SidesContradicted


def _colour(text: object) -> Colour | None:
    if text == "white" or text == "black":
        return text
    return None


class EvidenceSideMapper(SideMapper):
    """A :class:`SideMapper` whose ``auto`` mode learns from presses and the board.

    ``board`` answers "whose move does the board show now?" (the rules core);
    without it only the presses that follow a move decided on the settle time
    teach anything.
    """

    def __init__(self, mode: SideMapping = "auto", board: BoardView | None = None) -> None:
        super().__init__(mode)
        self.board = board
        self._running: Side | None = None  # the side running in the last reading
        self._late_press: Colour | None = None  # a mover decided before his press
        self._playing = False
        self.changes: list[SidesChange] = []  # what the caller has not collected yet

    # -- SideMapper -------------------------------------------------------------

    def observe(self, running: Side | None) -> None:
        """The tracker's hook: in auto mode the first side running proves nothing."""

    def new_game(self, to_move: Colour = "white", known: Side | None = None) -> None:
        super().new_game(to_move, known)
        self._late_press = None
        self._playing = True

    # -- the evidence -----------------------------------------------------------

    def reading(self, t: float, running: Side | None) -> None:
        """A clock reading: a running side that stopped while the other started is a press."""
        before, self._running = self._running, running
        if before is None or running != other(before) or self.mode != "auto":
            return
        mover = _colour(self.board.mover_on_board()) if self.board is not None else None
        late, self._late_press = self._late_press, None
        presser = mover or late
        if presser is None or not self._playing:
            return
        how = "shown on the board" if mover else "decided just before"
        if self._white is None:
            self._white = before if presser == "white" else other(before)
            self.changes.append(
                SidesLearnt(
                    t, self._white, f"the {before} clock stopped after {presser}'s move ({how})"
                )
            )
            return
        if self.colour(before) == presser:
            return
        self.changes.append(
            SidesContradicted(
                t,
                self._white,
                before,
                presser,
                f"the {before} clock stopped after {presser}'s move ({how}), but the "
                f"{before} side was taken as {self.colour(before)}'s",
            )
        )
        self._white = None  # learnt again from the next press, never guessed

    def game_event(self, event: DomainEvent) -> None:
        """One feed event: game starts and ends, moves decided without a press."""
        match event:
            case GameStart(fen=fen):
                self.new_game("black" if " b " in fen else "white")
            case GameResumed():
                self._playing, self._late_press = True, None
            case Move(by=by) if not event.correction:
                # decided while the clock counted as stopped: the mover's press may follow
                self._late_press = _colour(by) if self._white is None else None
            case Takeback() | PositionRestored():
                self._late_press = None
            case GameEnd():
                self._playing = False

    def take_changes(self) -> list[SidesChange]:
        changes, self.changes = self.changes, []
        return changes


def after_event(
    interpreter: DgtClockInterpreter, sides: EvidenceSideMapper, event: DomainEvent
) -> tuple[list[SensorEvent], list[DomainEvent]]:
    """Tell the mapper one feed event; returns (clock reports for the core, feed
    events to publish). When the mapping changed (learnt, or forgotten on a
    contradiction) the clock's last reading is reported again under it, so the
    rules core knows at once whose clock runs."""
    if isinstance(event, ClockSides):
        return [], []
    if isinstance(event, GameStart):
        interpreter.new_game()
    before = sides.white_side
    sides.game_event(event)
    reports = interpreter.report_again(event.t) if sides.white_side != before else []
    published: list[DomainEvent] = []
    for change in sides.take_changes():
        if isinstance(change, SidesLearnt):
            published.append(ClockSides(change.t, change.white, change.evidence))
        elif isinstance(change, SidesContradicted):
            message = (
                f"CLOCK SIDES CONTRADICTED: {change.detail}. Moves count on the settle "
                "time until the sides are learnt again; check how the clock stands."
            )
            published.append(ClockSides(change.t, None, change.detail))
            published.append(Notice(change.t, "clock_sides_contradiction", message))
    return reports, published
