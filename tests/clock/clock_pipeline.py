"""The daemon's clock path on simulated time: hands -> BWTIME -> interpreter -> sides -> core.

What the daemon wires together (``daemon.compose``, ``daemon.boards.pipeline``), without a
pty or a loop: the hands' clock reports become the BWTIME messages a DGT 3000 sends
(its left and right as the players sit), the clock interpreter reads them (left and
right), the board's pipeline has its side mapper (``daemon.clock.sides``) make them
the core's ClockReports, the rules core decides, and every feed event goes back to
the side mapper (the clock reports it asks for are fed next, as the daemon's
pipeline does). Timers run at their deadlines.
"""

from __future__ import annotations

import math
from typing import Any

from daemon.boards.pipeline import BoardPipeline, SimulatedScheduler
from daemon.clock.sides import SideMapper
from daemon.compose import BoardParts
from daemon.game.events import DomainEvent
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
    """One board's clock path; ``feed`` holds every feed event, in order.

    ``sides``: the configured mapping; ``mapper``: a side mapper (with its clock's
    interpreter) kept from an earlier table (the next game at the same clock)."""

    def __init__(
        self,
        *,
        white_on_left: bool = True,
        sides: str = "auto",
        settle: float = 0.6,
        mapper: SideMapper | None = None,
    ) -> None:
        self.white_on_left = white_on_left
        self.core = RulesCore(RulesSettings(settle_time=settle))
        if mapper is None:
            mapper = SideMapper(sides, self.core, DgtClockInterpreter())  # type: ignore[arg-type]
        mapper.board = self.core  # one clock on this table's board
        assert isinstance(mapper.clock, DgtClockInterpreter)
        self.clock: DgtClockInterpreter = mapper.clock
        self.sides = mapper
        self.feed: list[dict[str, Any]] = []
        self.scheduler = SimulatedScheduler()
        parts = BoardParts(self.core, lambda event: event, self.clock, None, mapper)
        self.pipeline = BoardPipeline("1", parts, self.scheduler, outputs=[self])
        self.t = 0.0

    def receive(self, event: DomainEvent) -> None:
        """The table's pipeline's one output: its feed, as dicts."""
        self.feed.append(event.to_dict())

    def play(self, events: list[SensorEvent]) -> None:
        for event in events:
            self.sensor(event)

    def sensor(self, event: SensorEvent) -> None:
        self.advance(event.t)
        self.t = event.t
        if isinstance(event, ClockReport):
            for read in self.clock.interpret(event.t, bwtime(event, self.white_on_left)):
                self.pipeline.submit(read)
        else:
            self.pipeline.submit(event)

    def advance(self, t: float) -> None:
        """Run the core's timers due before ``t`` at their own times."""
        self.scheduler.run_before(t)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.feed if e["type"] == kind]
