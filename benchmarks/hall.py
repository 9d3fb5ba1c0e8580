"""Many boards in one daemon: a DGT bus chain of 1, 6 and 12 boards, and 3 USB boards.

Each board plays a different real game from ``../shared/data/games.pgn`` at blitz pace
(the human-handling model's own thinking times, 0.8-3 s a move, a 3+2 clock), in real
time, against ``daemon.app.Daemon`` (what ``dgt-bridge run`` builds for a
``boards:`` list). The chain's emulator keeps the line's real speed (9600 baud, 10 bits
a byte, replies never overlapping), so the polling meets the same bound as a real
chain. Measured, per run:

- every board's moves against its game (all must be exact);
- the line: bytes both ways per second against the 960 bytes/s that 9600 baud
  carries, and how often each board is polled;
- lag: a piece set down on the emulator -> that square's sensor event reaching the
  board's rules core (the polling's share), and a clock press -> the ``move`` event
  (what a listener waits for), p50/p99/max;
- the daemon's CPU (the process's, less the emulator thread's, from /proc) and the
  process's peak RSS;
- every output a hall uses alive (``benchmarks.alive``; issue 28): the daemon
  publishes over MQTT to a real Mosquitto and the real relay must hold every board's
  whole game, and a viewer of the live page must have had the page and every move.
  A run with a game not exact or an output that missed a move exits 1.

The same hall in the daemon's own process on a Pi's CPU budget, with speech, MQTT
over TLS, lichess and 100 viewers: ``benchmarks.pihall``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import chess

from benchmarks.alive import Features
from benchmarks.common import GAMES_PGN, footer, header, percentile
from daemon.app import Daemon
from daemon.config import load_text
from drivers.dgt.bus import BusTimings
from drivers.sensors import ClockReport, SensorEvent, SquareChange
from drivers.simulators.busemulator import BusChainEmulator
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.gamelogs import distinct_openings
from drivers.simulators.hallfaults import HallFaults
from drivers.simulators.handling import human_sensor_log

LINE_BYTES_PER_SECOND = 9600 / 10

#: The journal's fsync (``--fsync``; off by default: this machine's disk is no SD card,
#: and ``benchmarks.sdcard`` runs this with a slow card's fsync instead).
FSYNC = False
#: ``--no-outputs``: no MQTT, no viewer (a like-for-like pair with a checkout older than
#: issue 28's checks, whose hall ran without them)
OUTPUTS = True

#: (lag, board, ply) of every press -> move lag of the current run, for the slowest.
WORST: list[tuple[float, str, int]] = []


class TimedChain(BusChainEmulator):
    """The chain, noting when each played event happened on which board."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.applied: list[tuple[int, SensorEvent, float]] = []

    def apply_on(self, index: int, event: SensorEvent) -> None:
        super().apply_on(index, event)
        self.applied.append((index, event, time.monotonic()))


class TimedBoard(BoardEmulator):
    """A USB board, noting when each played event happened."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.applied: list[tuple[int, SensorEvent, float]] = []

    def apply(self, event: SensorEvent) -> None:
        super().apply(event)
        self.applied.append((0, event, time.monotonic()))


def thread_cpu(native_id: int | None) -> float:
    """CPU seconds of one thread of this process (0 if unknown)."""
    if native_id is None:
        return 0.0
    try:
        fields = Path(f"/proc/self/task/{native_id}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def config_text(boards: list[str], broadcast: dict[str, Any] | None = None) -> str:
    """The hall's configuration; ``broadcast``: more keys of that section (MQTT)."""
    return (
        "clock:\n  time_control: 3+2\n"
        "broadcast:\n  address: 127.0.0.1\n  port: 0\n"
        + "".join(f"  {key}: {json.dumps(value)}\n" for key, value in (broadcast or {}).items())
        + f"storage:\n  fsync: {str(FSYNC).lower()}\n"  # the shipped pgn_every: PGN every move
        "boards:\n" + "".join(boards)
    )


async def start_timed_hall(
    entries: list[str],
    directory: Path,
    moves: dict[str, list[tuple[int, str, float]]],
    arrivals: dict[str, list[tuple[SensorEvent, float]]],
    broadcast: dict[str, Any] | None = None,
) -> Daemon:
    """The hall daemon for ``entries``, started, noting each board's move events and
    each sensor event's arrival at its rules core (with the time); ``broadcast``: more
    keys of that section."""
    settings = load_text(config_text(entries, broadcast), "bench.yaml", environ={})

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "move":
            moves[event["board"]].append((event["ply"], event["uci"], time.monotonic()))

    hall = Daemon(
        settings,
        speech=False,
        storage_dir=directory / "games",
        resume=False,
        on_event=on_event,
        bus_timings=BusTimings(discovery_interval=0),
    )
    await hall.start()
    for board_id, unit in hall.boards.items():
        assert unit.pipeline is not None
        original = unit.pipeline.submit

        def timed(event: SensorEvent, board_id: str = board_id, original=original) -> None:
            arrivals[board_id].append((event, time.monotonic()))
            original(event)

        unit.pipeline.submit = timed  # type: ignore[method-assign]
    return hall


async def run_hall(kind: str, count: int, plies: int, seed: int) -> dict[str, Any]:
    games = distinct_openings(GAMES_PGN, count, plies)
    logs = [
        human_sensor_log(
            chess.Board(), g, seed=seed + i, with_clock=True, clock_seconds=180, increment=2
        )
        for i, g in enumerate(games)
    ]
    arrivals: dict[str, list[tuple[SensorEvent, float]]] = defaultdict(list)
    moves: dict[str, list[tuple[int, str, float]]] = defaultdict(list)
    with TemporaryDirectory(prefix="dgt-hall-bench-") as tmp:
        directory = Path(tmp)
        emulators: list[Any]
        if kind == "bus":
            serials = [f"{1025 + i:05d}" for i in range(count)]
            chain = TimedChain(directory, serials=serials, seed=seed).start()
            emulators = [chain]
            entries = [
                f'  - {{id: "{i + 1}", bus_port: "{chain.port_path}", bus_serial: "{s}"}}\n'
                for i, s in enumerate(serials)
            ]
        else:
            emulators = []
            entries = []
            for i in range(count):
                (directory / f"usb{i}").mkdir()
                board = TimedBoard(directory / f"usb{i}").start()
                emulators.append(board)
                entries.append(f'  - {{id: "{i + 1}", port: "{board.port_path}"}}\n')
        # every output a hall uses, checked at the end: MQTT to the relay, the page
        features = Features(directory).start() if OUTPUTS else None
        broadcast = features.settings() if features is not None else None
        hall = await start_timed_hall(entries, directory, moves, arrivals, broadcast)
        deadline = time.monotonic() + 20
        while not all(u.connected for u in hall.boards.values()) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if features is not None:
            await asyncio.to_thread(features.watch, _page_port(hall))
        bytes_before = chain.bytes_on_line if kind == "bus" else 0
        emulator_threads = [getattr(e._thread, "native_id", None) for e in emulators]
        cpu_before = process_cpu() - sum(thread_cpu(t) for t in emulator_threads)
        started = time.monotonic()
        for i, log in enumerate(logs):
            if kind == "bus":
                chain.play_on(i, log, speed=1.0)
            else:
                emulators[i].play(log, speed=1.0)
        for emulator in emulators:
            await asyncio.to_thread(emulator.wait_played, 3600)
        expected = {str(i + 1): [m.uci() for m in g] for i, g in enumerate(games)}
        wait_until = time.monotonic() + 15
        while time.monotonic() < wait_until and not all(
            _final(moves[b]) == expected[b] for b in expected
        ):
            await asyncio.sleep(0.1)
        elapsed = time.monotonic() - started
        cpu = process_cpu() - sum(thread_cpu(t) for t in emulator_threads) - cpu_before
        line_bytes = (chain.bytes_on_line - bytes_before) if kind == "bus" else 0
        stats = next(iter(hall.buses.values())).poller.stats if kind == "bus" else None
        alive = await asyncio.to_thread(features.checks, expected, None) if features else []
        hall.stop()
        await hall.close()
        if features is not None:
            features.stop()
        for emulator in emulators:
            emulator.stop()
        durable = _durable(directory / "games", features)
    applied = (
        chain.applied
        if kind == "bus"
        else [(i, e, t) for i, board in enumerate(emulators) for _, e, t in board.applied]
    )
    exact = sum(_final(moves[b]) == expected[b] for b in expected)
    piece, press = _lags(applied, arrivals, moves)
    return {
        "kind": kind,
        "boards": count,
        "plies": sum(len(g) for g in games),
        "exact": exact,
        "elapsed": elapsed,
        "cpu": cpu,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "line_bytes": line_bytes,
        "polls": stats.by_command.get("SEND_CHANGES", 0) if stats else 0,
        "timeouts": stats.timeouts if stats else 0,
        "piece_lag": piece,
        "press_lag": press,
        "wrong": {
            b: (_final(moves[b]), expected[b]) for b in expected if _final(moves[b]) != expected[b]
        },
        "alive": alive,
        "durable": durable,
    }


def _durable(storage: Path, features: Features | None) -> tuple[int, list[str]] | None:
    """With the slow card (``benchmarks.sdcard``: its shim notes every fsync in
    ``SLOW_FSYNC_LOG``) and fsync on: the moves the viewer had, checked to have been on
    the card first (docs/daemon.md, "What is on the card when"); None otherwise."""
    log = os.environ.get("SLOW_FSYNC_LOG")
    viewer = features.viewer if features is not None else None
    if not (log and FSYNC and viewer is not None):
        return None
    from benchmarks.sdcard import read_fsyncs, shown_before_on_card

    shown = {b: list(zip(viewer.moves[b], viewer.times[b], strict=False)) for b in viewer.moves}
    return shown_before_on_card(storage, read_fsyncs(Path(log)), shown)


def _page_port(hall: Daemon) -> int:
    """The port of the hall's live page (``http_url``: http://127.0.0.1:PORT/)."""
    return int(str(hall.http_url).rstrip("/").rsplit(":", 1)[1])


def _final(decided: list[tuple[int, str, float]]) -> list[str]:
    out: list[str] = []
    for ply, uci, _ in decided:
        del out[ply - 1 :]
        out.append(uci)
    return out


def _lags(
    applied: list[tuple[int, SensorEvent, float]],
    arrivals: dict[str, list[tuple[SensorEvent, float]]],
    moves: dict[str, list[tuple[int, str, float]]],
    names: list[str] | None = None,
) -> tuple[list[float], list[float]]:
    """Piece down -> its sensor event at the core; press -> the move event.

    ``names[index]`` is the board id of emulator index ``index`` (default: index + 1)."""
    piece: list[float] = []
    press: list[float] = []
    by_board: dict[int, list[tuple[SensorEvent, float]]] = defaultdict(list)
    for index, event, t in applied:
        by_board[index].append((event, t))
    for index, played in by_board.items():
        board = names[index] if names else str(index + 1)
        seen = [(e, t) for e, t in arrivals[board] if isinstance(e, SquareChange)]
        cursor = 0
        for event, t in played:
            if not (isinstance(event, SquareChange) and event.piece):
                continue
            for k in range(cursor, len(seen)):
                got, at = seen[k]
                if got.square == event.square and got.piece == event.piece and at >= t:
                    piece.append(at - t)
                    cursor = k + 1
                    break
        presses: list[float] = []  # a report whose running side changed: a move's press
        running: str | None = None
        for event, t in played:
            if isinstance(event, ClockReport):
                if running is not None and event.running not in (None, running):
                    presses.append(t)
                running = event.running or running
        first_decided: dict[int, float] = {}
        for ply, _, at in moves[board]:
            first_decided.setdefault(ply, at)
        for ply, at in sorted(first_decided.items()):
            if ply - 1 < len(presses) and at >= presses[ply - 1]:
                press.append(at - presses[ply - 1])
                WORST.append((at - presses[ply - 1], board, ply))
    return piece, press


def spread(values: list[float]) -> str:
    if not values:
        return "n/a"
    p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
    return f"p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, max {max(values) * 1000:.0f} ms"


def report_lags(result: dict[str, Any]) -> None:
    """The two lags of a run and its slowest moves (then forgets them for the next run)."""
    print(f"   piece down -> sensor event at the core: {spread(result['piece_lag'])}")
    print(f"   clock press -> move event: {spread(result['press_lag'])}")
    slowest = sorted(WORST, reverse=True)[:3]
    if slowest:
        print(
            "   slowest moves: " + ", ".join(f"board {b} ply {p} {t:.2f} s" for t, b, p in slowest)
        )
    WORST.clear()


def report(result: dict[str, Any]) -> None:
    what = "bus boards on one chain" if result["kind"] == "bus" else "USB boards"
    name = f"{result['boards']} {what}"
    print(f"-- {name}: {result['plies']} plies, {result['elapsed']:.0f} s")
    print(f"   games exact: {result['exact']}/{result['boards']}")
    for board, (got, want) in result["wrong"].items():
        print(f"   board {board} WRONG: {' '.join(got)} != {' '.join(want)}")
    print(
        f"   daemon CPU: {result['cpu']:.2f} s = {100 * result['cpu'] / result['elapsed']:.1f}% "
        f"of a core; peak RSS of the process: {result['rss_mb']:.0f} MB"
    )
    if result["kind"] == "bus":
        rate = result["line_bytes"] / result["elapsed"]
        print(
            f"   line: {rate:.0f} bytes/s of {LINE_BYTES_PER_SECOND:.0f} "
            f"({100 * rate / LINE_BYTES_PER_SECOND:.0f}% of 9600 baud); "
            f"{result['polls'] / result['elapsed'] / result['boards']:.1f} polls/s per board; "
            f"{result['timeouts']} time-outs"
        )
    report_lags(result)
    for check in result["alive"]:
        print(f"   {check.feature}: {'alive' if check.alive else 'DEAD'} ({check.seen})")
    if result.get("durable") is not None:
        checked, early = result["durable"]
        which = f" ({', '.join(early[:5])})" if early else ""
        print(
            "   moves shown on the page before their journal line was on the card: "
            f"{len(early)} of {checked}{which}"
        )


async def fetch_text(url: str) -> str:
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(timeout=timeout) as session, session.get(url) as response:
        return await response.text()


async def _until(condition: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.05)
    return bool(condition())


async def run_together(chain_size: int, usb_count: int, plies: int, seed: int) -> dict[str, Any]:
    """One daemon: a bus chain and USB boards at once, with the faults injected.

    Before the games: the middle board of the chain is unplugged, a USB cable pulled,
    another bus board's next replies corrupted, garbage on a USB line. The boards still
    there start their games; once the chain has decided moves, the two are plugged back
    and play theirs. Afterwards ``/state.json`` and ``/game.pgn`` are read from the page."""
    import io

    import chess.pgn

    count = chain_size + usb_count
    games = distinct_openings(GAMES_PGN, count, plies)
    logs = [
        human_sensor_log(
            chess.Board(), g, seed=seed + i, with_clock=True, clock_seconds=180, increment=2
        )
        for i, g in enumerate(games)
    ]
    names = [str(i + 1) for i in range(chain_size)] + [f"u{i + 1}" for i in range(usb_count)]
    arrivals: dict[str, list[tuple[SensorEvent, float]]] = defaultdict(list)
    moves: dict[str, list[tuple[int, str, float]]] = defaultdict(list)
    plan = HallFaults.for_hall(chain_size, usb_count)
    middle, pulled, corrupted = plan.unplugged, plan.pulled, plan.corrupted
    faults: list[str] = []
    with TemporaryDirectory(prefix="dgt-hall-together-") as tmp:
        directory = Path(tmp)
        serials = [f"{1025 + i:05d}" for i in range(chain_size)]
        chain = TimedChain(directory, serials=serials, seed=seed).start()
        usb: list[TimedBoard] = []
        for i in range(usb_count):
            (directory / f"usb{i}").mkdir()
            usb.append(TimedBoard(directory / f"usb{i}").start())
        entries = [
            f'  - {{id: "{names[i]}", bus_port: "{chain.port_path}", bus_serial: "{s}", '
            f'white: "White {names[i]}"}}\n'
            for i, s in enumerate(serials)
        ] + [
            f'  - {{id: "{names[chain_size + i]}", port: "{b.port_path}", '
            f'white: "White {names[chain_size + i]}"}}\n'
            for i, b in enumerate(usb)
        ]
        hall = await start_timed_hall(entries, directory, moves, arrivals)
        if not await _until(lambda: all(u.connected for u in hall.boards.values()), 30):
            faults.append("not all boards connected at start")
        emulator_threads = [getattr(e._thread, "native_id", None) for e in (chain, *usb)]
        cpu_before = process_cpu() - sum(thread_cpu(t) for t in emulator_threads)
        started = time.monotonic()
        loads = [os.getloadavg()[0]]

        middle_id, pulled_id = names[middle], names[chain_size + pulled]
        plan.inject(chain, usb)
        gone = await _until(
            lambda: not (hall.boards[middle_id].connected or hall.boards[pulled_id].connected), 30
        )
        faults.append(
            f"board {middle_id} (middle of the chain) unplugged, USB {pulled_id} pulled: "
            + ("both shown disconnected" if gone else "NOT shown disconnected")
        )
        state = json.loads(await fetch_text(f"{hall.http_url}state.json"))
        shown = [b for b in names if not state["boards"][b]["status"]["connected"]]
        faults.append(f"/state.json while unplugged: not connected = {shown}")
        for i in range(chain_size):
            if i != middle:
                chain.play_on(i, logs[i], speed=1.0)
        for i, board in enumerate(usb):
            if i != pulled:
                board.play(logs[chain_size + i], speed=1.0)
        await _until(lambda: len(_final(moves[names[corrupted]])) >= 4, 60)
        plan.replug(chain, usb)
        back = await _until(
            lambda: hall.boards[middle_id].connected and hall.boards[pulled_id].connected, 30
        )
        faults.append(
            f"replugged after {time.monotonic() - started:.0f} s: "
            + ("both connected again" if back else "NOT connected again")
        )
        chain.play_on(middle, logs[middle], speed=1.0)
        usb[pulled].play(logs[chain_size + pulled], speed=1.0)
        for emulator in (chain, *usb):
            while not await asyncio.to_thread(emulator.wait_played, 5):
                loads.append(os.getloadavg()[0])
        expected = {names[i]: [m.uci() for m in g] for i, g in enumerate(games)}
        await _until(lambda: all(_final(moves[b]) == expected[b] for b in expected), 15)
        elapsed = time.monotonic() - started
        cpu = process_cpu() - sum(thread_cpu(t) for t in emulator_threads) - cpu_before
        state = json.loads(await fetch_text(f"{hall.http_url}state.json"))
        pgn_text = await fetch_text(f"{hall.http_url}game.pgn")
        stats = next(iter(hall.buses.values())).poller.stats
        hall.stop()
        await hall.close()
        for emulator in (chain, *usb):
            emulator.stop()
    pgn_games: dict[str, list[str]] = {}
    stream = io.StringIO(pgn_text)
    while (game := chess.pgn.read_game(stream)) is not None:
        board_id = game.headers.get("White", "").removeprefix("White ")
        pgn_games[board_id] = [m.uci() for m in game.mainline_moves()]
    applied = [(i, e, t) for i, e, t in chain.applied] + [
        (chain_size + i, e, t) for i, board in enumerate(usb) for _, e, t in board.applied
    ]
    piece, press = _lags(applied, arrivals, moves, names)
    return {
        "kind": "together",
        "boards": count,
        "chain": chain_size,
        "usb": usb_count,
        "plies": sum(len(g) for g in games),
        "exact": sum(_final(moves[b]) == expected[b] for b in expected),
        "elapsed": elapsed,
        "cpu": cpu,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "load": (min(loads), max(loads)),
        "timeouts": stats.timeouts,
        "piece_lag": piece,
        "press_lag": press,
        "faults": faults,
        "page_boards": sorted(state["boards"]),
        "page_connected": sum(bool(state["boards"][b]["status"]["connected"]) for b in names),
        "pgn_events": pgn_text.count("[Event "),
        "pgn_exact": sum(pgn_games.get(b) == expected[b] for b in expected),
        "bus_forbidden": list(chain.bus_forbidden),
        "wrong": {
            b: (_final(moves[b]), expected[b]) for b in expected if _final(moves[b]) != expected[b]
        },
    }


def report_together(result: dict[str, Any]) -> None:
    boards = result["boards"]
    print(
        f"-- {result['chain']} bus boards on one chain + {result['usb']} USB boards in ONE "
        f"daemon, with faults: {result['plies']} plies, {result['elapsed']:.0f} s"
    )
    for fault in result["faults"]:
        print(f"   fault: {fault}")
    print(f"   games exact (move events): {result['exact']}/{boards}")
    for board, (got, want) in result["wrong"].items():
        print(f"   board {board} WRONG: {' '.join(got)} != {' '.join(want)}")
    print(
        f"   /state.json: {len(result['page_boards'])} boards, "
        f"{result['page_connected']} connected at the end"
    )
    print(
        f"   /game.pgn: {result['pgn_events']} games, {result['pgn_exact']}/{boards} "
        "exact against their source games"
    )
    print(
        f"   daemon CPU: {result['cpu']:.2f} s = {100 * result['cpu'] / result['elapsed']:.1f}% "
        f"of a core; peak RSS of the process: {result['rss_mb']:.0f} MB; "
        f"load {result['load'][0]:.1f}-{result['load'][1]:.1f}; "
        f"{result['timeouts']} bus time-outs; bus commands a board refuses: "
        f"{result['bus_forbidden'] or 'none'}"
    )
    report_lags(result)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 and 1 boards, 4 plies")
    parser.add_argument("--plies", type=int, default=30, help="plies per game (30)")
    parser.add_argument(
        "--chains", default="1,6,12", help="bus chain sizes to run, comma-separated (1,6,12)"
    )
    parser.add_argument("--usb", type=int, default=3, help="USB boards at once (3; 0: none)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--fsync", action="store_true", help="fsync the journal as shipped (default: off)"
    )
    parser.add_argument(
        "--together",
        action="store_true",
        help="one daemon: the largest chain and the USB boards at once, with faults",
    )
    parser.add_argument(
        "--no-outputs",
        action="store_true",
        help="no MQTT relay and no page viewer (to pair with a checkout from before they "
        "were checked; such a run checks only that each game is exact)",
    )
    args = parser.parse_args()
    global FSYNC, OUTPUTS
    FSYNC = args.fsync
    OUTPUTS = not args.no_outputs
    chains = [2] if args.quick else [int(n) for n in args.chains.split(",") if n]
    plies = 4 if args.quick else args.plies
    usb = 1 if args.quick else args.usb
    header("many boards in one daemon (DGT bus mode and USB)")
    print(f"threads at start: {threading.active_count()}")
    if args.together:
        report_together(asyncio.run(run_together(max(chains), max(usb, 1), plies, args.seed)))
        footer()
        return 0
    results = [asyncio.run(run_hall("bus", count, plies, args.seed)) for count in chains]
    for result in results:
        report(result)
    if usb:
        results.append(asyncio.run(run_hall("usb", usb, plies, args.seed)))
        report(results[-1])
    footer()
    # a run whose games were not exact, or whose relay or viewer missed a move, fails
    failed = any(
        r["exact"] != r["boards"]
        or not all(c.alive for c in r["alive"])
        or (r["durable"] is not None and (r["durable"][1] or not r["durable"][0]))
        for r in results
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
