"""Whose clock side is whose: a clock's left/right reading made the ClockReport the
rules core reads.

A clock knows left and right; the players decide which is whose by where they sit.
That is a decision about the game, so it is the daemon's, not the clock driver's:
every clock driver (the DGT clock through the board or on a bus, a USB clock)
reports a ``ClockReading`` in the clock's own terms, the sensor log records it so,
and the board's :class:`SideMapper` (made for the pipeline by ``daemon.compose``,
live and in a replay alike) turns it into a ``ClockReport`` by colour. A replay of
a log therefore maps the sides exactly as the daemon did.

``clock.sides: left_white`` / ``right_white`` fix the mapping. In ``auto`` mode it
is learnt from evidence that cannot mislead. Guessing from the first side seen
running goes wrong whenever the clock was already running as the pieces were set
up, or the player on move pressed while the daemon was down: every move is then
announced a press late, and a game's last move never. So nothing is guessed:

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
  to the wrong player. The first move's press normally teaches the sides; that
  press then reaches the core as the press it is.
- **Checked again at every press.** A press that the board attributes to the
  player the mapping does not give that side is a contradiction: reported,
  the mapping forgotten, and learnt again from the next press; nothing acts on
  a guess.
- **Forgotten** at a game's start, and when the clock is set up again (equal,
  higher times on a stopped clock).
- **Kept** in the game's journal (``clock_sides``), so a restart reuses it
  (``resume_game``) instead of learning it from a clock the player may have
  pressed while the daemon was down.

:meth:`SideMapper.after_event` hands the mapper each feed event (typed) and turns
what it learnt into feed events of its own: ``clock_sides`` and, when a press
contradicts the mapping, a ``notice`` for the arbiter. The clock driver, when
there is one (not in a replay), hears the game's start and a resumed game's
presses from here, in the clock's terms. Pure: the pipeline feeds the returned
clock reports to the core and publishes the returned events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from daemon.game.events import (
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
from drivers.clock.settings import SideMapping
from drivers.clock.tracker import is_new_setup, other
from drivers.records import FrozenRecord, at_time
from drivers.sensors import ClockReading, ClockReport, Colour, Side


class BoardView(Protocol):
    """What the mapper asks the board at a press (the rules core)."""

    def mover_on_board(self) -> str | None: ...


class ClockDriver(Protocol):
    """What the mapper tells the clock's driver, in the clock's terms (its filters
    count presses per side: the time control's periods)."""

    def new_game(self) -> None: ...

    def count_presses(self, left: int, right: int) -> None: ...


@dataclass(eq=False, repr=False, slots=True)
class SidesLearnt(FrozenRecord):
    """The mapping became known: ``white`` is White's side."""

    t: float
    white: Side
    evidence: str


@dataclass(eq=False, repr=False, slots=True)
class SidesContradicted(FrozenRecord):
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


class SideMapper:
    """One board's clock sides: fixed by the configuration, or learnt from presses
    and the board (see module doc); makes each ClockReading a ClockReport.

    ``board`` answers "whose move does the board show now?" (the rules core);
    without it only the presses that follow a move decided on the settle time
    teach anything. ``clock``: the clock's driver, told a game's start and a
    resumed game's presses (None in a replay: the log holds what it read).
    """

    def __init__(
        self,
        mode: SideMapping = "auto",
        board: BoardView | None = None,
        clock: ClockDriver | None = None,
    ) -> None:
        if mode not in ("auto", "left_white", "right_white"):
            raise ValueError(f"side mapping {mode!r} is not auto, left_white or right_white")
        self.mode = mode
        self.board = board
        self.clock = clock
        fixed: dict[str, Side] = {"left_white": "left", "right_white": "right"}
        self._white: Side | None = fixed.get(mode)
        self._running: Side | None = None  # the side running in the last reading
        self._late_press: Colour | None = None  # a mover decided before his press
        self._playing = False
        self._resume_counts: dict[Colour, int] | None = None  # until the sides are known
        self._last_reading: ClockReading | None = None
        self._last_report: ClockReport | None = None  # the last one handed to the core
        self.changes: list[SidesChange] = []  # what the caller has not collected yet

    # -- the mapping ----------------------------------------------------------------

    @property
    def white_side(self) -> Side | None:
        """White's side once known (always, with a configured mapping)."""
        return self._white

    @property
    def decided(self) -> bool:
        return self._white is not None

    @property
    def last_report(self) -> ClockReport | None:
        """The last ClockReport handed to the core (None: no reading yet)."""
        return self._last_report

    def colour(self, side: Side) -> Colour:
        """The colour of a side; before anything is known, left is taken as White
        (only the times are reported then: nobody's clock runs, no flag)."""
        white = self._white or "left"
        return "white" if side == white else "black"

    def new_game(self, known: Side | None = None) -> None:
        """Forget a learnt mapping (players may sit the other way in the next game);
        ``known``: the mapping a resumed game's journal kept, in force again."""
        if self.mode == "auto":
            self._white = known
        self._late_press = None
        self._playing = True

    def resume_game(
        self, white_moves: int, black_moves: int, white_side: Side | None = None
    ) -> None:
        """A game resumed after a restart: ``white_side`` is the mapping its journal
        kept (None: learnt again from the next moves; the first side seen running
        proves nothing, the player may have pressed while the daemon was down). The
        clock's driver gets each side's presses once the sides are known."""
        if self.clock is not None:
            self.clock.new_game()
        self.new_game(known=white_side)
        self._resume_counts = {"white": white_moves, "black": black_moves}
        self._count_presses()

    def _count_presses(self) -> None:
        counts = self._resume_counts
        if counts is None or not self.decided:
            return
        self._resume_counts = None
        if self.clock is not None:
            self.clock.count_presses(counts[self.colour("left")], counts[self.colour("right")])

    # -- readings in, reports out -----------------------------------------------------

    def reports_for(self, reading: ClockReading) -> list[ClockReport]:
        """One clock reading: what it teaches (a press), then the ClockReports the core
        is to read, in order: none when nothing changed for the core; two when this
        very press taught the sides (the clock as it stood, under the mapping, then
        the press: the core must see the presser's clock stop)."""
        before, known = self._last_reading, self.decided
        self._evidence(reading.t, reading.running)
        if before is not None and is_new_setup(before, reading):
            self.new_game()  # a clock set up again: a new game's, its sides unknown
        self._last_reading = reading
        self._count_presses()
        if before is not None and self.decided and not known:
            self._last_report = self._mapped(reading.t, before)
            return [self._last_report, *self._report(reading.t)]
        return self._report(reading.t)

    def _report(self, t: float) -> list[ClockReport]:
        """The last reading under the current mapping, when it is news to the core."""
        reading = self._last_reading
        if reading is None:
            return []
        report = self._mapped(t, reading)
        last = self._last_report
        if last is not None and at_time(last, t) == report:
            return []
        self._last_report = report
        return [report]

    def _mapped(self, t: float, reading: ClockReading) -> ClockReport:
        colour = self.colour
        times = {colour("left"): reading.left, colour("right"): reading.right}
        known = self.decided
        flags = tuple(sorted((colour(side) for side in reading.flags), reverse=True))
        return ClockReport(
            t=t,
            white=times["white"],
            black=times["black"],
            running=colour(reading.running) if reading.running and known else None,
            flags=flags if known else (),
        )

    # -- the evidence -----------------------------------------------------------------

    def _evidence(self, t: float, running: Side | None) -> None:
        """A running side that stopped while the other started is a press: whose, the
        board says."""
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

    def _follow_game(self, event: DomainEvent) -> None:
        """One feed event: game starts and ends, moves decided without a press."""
        match event:
            case GameStart():
                self._resume_counts = None
                self.new_game()
                if self.clock is not None:
                    self.clock.new_game()
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

    def after_event(self, event: DomainEvent) -> tuple[list[ClockReport], list[DomainEvent]]:
        """Tell the mapper one feed event; returns (clock reports for the core, feed
        events to publish). When the mapping changed (a game's start forgets it) the
        clock's last reading is reported again under it, so the rules core knows at
        once whose clock runs."""
        if isinstance(event, ClockSides):
            return [], []
        before = self.white_side
        self._follow_game(event)
        reports = []
        if self.white_side != before and self._last_reading is not None:
            reports = self._report(max(self._last_reading.t, event.t))
        published: list[DomainEvent] = []
        for change in self.take_changes():
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
