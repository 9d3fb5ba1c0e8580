"""From left/right clock readings to ClockReport sensor events, defensively.

Every clock source (the DGT clock through the board, a USB clock) turns what
it reads into a :class:`ClockReading`: the two sides as the clock sees them,
left and right. :class:`ClockTracker` then does what real clocks demand:

- **Side mapping.** The clock knows left and right, not White and Black. White's
  clock is started first (6.5), so in ``auto`` mode the side that runs first in
  a game is White's; a configuration override fixes it. The board's
  orientation plays no part: turning the board round does not move the clock.
- **Implausible times.** A time that goes up is ignored unless the clock is
  being set (stopped, or a set-and-run was sent) or it is the increment of that
  side's press: what the time control gives, or, with no time control
  configured, the increment learnt from the clock itself (the first press of a
  game shows it; every later press is held to it). A running time that drops
  faster than time passes is ignored too (a false zero would announce a false
  flag). A changed time that the clock keeps reporting is accepted once seen
  ``confirmations`` (two) times, so that an unexpected but real change (a
  period's time, an arbiter's correction) costs one reading, never more.

Pure: time is an argument, nothing here reads a clock or a device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from drivers.sensors import ClockReport, Colour
from drivers.timecontrol import TimeControl

Side = Literal["left", "right"]
SideMapping = Literal["auto", "left_white", "right_white"]

#: Seconds of slack for a clock's whole-second display and report latency.
TOLERANCE = 1.5
#: Slack for a running time falling faster than time passes (reports may be
#: delayed unevenly on a busy line); a false zero is still caught.
DROP_TOLERANCE = 3.0
#: The largest increment learnt at a press when no time control is configured.
UNKNOWN_INCREMENT_LIMIT = 60.0
#: How often an unexpected time must be seen before it is believed: a glitch is
#: one reading; a real change (the arbiter adding time) stays on the display.
CONFIRMATIONS = 2


@dataclass(frozen=True, slots=True)
class ClockReading:
    """One reading of a clock, in the clock's own terms."""

    left: float  # seconds shown on the left display
    right: float
    running: Side | None  # whose time runs; None when the clock is stopped
    left_flag: bool = False
    right_flag: bool = False
    per_move_indicator: bool = False  # the clock is in an increment or delay mode

    def time(self, side: Side) -> float:
        return self.left if side == "left" else self.right

    def flag(self, side: Side) -> bool:
        return self.left_flag if side == "left" else self.right_flag


def other(side: Side) -> Side:
    return "right" if side == "left" else "left"


class SideMapper:
    """Which clock side is White's: fixed by configuration or learnt per game.

    Whose side is whose is a decision about the game: the daemon hands the DGT
    clock's interpreter a mapper that learns it from the board and the game's
    events (``daemon.clocksides``). This one knows only the configuration's fixed
    mapping and, for a clock read alone (the USB clock), the first side running."""

    def __init__(self, mode: SideMapping = "auto") -> None:
        if mode not in ("auto", "left_white", "right_white"):
            raise ValueError(f"side mapping {mode!r} is not auto, left_white or right_white")
        self.mode = mode
        fixed: dict[str, Side] = {"left_white": "left", "right_white": "right"}
        self._white: Side | None = fixed.get(mode)
        self._first_mover: Colour = "white"

    @property
    def white_side(self) -> Side | None:
        """White's side once known (always, with an override)."""
        return self._white

    @property
    def decided(self) -> bool:
        return self._white is not None

    def observe(self, running: Side | None) -> None:
        """In auto mode, the first side seen running is the side expected to move:
        White's at a game's start (6.5), whoever is on move in a resumed game."""
        if self._white is None and running is not None:
            self._white = running if self._first_mover == "white" else other(running)

    def new_game(self, to_move: Colour = "white", known: Side | None = None) -> None:
        """Forget a learnt mapping (players may sit the other way in the next game);
        the next side seen running belongs to ``to_move``. ``known``: the mapping a
        resumed game's journal kept, in force again."""
        self._first_mover = to_move
        if self.mode == "auto":
            self._white = known

    def reading(self, t: float, running: Side | None) -> None:
        """Each reading of the clock, before it is reported (a mapper that learns
        from presses watches them here; this one does not)."""

    def colour(self, side: Side) -> Colour:
        """The colour of a side; before anything is known, left is taken as White."""
        white = self._white or "left"
        return "white" if side == white else "black"

    def side(self, colour: Colour) -> Side:
        white: Side = self._white or "left"
        return white if colour == "white" else other(white)


@dataclass(slots=True)
class _Pending:
    """A rejected time that the clock may yet confirm."""

    value: float
    t: float
    count: int


class ClockTracker:
    """Filters readings and turns them into ClockReport events (see module doc)."""

    def __init__(
        self,
        sides: SideMapping = "auto",
        time_control: TimeControl | None = None,
        confirmations: int = CONFIRMATIONS,
    ) -> None:
        self.mapper = SideMapper(sides)
        self.time_control = time_control
        self.confirmations = max(1, confirmations)
        self._last: ClockReading | None = None  # the last accepted reading
        self._last_t: float = 0.0
        self._last_runner: Side | None = None
        self._presses: dict[Side, int] = {"left": 0, "right": 0}
        self._press_base: dict[Side, float | None] = {"left": None, "right": None}
        # When the base was read and when the press came: the time run off between.
        self._press_times: dict[Side, tuple[float, float]] = {}
        self._increment: float | None = None  # learnt, when no time control is known
        self._pending: dict[Side, _Pending | None] = {"left": None, "right": None}
        self._setting = False
        self._resume_counts: dict[str, int] | None = None
        self._last_report: ClockReport | None = None
        self.rejected = 0  # readings (or sides of them) ignored so far

    # --- what the shell tells us ------------------------------------------------

    def clock_being_set(self) -> None:
        """A set-and-run was sent or acknowledged: the next times may go up."""
        self._setting = True

    def new_game(self) -> None:
        """A new game starts: learn the sides again, count presses from zero."""
        self.mapper.new_game()
        self._presses = {"left": 0, "right": 0}
        self._press_base = {"left": None, "right": None}
        self._increment = None
        self._last_runner = None

    def resume_game(self, to_move: Colour, white_moves: int, black_moves: int) -> None:
        """A game resumed mid-way (the daemon restarted): the side running next is
        ``to_move``'s, not necessarily White's; the move counts place the periods."""
        self.new_game()
        self.mapper.new_game(to_move)
        self._resume_counts = {"white": white_moves, "black": black_moves}
        self._apply_resume_counts()

    def _apply_resume_counts(self) -> None:
        counts = self._resume_counts
        if counts is None or not self.mapper.decided:
            return
        for side in ("left", "right"):
            self._presses[side] = counts[self.mapper.colour(side)]
        self._resume_counts = None

    @property
    def last_reading(self) -> ClockReading | None:
        return self._last

    @property
    def last_report(self) -> ClockReport | None:
        return self._last_report

    def presses(self, side: Side) -> int:
        return self._presses[side]

    @property
    def learnt_increment(self) -> float | None:
        """The increment seen at this game's presses (None: not yet, or a time
        control is configured and says it)."""
        return self._increment

    # --- readings ---------------------------------------------------------------

    def feed(self, t: float, reading: ClockReading) -> list[ClockReport]:
        """Take one reading; return the ClockReport it makes, if anything changed."""
        previous = self._last
        if previous is None:
            accepted = reading
        else:
            self._count_press(t, previous, reading)
            accepted = ClockReading(
                left=self._checked_time(t, "left", previous, reading),
                right=self._checked_time(t, "right", previous, reading),
                running=reading.running,
                left_flag=reading.left_flag,
                right_flag=reading.right_flag,
                per_move_indicator=reading.per_move_indicator,
            )
            if self._is_new_setup(previous, accepted):
                self.new_game()
        if accepted.running is not None:
            self._setting = False
            self._last_runner = accepted.running
            self._press_base[accepted.running] = None
        self._last = accepted
        self._last_t = t
        self.mapper.observe(accepted.running)
        self._apply_resume_counts()
        return self._report(t, accepted)

    def _checked_time(
        self, t: float, side: Side, previous: ClockReading, reading: ClockReading
    ) -> float:
        old = previous.time(side)
        new = reading.time(side)
        elapsed = max(0.0, t - self._last_t)
        if self._plausible(side, old, new, elapsed, previous, reading):
            self._pending[side] = None
            if new > old + TOLERANCE:
                self._learn_increment(side, new, reading)
            return new
        pending = self._pending[side]
        if pending is not None:
            drift = new - (pending.value - (t - pending.t))
            if -TOLERANCE <= drift <= TOLERANCE or abs(new - pending.value) <= TOLERANCE:
                pending.count += 1
                if pending.count >= self.confirmations:
                    self._pending[side] = None
                    if new > old + TOLERANCE:
                        self._learn_increment(side, new, reading)
                    return new
                self.rejected += 1
                return old
        self._pending[side] = _Pending(new, t, 1)
        if self.confirmations <= 1:
            self._pending[side] = None
            return new
        self.rejected += 1
        return old

    def _learn_increment(self, side: Side, new: float, reading: ClockReading) -> None:
        """A rise taken at ``side``'s press, with no time control configured: the
        first of a game sets the increment; a larger one the clock confirmed (a
        Bronstein delay's full amount, say) raises it, up to the limit."""
        base = self._press_base[side]
        if self.time_control is not None or base is None or reading.running == side:
            return
        base_t, press_t = self._press_times.get(side, (0.0, 0.0))
        # The side's time ran on between the base reading and the press; whole seconds.
        estimate = float(round(new - base + max(0.0, press_t - base_t)))
        if 0 < estimate <= UNKNOWN_INCREMENT_LIMIT and (
            self._increment is None or estimate > self._increment
        ):
            self._increment = estimate

    def _plausible(
        self,
        side: Side,
        old: float,
        new: float,
        elapsed: float,
        previous: ClockReading,
        reading: ClockReading,
    ) -> bool:
        if new > old + TOLERANCE:
            if self._setting or (previous.running is None and reading.running is None):
                return True
            # The increment of a press may show in the press's reading or later,
            # while that side waits: never more than the press allows in total.
            base = self._press_base[side]
            return (
                base is not None
                and reading.running != side
                and new <= base + self._press_allowance(side, reading) + TOLERANCE
            )
        if new < old - elapsed - DROP_TOLERANCE:
            # Dropping faster than time passes: only a clock being set does that.
            return self._setting or (previous.running is None and reading.running is None)
        return True

    def _press_allowance(self, side: Side, reading: ClockReading) -> float:
        """What a press may add: the time control's amount; without one, the
        increment learnt from this game's presses, or (not yet learnt) any
        increment a clock is set to."""
        if self.time_control is not None:
            return self.time_control.added_on_press(max(1, self._presses[side]))
        if self._increment is not None:
            return self._increment
        return UNKNOWN_INCREMENT_LIMIT

    def _count_press(self, t: float, previous: ClockReading, reading: ClockReading) -> None:
        runner = previous.running or self._last_runner
        if runner is not None and reading.running == other(runner):
            self._presses[runner] += 1
            self._press_base[runner] = previous.time(runner)
            self._press_times[runner] = (self._last_t, t)

    @staticmethod
    def _is_new_setup(previous: ClockReading, accepted: ClockReading) -> bool:
        """Both times set up to equal values on a stopped clock: a new game."""
        return (
            previous.running is None
            and accepted.running is None
            and accepted.left > previous.left + TOLERANCE
            and accepted.right > previous.right + TOLERANCE
            and abs(accepted.left - accepted.right) <= TOLERANCE
        )

    def _report(self, t: float, reading: ClockReading) -> list[ClockReport]:
        colour = self.mapper.colour
        times = {colour("left"): reading.left, colour("right"): reading.right}
        flags = tuple(
            sorted((colour(s) for s in ("left", "right") if reading.flag(s)), reverse=True)
        )
        report = ClockReport(
            t=t,
            white=times["white"],
            black=times["black"],
            running=colour(reading.running) if reading.running else None,
            flags=flags,
        )
        last = self._last_report
        if last is not None and (last.white, last.black, last.running, last.flags) == (
            report.white,
            report.black,
            report.running,
            report.flags,
        ):
            return []
        self._last_report = report
        return [report]
