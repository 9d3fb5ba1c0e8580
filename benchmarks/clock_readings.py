"""The clock's readings: CPU per DGT clock message, from its decoded bytes to the
rules core's ClockReport.

    python -m benchmarks.clock_readings [--passes N] [--runs N] [--quick]

A DGT clock reports its times about once a second, and each report goes through two
steps before the rules core sees it: the board link's ``DgtClockInterpreter`` (its
``ClockTracker`` filters glitches, counts presses and says whether the reading is new)
and the pipeline's ``SideMapper`` (left and right to White and Black, and whether the
report is new to the core). The real capture's clock messages are decoded once; each
pass feeds them through a fresh interpreter, and its readings through a fresh
mapper, each step timed on its own with this thread's CPU clock (other processes'
load barely counts; a loaded machine still slows the caches). The median pass of
each run, and the median run, are shown.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import time
from collections.abc import Sequence

from benchmarks.common import SHARED, footer, header
from daemon.clock.sides import SideMapper
from drivers.clock.dgt3000 import DgtClockInterpreter
from drivers.dgt.protocol import Bwtime, ClockAck, ClockTimes, MessageParser
from drivers.sensors import ClockReading
from drivers.timecontrol import parse_time_control

CAPTURE_BYTES = SHARED / "data" / "dgt-capture-1" / "1.inbytes"
TIME_CONTROL = "3+2"  # the capture's blitz game


def clock_messages() -> list[ClockTimes | ClockAck]:
    """The capture's decoded clock messages, in order (one about every second)."""
    parser = MessageParser()
    found: list[ClockTimes | ClockAck] = []
    for line in CAPTURE_BYTES.read_text().splitlines():
        for message in parser.feed(base64.b64decode(line)):
            if isinstance(message, Bwtime) and isinstance(message.clock, ClockTimes | ClockAck):
                found.append(message.clock)
    return found


def interpret(messages: Sequence[ClockTimes | ClockAck]) -> tuple[float, list[ClockReading]]:
    """CPU seconds for one game's messages through a fresh interpreter, and its readings."""
    interpreter = DgtClockInterpreter(time_control=parse_time_control(TIME_CONTROL))
    readings: list[ClockReading] = []
    started = time.thread_time()
    for n, message in enumerate(messages):
        for event in interpreter.interpret(float(n), message):
            if isinstance(event, ClockReading):
                readings.append(event)
    return time.thread_time() - started, readings


def map_sides(readings: Sequence[ClockReading]) -> tuple[float, int]:
    """CPU seconds for one game's readings through a fresh side mapper, and its reports."""
    sides = SideMapper("left_white")
    reports = 0
    started = time.thread_time()
    for reading in readings:
        reports += len(sides.reports_for(reading))
    return time.thread_time() - started, reports


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=400, help="games a run (400)")
    parser.add_argument("--runs", type=int, default=5, help="runs; the median is shown (5)")
    parser.add_argument("--quick", action="store_true", help="a few passes, one run")
    args = parser.parse_args(argv)
    if args.quick:
        args.passes, args.runs = 20, 1
    header("clock readings: CPU per DGT clock message (tracker, then side mapper)")
    messages = clock_messages()
    _, readings = interpret(messages)
    _, reports = map_sides(readings)
    print(
        f"the real capture: {len(messages)} clock messages -> {len(readings)} readings "
        f"-> {reports} reports to the rules core; {args.passes} passes a run"
    )
    tracker_runs: list[float] = []
    mapper_runs: list[float] = []
    for number in range(1, args.runs + 1):
        tracker = statistics.median(interpret(messages)[0] for _ in range(args.passes))
        mapper = statistics.median(map_sides(readings)[0] for _ in range(args.passes))
        tracker_runs.append(tracker / len(messages))
        mapper_runs.append(mapper / len(readings))
        print(
            f"run {number}: tracker {tracker_runs[-1] * 1e6:.2f} us a message, "
            f"side mapper {mapper_runs[-1] * 1e6:.2f} us a reading"
        )
    print(
        f"median run: tracker {statistics.median(tracker_runs) * 1e6:.2f} us CPU a message, "
        f"side mapper {statistics.median(mapper_runs) * 1e6:.2f} us CPU a reading"
    )
    footer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
