"""``dgt-bridge replay LOG.jsonl``: run a sensor log through the rules core.

Prints the event feed as JSON lines on stdout. ``--fast`` runs on simulated
time as fast as the machine allows; without it the log plays in real time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable

from daemon.events import DomainEvent
from daemon.rules import RulesCore, RulesSettings
from drivers.sensorlog import SensorLogError, read_events
from drivers.sensors import SensorEvent


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="run a sensor log through the rules core and print the event feed",
        description="Replay a sensor log (JSON lines) through the rules core; "
        "print the event feed (JSON lines) on stdout.",
    )
    parser.add_argument("log", help="the sensor log (.jsonl)")
    parser.add_argument("--fast", action="store_true", help="simulated time, as fast as possible")
    parser.add_argument(
        "--no-clock", action="store_true", help="ignore clock lines (board-only mode)"
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=RulesSettings().settle_time,
        metavar="SECONDS",
        help="how long a placement must stand before it counts (default %(default)s)",
    )
    parser.add_argument("--casual", action="store_true", help="casual mode: takebacks allowed")
    parser.add_argument("--chess960", action="store_true", help="allow Chess960 start positions")
    parser.set_defaults(func=run)


def replay(
    events: Iterable[SensorEvent],
    core: RulesCore,
    emit: Callable[[DomainEvent], None],
    sleep: Callable[[float], None] | None = None,
) -> None:
    """Feed every event (sleeping until its time when ``sleep`` is given), then the timers."""
    started = time.monotonic()
    origin: list[float] = []  # the log's first time: a log need not start at 0

    def wait_until(t: float) -> None:
        if sleep is not None:
            if not origin:
                origin.append(t)
            delay = t - origin[0] - (time.monotonic() - started)
            if delay > 0:
                sleep(delay)

    for event in events:
        while (deadline := core.next_deadline()) is not None and deadline < event.t:
            wait_until(deadline)
            for out in core.tick(deadline):
                emit(out)
        wait_until(event.t)
        for out in core.feed(event):
            emit(out)
    while (deadline := core.next_deadline()) is not None:
        wait_until(deadline)
        for out in core.tick(deadline):
            emit(out)


def run(args: argparse.Namespace) -> int:
    if args.settle <= 0:
        print("dgt-bridge replay: --settle must be a positive number of seconds", file=sys.stderr)
        return 2
    settings = RulesSettings(
        mode="casual" if args.casual else "tournament",
        settle_time=args.settle,
        chess960=args.chess960,
        use_clock=not args.no_clock,
    )
    core = RulesCore(settings)

    def emit(event: DomainEvent) -> None:
        sys.stdout.write(json.dumps(event.to_dict(), separators=(", ", ": ")) + "\n")
        if not args.fast:
            sys.stdout.flush()

    try:
        with open(args.log, encoding="utf-8") as handle:
            replay(read_events(handle), core, emit, sleep=None if args.fast else time.sleep)
    except FileNotFoundError:
        print(f"dgt-bridge replay: no such file: {args.log}", file=sys.stderr)
        return 2
    except IsADirectoryError:
        print(f"dgt-bridge replay: {args.log} is a directory, not a log", file=sys.stderr)
        return 2
    except UnicodeDecodeError as error:
        print(f"dgt-bridge replay: {args.log} is not UTF-8 text ({error.reason})", file=sys.stderr)
        return 2
    except SensorLogError as error:
        print(f"dgt-bridge replay: {args.log}: {error}", file=sys.stderr)
        return 2
    sys.stdout.flush()
    return 0
