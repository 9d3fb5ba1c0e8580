"""The daemon's clock path on simulated time: hands -> BWTIME -> interpreter -> core.

What the daemon wires together (``daemon/app.py``), without a pty or a loop: the
hands' clock reports become the BWTIME messages a DGT 3000 sends (its left and
right as the players sit), the clock interpreter maps them, the rules core
decides, and every feed event goes to the daemon's side mapper
(``daemon.clocksides``) (the clock reports it asks for are fed next, as the
daemon's ``call_soon`` does). Timers run at their deadlines.
"""

from __future__ import annotations

import math
from typing import Any

from daemon.clocksides import EvidenceSideMapper, after_event
from daemon.rules import RulesCore, RulesSettings
from drivers.clock.dgt3000 import DgtClockInterpreter
from drivers.dgt import protocol
from drivers.sensors import ClockReport, SensorEvent


def bwtime(report: ClockReport, white_on_left: bool) -> protocol.ClockTimes:
    """The BWTIME a DGT clock sends for what the hands' clock shows."""
    white_side = "left" if white_on_left else "right"
    left, right = (report.white, report.black) if white_on_left else (report.black, report.white)
    runs = None
    if report.running is not None:
        runs = white_side if report.running == "white" else ("right" if white_on_left else "left")
    data = protocol.bwtime_times_data(
        protocol.side_time(math.ceil(left - 1e-6)),
        protocol.side_time(math.ceil(right - 1e-6)),
        running=runs is not None,
        lever_right_high=runs == "right",
        left_to_move=runs == "left",
        right_to_move=runs == "right",
    )
    decoded = protocol.decode_bwtime(data)
    assert isinstance(decoded, protocol.ClockTimes)
    return decoded


class ClockPipeline:
    """One board's clock path; ``feed`` holds every feed event, in order."""

    def __init__(
        self,
        *,
        white_on_left: bool = True,
        sides: str = "auto",
        settle: float = 0.6,
        interpreter: DgtClockInterpreter | None = None,
    ) -> None:
        self.white_on_left = white_on_left
        self.core = RulesCore(RulesSettings(settle_time=settle))
        if interpreter is None:
            mapper = EvidenceSideMapper(sides, self.core)  # type: ignore[arg-type]
            interpreter = DgtClockInterpreter(mapper)
        assert isinstance(interpreter.sides, EvidenceSideMapper)
        interpreter.sides.board = self.core  # one clock on this table's board
        self.clock = interpreter
        self.sides = interpreter.sides
        self.feed: list[dict[str, Any]] = []
        self._queued: list[SensorEvent] = []
        self.t = 0.0

    def play(self, events: list[SensorEvent]) -> None:
        for event in events:
            self.sensor(event)

    def sensor(self, event: SensorEvent) -> None:
        self.advance(event.t)
        self.t = event.t
        if isinstance(event, ClockReport):
            for mapped in self.clock.feed(event.t, bwtime(event, self.white_on_left)):
                self._to_core(mapped)
        else:
            self._to_core(event)

    def advance(self, t: float) -> None:
        """Run the core's timers due before ``t`` at their own times."""
        while (deadline := self.core.next_deadline()) is not None and deadline <= t:
            self._publish(self.core.tick(deadline))
            self._drain()

    def _to_core(self, event: SensorEvent) -> None:
        self._publish(self.core.judge(event))
        self._drain()

    def _drain(self) -> None:
        while self._queued:
            self._publish(self.core.judge(self._queued.pop(0)))

    def _publish(self, events: list[Any]) -> None:
        for event in events:
            self.feed.append(event.to_dict())
            reports, published = after_event(self.clock, self.sides, event)
            self._queued.extend(reports)
            self._publish(published)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.feed if e["type"] == kind]
