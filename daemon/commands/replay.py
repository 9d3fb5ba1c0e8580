"""``dgt-bridge replay LOG.jsonl``: run a sensor log through the daemon's own pipeline.

Prints the event feed as JSON lines on stdout, exactly as ``run --events -`` would
have for the same sensor events: the rules core, the board orientation, whose clock
side is White's (learnt from the log's left/right clock readings as ``run`` learnt
it), the clock buttons, the time control and the moves' Appendix E phrasing all
come from the configuration (``--config``, else what ``run`` reads, else the shipped defaults),
built by the same composition root (``daemon.compose``). ``--fast`` runs on
simulated time as fast as the machine allows; without it the log plays in real time.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, TextIO

from daemon.service.gcfreeze import building

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from daemon.config import Settings
    from drivers.sensors import SensorEvent


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="run a sensor log through the rules core and print the event feed",
        description="Replay a sensor log (JSON lines) through the daemon's pipeline, "
        "configured as `run` is; print the event feed (JSON lines) on stdout.",
    )
    parser.add_argument("log", help="the sensor log (.jsonl)")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the YAML configuration (default: as for `run`, else the shipped defaults)",
    )
    parser.add_argument("--fast", action="store_true", help="simulated time, as fast as possible")
    parser.add_argument(
        "--no-clock", action="store_true", help="ignore clock lines (board-only mode)"
    )
    parser.add_argument(
        "--settle",
        type=float,
        metavar="SECONDS",
        help="how long a placement must stand before it counts (default: rules.settle_time)",
    )
    parser.add_argument("--casual", action="store_true", help="casual mode: takebacks allowed")
    parser.add_argument("--chess960", action="store_true", help="allow Chess960 start positions")
    parser.set_defaults(func=run)


def replay_feed(
    events: Iterable[SensorEvent],
    settings: Settings,
    out: TextIO,
    *,
    sleep: Callable[[float], None] | None = None,
    board_id: str | None = None,
    built: Callable[[], None] | None = None,
) -> None:
    """Feed every event to a board pipeline built from ``settings`` (sleeping until
    its time when ``sleep`` is given, else on simulated time), then let its timers
    run out; the feed goes to ``out`` as JSON lines. ``built`` is called once the
    pipeline is made (the command's building is done: ``daemon.service.gcfreeze``)."""
    from daemon.boards.outputs import FeedWriter
    from daemon.boards.pipeline import BoardPipeline, SimulatedScheduler
    from daemon.compose import build_board_parts, configured_board_id

    scheduler = SimulatedScheduler()
    feed = FeedWriter(out, flush=sleep is not None, fatal=True)
    pipeline = BoardPipeline(
        board_id or configured_board_id(settings),
        build_board_parts(settings, clock=False),
        scheduler,
        outputs=[feed],
    )
    if built is not None:
        built()
    wait_until = _real_time(sleep) if sleep is not None else None
    # the feed is the command's whole output: the command ends when it fails
    for event in events:
        scheduler.run_before(event.t, wait_until)
        feed.raise_failure()
        if wait_until is not None:
            wait_until(event.t)
        pipeline.submit(event)
        feed.raise_failure()
    scheduler.run_before(None, wait_until)
    feed.raise_failure()


def _real_time(sleep: Callable[[float], None]) -> Callable[[float], None]:
    """Sleeps until a log time, counted from the log's first time (a log need not
    start at 0)."""
    started = time.monotonic()
    origin: list[float] = []

    def wait_until(t: float) -> None:
        if not origin:
            origin.append(t)
        delay = t - origin[0] - (time.monotonic() - started)
        if delay > 0:
            sleep(delay)

    return wait_until


def configured(args: argparse.Namespace) -> Settings:
    """The configuration, with the command line's rules options on top."""
    from dataclasses import replace

    from daemon.config import load

    settings = load(args.config)
    rules = settings.rules
    if args.settle is not None:
        rules = replace(rules, settle_time=args.settle)
    if args.casual:
        rules = replace(rules, mode="casual")
    if args.chess960:
        rules = replace(rules, chess960=True)
    if args.no_clock:
        rules = replace(rules, use_clock=False)
        settings.clock = replace(settings.clock, device="none")
    settings.rules = rules
    return settings


def run(args: argparse.Namespace) -> int:
    with building() as start:
        return _run(args, start.done)


def _run(args: argparse.Namespace, built: Callable[[], None]) -> int:
    from daemon.config import ConfigError
    from drivers.sensorlog import SensorLogError, read_events

    if args.settle is not None and not args.settle > 0:
        print("dgt-bridge replay: --settle must be a positive number of seconds", file=sys.stderr)
        return 2
    try:
        settings = configured(args)
    except ConfigError as exc:
        print(f"dgt-bridge replay: configuration error: {exc}", file=sys.stderr)
        return 2
    try:
        with open(args.log, encoding="utf-8") as handle:
            sleep = None if args.fast else time.sleep
            events = _counted(read_events(handle))
            replay_feed(events, settings, sys.stdout, sleep=sleep, built=built)
        if not events.count:
            # Exit 0 and no output would look like a game that made no events.
            print(f"dgt-bridge replay: {args.log} held no events", file=sys.stderr)
            return 1
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
    finally:
        sys.stdout.flush()
    return 0


class _counted:
    """The events of a log, counted as they pass (an empty log is said to be empty)."""

    def __init__(self, events: Iterable[SensorEvent]) -> None:
        self._events = iter(events)
        self.count = 0

    def __iter__(self) -> _counted:
        return self

    def __next__(self) -> SensorEvent:
        event = next(self._events)
        self.count += 1
        return event
