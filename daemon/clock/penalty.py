"""A penalty's time put on a DGT clock read through a single board (7.4b, 7.5.5, 9.5b).

The arbiter gives a player time from the console. On a DGT XL / 3000 plugged into a
single board the daemon can set the clock itself, so the arbiter need not walk to
the board and fumble with its buttons during the game: the new times are the clock
as last reported plus the penalty (less what the running side spent since that
report), sent as one set-and-run with the same side running (a paused clock stays
paused), and the next clock report must show them. When anything fails (whose side
is White's not known, no clock report yet, no ack, the clock refusing, the times not
shown) the arbiter is told to set the clock by hand, and why.

The driver only encodes the frame (``drivers.clock.dgt3000.set_and_run``); which
times to put, and whether the clock shows them, is decided here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from daemon.game.events import ClockUpdate, Penalty
from drivers.clock.dgt3000 import set_and_run
from drivers.clock.tracker import other
from drivers.records import FrozenRecord
from drivers.sensors import Side
from drivers.timecontrol import apply_penalty

#: How far a report may be from the times sent (whole seconds on the clock, the
#: link's latency): the penalty is minutes, a second either way is not a failure.
TOLERANCE = 2.0
#: How long the clock has to report the new times (a DGT clock reports every
#: second while it runs, and at once after a set-and-run).
CONFIRM_SECONDS = 4.0


@dataclass(eq=False, repr=False, slots=True)
class PenaltyOutcome(FrozenRecord):
    """What became of a penalty's time on the clock: ``clock_set``, and what the
    arbiter reads with the penalty's answer (``said``: the times now shown, or the
    reason it must be done by hand)."""

    clock_set: bool
    said: str

    def to_answer(self) -> dict[str, str]:
        """The console's words: ``clock`` when set, ``by_hand`` (the reason) if not."""
        return {"clock": self.said} if self.clock_set else {"by_hand": self.said}


def hms(seconds: float) -> str:
    """A clock time as a DGT clock shows it: ``1:29:30``."""
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def new_times(last: ClockUpdate, penalty: Penalty) -> dict[str, float]:
    """The clock's times with the penalty added: the last report, less what the
    running side spent since it (the penalty's time is the request's), plus the
    penalty for ``penalty.to``."""
    spent = max(0.0, penalty.t - last.t)
    times = {"white": last.white, "black": last.black}
    if last.running is not None:
        times[last.running] = max(0.0, times[last.running] - spent)
    return apply_penalty(times, penalty.to, penalty.seconds)


def shows(report: ClockUpdate, times: dict[str, float], since: float) -> bool:
    """Whether a clock report shows ``times`` sent ``since`` seconds before it
    (the running side's time has gone down meanwhile)."""
    for side in ("white", "black"):
        expected = times[side] - (since if report.running == side else 0.0)
        if abs(getattr(report, side) - expected) > TOLERANCE:
            return False
    return True


def frame_for(
    last: ClockUpdate | None, penalty: Penalty, white_side: Side | None
) -> tuple[bytes, dict[str, float]] | str:
    """The set-and-run frame and the times it puts, or why there is none."""
    if last is None:
        return "the clock has not reported its times yet"
    if white_side is None:
        return "which clock side is White's is not known yet: set clock.sides"
    times = new_times(last, penalty)
    side: dict[str, Side] = {"white": white_side, "black": other(white_side)}
    shown = {side["white"]: times["white"], side["black"]: times["black"]}
    running = side[last.running] if last.running is not None else None
    return set_and_run(shown["left"], shown["right"], running), times


async def put_on_clock(
    penalty: Penalty,
    last: ClockUpdate | None,
    white_side: Side | None,
    send: Callable[[bytes], Awaitable[bool]],
    next_report: Callable[[float], Awaitable[ClockUpdate | None]],
    now: Callable[[], float],
) -> PenaltyOutcome:
    """Set the clock for ``penalty`` and check it took it.

    ``send`` sends a clock frame, True when the clock acknowledged it (False: it
    refused; an exception: no ack). ``next_report(timeout)`` waits for the next
    clock report (None when none came). ``now`` is the pipeline's time, the one the
    reports and the penalty carry."""
    planned = frame_for(last, penalty, white_side)
    if isinstance(planned, str):
        return PenaltyOutcome(False, planned)
    frame, times = planned
    try:
        if not await send(frame):
            return PenaltyOutcome(False, "the clock refused the new times: is it in mode 23?")
    except Exception as exc:
        return PenaltyOutcome(False, f"the clock did not acknowledge the new times: {exc}")
    deadline = now() + CONFIRM_SECONDS
    seen: ClockUpdate | None = None  # the last report that came, not showing them
    while (left := deadline - now()) > 0:
        report = await next_report(left)
        if report is None:
            break
        if shows(report, times, max(0.0, report.t - penalty.t)):
            to = "White" if penalty.to == "white" else "Black"
            seconds = round(penalty.seconds)
            return PenaltyOutcome(
                True,
                f"Clock set: +{seconds // 60}:{seconds % 60:02d} to {to}; "
                f"White {hms(report.white)}, Black {hms(report.black)}",
            )
        seen = report
    if seen is None:
        return PenaltyOutcome(False, "the clock did not report its times after being set")
    return PenaltyOutcome(
        False,
        f"the clock shows White {hms(seen.white)}, Black {hms(seen.black)}, "
        f"not White {hms(times['white'])}, Black {hms(times['black'])}",
    )


class ClockReports:
    """The last clock report, and listeners that hear every later one (the clock
    display hears every ``ClockUpdate`` the board's pipeline publishes). A listener
    keeps what came before it was asked: the report a set-and-run makes at once
    comes with its ack, before the task that sent it runs again."""

    def __init__(self) -> None:
        self.last: ClockUpdate | None = None
        self._listeners: list[ReportListener] = []

    def heard(self, report: ClockUpdate) -> None:
        self.last = report
        for listener in self._listeners:
            listener.queue.put_nowait(report)

    def listen(self) -> ReportListener:
        """A listener for the reports from now on; ``close`` it when done."""
        listener = ReportListener(self._listeners)
        self._listeners.append(listener)
        return listener


class ReportListener:
    """The clock reports heard since it was made, one at a time (``next``)."""

    def __init__(self, listeners: list[ReportListener]) -> None:
        self.queue: asyncio.Queue[ClockUpdate] = asyncio.Queue()
        self._listeners = listeners

    async def next(self, timeout: float) -> ClockUpdate | None:
        """The next report, or None when none comes within ``timeout`` seconds."""
        try:
            return await asyncio.wait_for(self.queue.get(), timeout)
        except TimeoutError:
            return None

    def close(self) -> None:
        if self in self._listeners:
            self._listeners.remove(self)
