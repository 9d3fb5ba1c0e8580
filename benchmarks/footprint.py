"""Footprint of the daemon: memory, start-up time, CPU while idle.

    python -m benchmarks.footprint [--plies N] [--clients N] [--starts N] [--quick]

Runs ``dgt-bridge run`` (as ``python -m daemon run``: the console script's own entry
point) in its own process against the board emulator on a pseudo-terminal, with the
shipped configuration (speech on, its player replaced by ``benchmarks/record_player.sh``
as there is no sound card; live page on 127.0.0.1), and measures:

- start-up: from starting the process to its ``READY=1`` (sd_notify, the moment
  systemd considers it started; a socket of ours stands in for systemd's), and to
  the board being read (the first ``game_start`` event);
- resident memory (VmRSS) idle, after a game of N plies, and with N live-page clients
  connected (each an SSE stream ``/events?state=1``, what the page opens); the daemon
  alone, and with its speech worker (a child process);
- CPU while idle (board still, no clients): CPU seconds per second of the daemon and
  its children over the sampling window; anything polling would show here.

Targets: under 60 MB resident, ready in under 1.5 s, idle CPU under 1% of a core.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiohttp
import chess
import chess.pgn

from benchmarks.common import GAMES_PGN, footer, header
from benchmarks.daemonrun import BudgetDaemon
from benchmarks.processes import RECORD_PLAYER, cpu_seconds, descendants, is_connected, rss_mb
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.handling import ALL, Hands, Timing

#: Quick hands: the game is there to fill the daemon's memory, not to time anything.
QUICK_HANDS = Timing(think=(0.3, 0.6), before_press=(0.1, 0.2))


def memory(pid: int) -> tuple[float, float]:
    """RSS of the daemon alone, and with its children (the speech worker)."""
    return rss_mb(pid), sum(rss_mb(p) for p in descendants(pid))


def idle_cpu(pid: int, seconds: float) -> tuple[float, float]:
    """Share of one core used by the daemon (alone, and with children) over ``seconds``."""
    family = descendants(pid)
    alone, together = cpu_seconds(pid), sum(cpu_seconds(p) for p in family)
    started = time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - started
    alone2, together2 = cpu_seconds(pid), sum(cpu_seconds(p) for p in family)
    return (alone2 - alone) / elapsed, (together2 - together) / elapsed


def long_game(plies: int) -> chess.pgn.Game:
    with open(GAMES_PGN, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            if game.board().fen() == chess.STARTING_FEN and game.end().ply() >= plies:
                return game
    raise SystemExit(f"no standard game of {plies} plies in {GAMES_PGN}")


def game_log(game: chess.pgn.Game, plies: int) -> tuple[list[Any], list[str]]:
    hands = Hands(game.board(), seed=5, with_clock=True, timing=QUICK_HANDS)
    moves = list(game.mainline_moves())[:plies]
    for move in moves:
        hands.think()
        hands.play(move, ALL - {"fast_reply"})
        hands.wait(hands.rng.uniform(*hands.timing.before_press))
        hands.press()
    hands.wait(1.0)
    return hands.events, [m.uci() for m in moves]


async def connect_clients(url: str, count: int, hold: Any) -> None:
    """``count`` SSE viewers; each waits for its first message, then all stay until
    ``hold()`` returns."""
    got_first = 0

    async def viewer(session: aiohttp.ClientSession) -> None:
        nonlocal got_first
        async with session.get(url) as response:
            async for line in response.content:
                if line.startswith(b"data:"):
                    got_first += 1
                    break
            with contextlib.suppress(Exception):
                await asyncio.sleep(3600)

    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        tasks = [asyncio.create_task(viewer(session)) for _ in range(count)]
        for _ in range(600):
            if got_first >= count:
                break
            await asyncio.sleep(0.1)
        await asyncio.to_thread(hold, got_first)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def startup_only(emulator: BoardEmulator) -> tuple[float, float | None]:
    work = Path(tempfile.mkdtemp(prefix="dgt-bench-footprint-"))
    daemon = BudgetDaemon(None, work, port=emulator.port_path)
    try:
        ready = daemon.wait_ready(60)
        connected = daemon.wait_for(is_connected, 30)
        return ready, None if connected is None else connected[1] - daemon.started
    finally:
        daemon.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, default=200, help="plies of the game played (200)")
    parser.add_argument("--clients", type=int, default=100, help="live-page clients (100)")
    parser.add_argument("--starts", type=int, default=5, help="start-up measurements (5)")
    parser.add_argument("--idle", type=float, default=20.0, help="idle CPU window, s (20)")
    parser.add_argument("--speed", type=float, default=2.0, help="hands this many times faster (2)")
    parser.add_argument("--quick", action="store_true", help="small game, few clients")
    args = parser.parse_args(argv)
    if args.quick:
        args.plies, args.clients, args.starts, args.idle = 6, 5, 1, 2.0
    header("footprint of dgt-bridge run (own process, emulator on a pty)")
    print(f"daemon: {sys.executable} -m daemon run (speech pyttsx3, player {RECORD_PLAYER.name})")
    emulator = BoardEmulator().start()
    failed = False
    try:
        readies, connects = [], []
        for number in range(1, args.starts + 1):
            ready, connected = startup_only(emulator)
            readies.append(ready)
            if connected is not None:
                connects.append(connected)
            print(
                f"start {number}: READY=1 after {ready:.2f} s, board read after "
                + (f"{connected:.2f} s" if connected is not None else "NEVER")
            )
        ready_median = statistics.median(readies)
        print(
            f"start-up: median READY=1 {ready_median:.2f} s (target < 1.5 s: "
            f"{'meets' if ready_median < 1.5 else 'MISSES'}), median board read "
            f"{statistics.median(connects) if connects else float('nan'):.2f} s"
        )

        work = Path(tempfile.mkdtemp(prefix="dgt-bench-footprint-"))
        daemon = BudgetDaemon(None, work, port=emulator.port_path)
        http_port = daemon.http_port
        try:
            daemon.wait_ready(60)
            if daemon.wait_for(is_connected, 30) is None:
                raise SystemExit("the daemon did not connect to the emulator")
            time.sleep(3.0)  # the speech worker's start, the first clock reports
            idle = memory(daemon.pid)
            cpu = idle_cpu(daemon.pid, args.idle)
            print(
                f"idle: RSS {idle[0]:.1f} MB (with speech worker {idle[1]:.1f} MB); "
                f"CPU {cpu[0] * 100:.2f}% of a core ({cpu[1] * 100:.2f}% with children) "
                f"over {args.idle:.0f} s (target < 1%: {'meets' if cpu[1] < 0.01 else 'MISSES'})"
            )
            game = long_game(args.plies)
            events, expected = game_log(game, args.plies)
            played_for = (events[-1].t - events[0].t) / args.speed
            print(
                f"playing {args.plies} plies of a real game, every move completed by a clock "
                f"press ({played_for:.0f} s, hands x{args.speed:g})..."
            )
            emulator.play(events, speed=args.speed)
            emulator.wait_played(played_for + 60)
            daemon.wait_for(lambda e: e.get("type") == "move" and int(e["ply"]) == args.plies, 15)
            time.sleep(2.0)
            recognised = daemon.moves()
            good = recognised == expected
            failed |= not good
            after = memory(daemon.pid)
            print(
                f"after a {args.plies}-ply game: RSS {after[0]:.1f} MB (with speech worker "
                f"{after[1]:.1f} MB); moves recognised: "
                + ("all" if good else f"MISMATCH {len(recognised)} of {len(expected)}")
            )
            url = f"http://127.0.0.1:{http_port}/events?state=1"
            figures: dict[str, Any] = {}

            def hold(connected: int) -> None:
                figures["connected"] = connected
                time.sleep(1.0)
                figures["memory"] = memory(daemon.pid)
                figures["cpu"] = idle_cpu(daemon.pid, min(args.idle, 10.0))

            asyncio.run(connect_clients(url, args.clients, hold))
            clients = figures["memory"]
            print(
                f"with {figures['connected']} of {args.clients} live-page clients: RSS "
                f"{clients[0]:.1f} MB (with speech worker {clients[1]:.1f} MB); CPU "
                f"{figures['cpu'][1] * 100:.2f}% of a core while they wait"
            )
            worst = max(idle[0], after[0], clients[0])
            print(
                f"largest RSS of the daemon: {worst:.1f} MB (target < 60 MB: "
                f"{'meets' if worst < 60 else 'MISSES'}); with its speech worker "
                f"{max(idle[1], after[1], clients[1]):.1f} MB"
            )
        finally:
            daemon.stop()
    finally:
        emulator.stop()
    footer()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
