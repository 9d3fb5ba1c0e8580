"""``dgt-bridge record [--port PATH] OUT.jsonl``: write what a board reports as a sensor log.

A recorded log is a bug report, a test fixture and a replayable game: every
line is flushed as it is written, so a crash or a pulled plug loses nothing
that was already seen.
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.config import Settings
    from drivers.sensors import SensorEvent


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "record",
        help="record what a DGT board reports into a sensor log (JSON Lines)",
        description=(
            "Connect to a DGT board (or the emulator) and write every sensor event it "
            "reports to OUT, one JSON object per line, flushed at once, until Ctrl-C or "
            "--duration. Disconnections are recorded too, and the link reconnects by itself."
        ),
    )
    parser.add_argument("out", metavar="OUT.jsonl", help="the sensor log to write ('-' = stdout)")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the YAML configuration: the board's port and clock sides, as `run` reads them "
        "(default: as for `run`, else the shipped defaults)",
    )
    parser.add_argument(
        "--port", metavar="PATH", help="the board's serial port (default: board.port)"
    )
    parser.add_argument(
        "--duration", type=float, metavar="SECONDS", help="stop after this many seconds"
    )
    parser.add_argument(
        "--append", action="store_true", help="append to OUT instead of replacing it"
    )
    parser.set_defaults(func=record)


class LogWriter:
    """Writes each event as a line and flushes it, counting what it wrote."""

    def __init__(self, stream: IO[str], on_failure: Callable[[], None] | None = None) -> None:
        self.stream = stream
        self.count = 0
        self.failed: OSError | None = None
        self.on_failure = on_failure
        from drivers.sensorlog import write_event

        self._write = write_event

    def __call__(self, event: SensorEvent) -> None:
        if self.failed is not None:
            return
        try:
            self._write(self.stream, event)
            self.stream.flush()
        except OSError as exc:
            # A closed pipe (``record - | head``), a full disk: recording is over; the
            # error ends the command once (the link would log it for every event).
            self.failed = exc
            if self.on_failure is not None:
                self.on_failure()
            return
        self.count += 1


async def record_to(
    stream: IO[str], port: str | None, duration: float | None, settings: Settings | None = None
) -> int:
    """Record until ``duration`` seconds passed or SIGINT/SIGTERM; return lines written.

    The link and its clock interpreter are the daemon's own (``daemon.compose``), so
    the log holds the clock's readings (left and right) exactly as ``run`` would have
    seen them; a replay decides whose side is whose from them as ``run`` did."""
    import asyncio
    import contextlib
    import signal

    from daemon.boards.pipeline import BoardPipeline, LoopScheduler
    from daemon.compose import build_board_parts, build_link
    from daemon.config import Settings

    settings = settings or Settings()
    stop = asyncio.Event()
    writer = LogWriter(stream, on_failure=stop.set)
    # A rules core reads along, unrecorded, as in ``run``: its game's starts and
    # resumes reach the clock interpreter's filters (each game's presses and
    # increment counted afresh), so the log holds what ``run`` would have read.
    parts = build_board_parts(settings)
    scheduler = LoopScheduler()
    pipeline = BoardPipeline("record", parts, scheduler)

    def on_event(event: SensorEvent) -> None:
        writer(event)
        pipeline.submit(event)

    link = build_link(
        settings,
        on_event,
        port=port,
        clock_interpreter=parts.clock_interpreter,
        time_source=scheduler.now,
    )
    task = asyncio.create_task(link.run())
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), duration)
    finally:
        link.close()
        await task
        pipeline.close()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(sig)
    if writer.failed is not None:
        raise writer.failed  # the command line's handler: quiet for a pipe, a line else
    return writer.count


def record(args: argparse.Namespace) -> int:
    import asyncio

    from daemon.compose import board_port
    from daemon.config import ConfigError, load

    if args.duration is not None and args.duration <= 0:
        print("record: --duration must be a positive number of seconds", file=sys.stderr)
        return 2
    try:
        settings = load(args.config)
    except ConfigError as exc:
        print(f"record: configuration error: {exc}", file=sys.stderr)
        return 2
    port = board_port(settings, args.port)
    try:
        stream = (
            sys.stdout
            if args.out == "-"
            else open(args.out, "a" if args.append else "w", encoding="utf-8")  # noqa: SIM115
        )
    except OSError as error:
        print(f"record: cannot write {args.out}: {error.strerror}", file=sys.stderr)
        return 2
    where = port or "an auto-detected board"
    print(f"recording {where} to {args.out} (Ctrl-C to stop)", file=sys.stderr)
    try:
        count = asyncio.run(record_to(stream, port, args.duration, settings))
    finally:
        if stream is not sys.stdout:
            stream.close()
    print(f"recorded {count} events to {args.out}", file=sys.stderr)
    return 0
