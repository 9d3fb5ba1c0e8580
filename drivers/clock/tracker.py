"""From a clock's raw readings to ClockReading sensor events, defensively.

Every clock source (the DGT clock through the board, a USB clock) turns what
it reads into a :class:`RawReading`: the two sides as the clock sees them, left
and right. :class:`ClockTracker` then does what real clocks demand, still in the
clock's own terms (which side is whose is the daemon's decision,
``daemon.clock.sides``; the board's orientation plays no part either):

- **Implausible times.** A time that goes up is ignored unless the clock is
  being set (stopped, or a set-and-run was sent; or both sides set up to a new
  game's time on a clock that stood, even if it was started before the next
  reading: ``is_new_setup``) or it is the increment of that
  side's press: what the time control gives, or, with no time control
  configured, the increment learnt from the clock itself (the first press of a
  game shows it; every later press is held to it). A running time that drops
  faster than time passes is ignored too (a false zero would announce a false
  flag). A changed time that the clock keeps reporting is accepted once seen
  ``confirmations`` (two) times, so that an unexpected but real change (a
  period's time, an arbiter's correction) costs one reading, never more.
- **News only.** A reading becomes a ``ClockReading`` event when something in it
  changed (a time, the side running, a flag).

Pure: time is an argument, nothing here reads a clock or a device.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from drivers.records import FrozenRecord, Record, at_time
from drivers.sensors import SIDES, ClockReading, Side
from drivers.timecontrol import TimeControl

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


@dataclass(eq=False, repr=False, slots=True)
class RawReading(FrozenRecord):
    """One reading of a clock as it came, before the filters."""

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


def is_new_setup(previous: RawReading | ClockReading, now: RawReading | ClockReading) -> bool:
    """Both times set up to equal, higher values on a clock that stood: a new game's
    clock (the daemon forgets a learnt mapping of the sides then, too).

    Read stopped, as a clock set by hand is read while it is set; or already running,
    when it was set and started between two readings (a lever pressed at once after
    setting, or a reading missed while the line was busy). The running side may then
    be a few seconds down. Without this a clock started at once kept its old times
    until each side's new one was seen twice, and the first move was published with
    the old game's time (the relay then refused the rise)."""
    if previous.running is not None:
        return False
    if now.left <= previous.left + TOLERANCE or now.right <= previous.right + TOLERANCE:
        return False
    if now.running is None:
        return abs(now.left - now.right) <= TOLERANCE
    running, waiting = (now.left, now.right) if now.running == "left" else (now.right, now.left)
    return -(TOLERANCE + DROP_TOLERANCE) <= running - waiting <= TOLERANCE


@dataclass(eq=False, repr=False, slots=True)
class _Pending(Record):
    """A rejected time that the clock may yet confirm."""

    value: float
    t: float
    count: int


class ClockTracker:
    """Filters raw readings and turns them into ClockReading events (see module doc)."""

    def __init__(
        self,
        time_control: TimeControl | None = None,
        confirmations: int = CONFIRMATIONS,
    ) -> None:
        self.time_control = time_control
        self.confirmations = max(1, confirmations)
        self._last: RawReading | None = None  # the last accepted reading
        self._last_t: float = 0.0
        self._last_runner: Side | None = None
        self._presses: dict[Side, int] = {"left": 0, "right": 0}
        self._press_base: dict[Side, float | None] = {"left": None, "right": None}
        # When the base was read and when the press came: the time run off between.
        self._press_times: dict[Side, tuple[float, float]] = {}
        self._increment: float | None = None  # learnt, when no time control is known
        self._pending: dict[Side, _Pending | None] = {"left": None, "right": None}
        self._setting = False
        self._last_report: ClockReading | None = None  # the last one handed on
        self.rejected = 0  # readings (or sides of them) ignored so far

    # --- what the shell tells us ------------------------------------------------

    def clock_being_set(self) -> None:
        """A set-and-run was sent or acknowledged: the next times may go up."""
        self._setting = True

    def new_game(self) -> None:
        """A new game starts: count presses from zero, learn the increment again."""
        self._presses = {"left": 0, "right": 0}
        self._press_base = {"left": None, "right": None}
        self._increment = None
        self._last_runner = None

    def count_presses(self, left: int, right: int) -> None:
        """A game resumed mid-way (the daemon restarted): each side's presses so far,
        so that the time control's periods fall at the right press."""
        self._presses = {"left": left, "right": right}

    @property
    def last_report(self) -> ClockReading | None:
        """The last ClockReading handed on."""
        return self._last_report

    def presses(self, side: Side) -> int:
        return self._presses[side]

    @property
    def learnt_increment(self) -> float | None:
        """The increment seen at this game's presses (None: not yet, or a time
        control is configured and says it)."""
        return self._increment

    # --- readings ---------------------------------------------------------------

    def check(self, t: float, reading: RawReading) -> list[ClockReading]:
        """Check one reading against the clock's last ones; return the ClockReading
        it makes when anything in it changed."""
        previous = self._last
        if previous is None:
            accepted = reading
        elif is_new_setup(previous, reading):
            self.new_game()
            self._pending = {"left": None, "right": None}
            accepted = reading
        else:
            self._count_press(t, previous, reading)
            accepted = RawReading(
                left=self._checked_time(t, "left", previous, reading),
                right=self._checked_time(t, "right", previous, reading),
                running=reading.running,
                left_flag=reading.left_flag,
                right_flag=reading.right_flag,
                per_move_indicator=reading.per_move_indicator,
            )
        if accepted.running is not None:
            self._setting = False
            self._last_runner = accepted.running
            self._press_base[accepted.running] = None
        self._last = accepted
        self._last_t = t
        return self._report(t, accepted)

    def clock_lost(self, t: float) -> list[ClockReading]:
        """The clock is gone (unplugged): nobody's time can run any more. Reported
        stopped once, with the last good times (kept for the filters)."""
        last = self._last_report
        if last is None or last.running is None:
            return []
        self._last_report = replace(last, t=t, running=None, flags=())
        return [self._last_report]

    def _checked_time(
        self, t: float, side: Side, previous: RawReading, reading: RawReading
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

    def _learn_increment(self, side: Side, new: float, reading: RawReading) -> None:
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
        previous: RawReading,
        reading: RawReading,
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

    def _press_allowance(self, side: Side, reading: RawReading) -> float:
        """What a press may add: the time control's amount; without one, the
        increment learnt from this game's presses, or (not yet learnt) any
        increment a clock is set to."""
        if self.time_control is not None:
            return self.time_control.added_on_press(max(1, self._presses[side]))
        if self._increment is not None:
            return self._increment
        return UNKNOWN_INCREMENT_LIMIT

    def _count_press(self, t: float, previous: RawReading, reading: RawReading) -> None:
        runner = previous.running or self._last_runner
        if runner is not None and reading.running == other(runner):
            self._presses[runner] += 1
            self._press_base[runner] = previous.time(runner)
            self._press_times[runner] = (self._last_t, t)

    def _report(self, t: float, reading: RawReading) -> list[ClockReading]:
        flags = tuple(side for side in SIDES if reading.flag(side))
        report = ClockReading(t, reading.left, reading.right, reading.running, flags)
        if self._last_report is not None and at_time(self._last_report, t) == report:
            return []
        self._last_report = report
        return [report]
