"""``dgt-bridge emulate``: a virtual DGT board with a DGT 3000 clock on a pseudo-terminal.

For trying the daemon, ``record`` or any DGT software without a board: it
prints the port path, then serves it until Ctrl-C, optionally playing a sensor
log (a recorded game) as the board would report it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "emulate",
        help="run a virtual DGT board on a pseudo-terminal (for demos and tests)",
        description=(
            "Create a virtual DGT e-board (with a DGT 3000 clock) on a pseudo-terminal, "
            "reachable at DIR/dgt-board, and serve it until Ctrl-C. With --log, play a "
            "sensor log; with --pgn, play the games of a PGN file as a human would move "
            "the pieces."
        ),
    )
    parser.add_argument("--dir", metavar="DIR", help="where to put the dgt-board link")
    parser.add_argument("--log", metavar="LOG.jsonl", help="a sensor log to play")
    parser.add_argument("--pgn", metavar="FILE.pgn", help="a PGN file whose games to play")
    parser.add_argument(
        "--speed", type=float, default=1.0, help="play this many times faster (default 1)"
    )
    parser.add_argument(
        "--delay", type=float, default=2.0, help="seconds to wait before playing (default 2)"
    )
    parser.set_defaults(func=emulate)


def emulate(args: argparse.Namespace) -> int:
    from drivers.dgt.emulator import READER_SETTLE, BoardEmulator
    from drivers.sensorlog import SensorLogError, read_log

    if args.speed <= 0:
        print("dgt-bridge emulate: --speed must be positive", file=sys.stderr)
        return 2
    events = []
    if args.log:
        try:
            events = read_log(args.log)
        except (OSError, SensorLogError) as error:
            print(f"dgt-bridge emulate: {args.log}: {error}", file=sys.stderr)
            return 2
        if not events:
            print(f"dgt-bridge emulate: {args.log} held no events", file=sys.stderr)
            return 2
    if args.dir:
        from pathlib import Path

        try:  # as the docs' example expects on a fresh machine: made when missing
            Path(args.dir).mkdir(parents=True, exist_ok=True)
        except OSError as error:
            print(
                f"dgt-bridge emulate: cannot make --dir {args.dir}: {error.strerror}",
                file=sys.stderr,
            )
            return 2
    emulator = BoardEmulator(args.dir)
    if args.pgn:
        try:
            events = emulator.events_for_pgn(args.pgn)
        except (OSError, ValueError, ImportError) as error:
            print(f"dgt-bridge emulate: {args.pgn}: {error}", file=sys.stderr)
            return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with emulator:
        print(emulator.port_path, flush=True)
        if events and not stop.wait(args.delay):
            # The reader (a daemon, record) runs at real time: what a human holds
            # must stand long enough for it to settle, however fast the rest goes.
            emulator.play(events, args.speed, hold=READER_SETTLE)
            print(f"playing {len(events)} events at {args.speed}x", file=sys.stderr)
        stop.wait()
    return 0
