"""``dgt-bridge emulate``: virtual DGT boards on a pseudo-terminal, for a rehearsal.

For trying the daemon, ``record`` or any DGT software without a board: it prints
the port path, then serves it until Ctrl-C, optionally playing a sensor log (a
recorded game) or a PGN file's games as human hands would move the pieces.

``--bus N`` makes it a chain of N boards in DGT bus mode on one port (the club's
daisy chain, ``drivers/simulators/busemulator.py``): each board plays its own game of the
PGN file, and the organiser rehearses the faults of an evening on it (a board pulled
out of the chain and put back, corrupted replies), given with ``--fault`` or typed
while it runs. It prints the ``boards:`` list for the daemon's configuration.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

DEFAULT_FIRST_SERIAL = 1025


def register(subparsers: argparse._SubParsersAction) -> None:
    from drivers.simulators.hallfaults import CHAIN_FAULTS_HELP

    parser = subparsers.add_parser(
        "emulate",
        help="run a virtual DGT board on a pseudo-terminal (for demos and tests)",
        description=(
            "Create a virtual DGT e-board (with a DGT 3000 clock) on a pseudo-terminal, "
            "reachable at DIR/dgt-board, and serve it until Ctrl-C. With --log, play a "
            "sensor log; with --pgn, play the games of a PGN file as a human would move "
            "the pieces. With --bus N: a chain of N boards in DGT bus mode at DIR/dgt-bus, "
            "board i playing game i of the PGN file (the games repeat when there are "
            "fewer), and the boards: list for the configuration printed; its games start "
            "--delay seconds after the daemon first polls the chain."
        ),
        epilog=CHAIN_FAULTS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    parser.add_argument(
        "--bus", type=int, metavar="N",
        help="a chain of N boards in DGT bus mode on one port (1 to 64)",
    )  # fmt: skip
    parser.add_argument(
        "--first-serial", type=int, default=DEFAULT_FIRST_SERIAL, metavar="S",
        help=f"with --bus: the serial number of the chain's first board (default "
        f"{DEFAULT_FIRST_SERIAL:05d}; the next are S+1, S+2...)",
    )  # fmt: skip
    parser.add_argument(
        "--fault", action="append", default=[], metavar="'WHAT [at S]'",
        help="with --bus: a fault on the chain (see below); may be given many times",
    )  # fmt: skip
    parser.set_defaults(func=emulate)


def _fail(message: str) -> int:
    print(f"dgt-bridge emulate: {message}", file=sys.stderr)
    return 2


def emulate(args: argparse.Namespace) -> int:
    from drivers.sensorlog import SensorLogError, read_log
    from drivers.simulators.emulator import READER_SETTLE, BoardEmulator

    if args.speed <= 0:
        return _fail("--speed must be positive")
    if args.bus is not None and not 1 <= args.bus <= 64:
        return _fail(f"--bus {args.bus}: a chain has 1 to 64 boards")
    if args.fault and args.bus is None:
        return _fail("--fault is for a chain of boards (--bus N)")
    events = []
    if args.log:
        try:
            events = read_log(args.log)
        except (OSError, SensorLogError) as error:
            return _fail(f"{args.log}: {error}")
        if not events:
            return _fail(f"{args.log} held no events")
    if args.dir:
        from pathlib import Path

        try:  # as the docs' example expects on a fresh machine: made when missing
            Path(args.dir).mkdir(parents=True, exist_ok=True)
        except OSError as error:
            return _fail(f"cannot make --dir {args.dir}: {error.strerror}")
    if args.bus is not None:
        return _emulate_bus(args, events)
    emulator = BoardEmulator(args.dir)
    if args.pgn:
        try:
            events = emulator.events_for_pgn(args.pgn)
        except (OSError, ValueError, ImportError) as error:
            return _fail(f"{args.pgn}: {error}")
    stop = _stop_on_signals()
    with emulator:
        print(emulator.port_path, flush=True)
        if events and not stop.wait(args.delay):
            # The reader (a daemon, record) runs at real time: what a human holds
            # must stand long enough for it to settle, however fast the rest goes.
            emulator.play(events, args.speed, hold=READER_SETTLE)
            print(f"playing {len(events)} events at {args.speed}x", file=sys.stderr)
        stop.wait()
    return 0


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def chain_serials(count: int, first: int) -> list[str]:
    """The chain's serial numbers: ``first``, ``first + 1``... as five digits."""
    return [f"{first + n:05d}" for n in range(count)]


def _emulate_bus(args: argparse.Namespace, log: list[Any]) -> int:
    from drivers.dgt import buscodec
    from drivers.simulators.busemulator import BusChainEmulator
    from drivers.simulators.emulator import READER_SETTLE
    from drivers.simulators.hallfaults import ChainFault, FaultError

    serials = chain_serials(args.bus, args.first_serial)
    try:
        for serial in serials:
            buscodec.bus_address(serial)
    except ValueError as error:
        return _fail(f"--first-serial: {error}")
    if len({buscodec.bus_address(s) for s in serials}) != len(serials):
        return _fail("--first-serial: two boards of the chain would share a bus address")
    faults = []
    for text in args.fault:
        try:
            faults.append(ChainFault.parse(text, args.bus, timed=True))
        except FaultError as error:
            return _fail(f"--fault {text!r}: {error}")
    logs: list[list[Any]] = [log] * args.bus if log else [[] for _ in serials]
    if args.pgn:
        try:
            logs = _game_logs(args.pgn, args.bus)
        except (OSError, ValueError) as error:
            return _fail(f"{args.pgn}: {error}")
    chain = BusChainEmulator(args.dir, serials=serials)
    stop = _stop_on_signals()
    lock = threading.Lock()
    with chain:
        print(chain.port_path, flush=True)
        print("# the chain, for the configuration (fill in the players, or: dgt-bridge pairings)")
        print("boards:")
        for number, serial in enumerate(serials, 1):
            print(f'  - {{id: "{number}", bus_port: {chain.port_path}, bus_serial: "{serial}"}}')
        print("# type a fault (help lists them); Ctrl-C ends", flush=True)
        reader = threading.Thread(
            target=_read_faults, args=(chain, args.bus, stop, lock), daemon=True
        )
        reader.start()
        # The games start when a reader (the daemon) polls the chain, and --delay after
        # it: a daemon started later would find them half played.
        while not chain.bus_received:
            if stop.wait(0.1):
                return 0
        if stop.wait(args.delay):
            return 0
        played = [i for i, events in enumerate(logs) if events]
        for index in played:
            chain.play_on(index, logs[index], args.speed, hold=READER_SETTLE)
        if played:
            longest = max(len(logs[i]) for i in played)
            print(f"playing {len(played)} games on the chain at {args.speed}x "
                  f"(up to {longest} events each)", file=sys.stderr, flush=True)  # fmt: skip
        _timed_faults(chain, faults, stop, lock)
        stop.wait()
    return 0


def _game_logs(path: str, count: int) -> list[list[Any]]:
    """Board i's sensor log: game i of the file (repeating), moved by human hands."""
    import chess.pgn

    from drivers.simulators.emulator import game_events

    games: list[chess.pgn.Game] = []
    with open(path, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            if game.errors:
                raise ValueError(f"game {len(games) + 1}: {game.errors[0]}")
            games.append(game)
    if not games:
        raise ValueError("no games found")
    return [game_events(games[i % len(games)], seed=i) for i in range(count)]


def _timed_faults(chain: Any, faults: list[Any], stop: threading.Event, lock: Any) -> None:
    """The command line's faults, each at its time after the start (in order)."""
    import time

    start = time.monotonic()
    for fault in sorted(faults, key=lambda f: f.at or 0.0):
        if stop.wait(max(0.0, (fault.at or 0.0) - (time.monotonic() - start))):
            return
        with lock:
            print(f"[{time.monotonic() - start:.0f} s] {fault.apply(chain)}", flush=True)


def _read_faults(chain: Any, size: int, stop: threading.Event, lock: Any) -> None:
    """Faults typed on standard input, one a line, carried out at once."""
    from drivers.simulators.hallfaults import ChainFault, FaultError

    try:
        for line in sys.stdin:
            if stop.is_set():
                return
            if not line.strip():
                continue
            try:
                fault = ChainFault.parse(line, size)
            except FaultError as error:
                print(f"? {error}", flush=True)
                continue
            with lock:
                print(fault.apply(chain), flush=True)
    except (OSError, ValueError):
        return  # no standard input (a service, a closed pipe): the faults of --fault only
