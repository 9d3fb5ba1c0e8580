"""A tournament day: many games back to back through one daemon, memory and journal per game.

    python -m benchmarks.growth [--games N] [--plies N] [--speed X] [--quick]

One ``dgt-bridge run`` (``python -m daemon run``, speech with pyttsx3 and its worker,
the player ``benchmarks/record_player.sh``, the live page on 127.0.0.1) reads the board
emulator on a pseudo-terminal for the whole day. The emulator plays ``--games`` real
games of ``../shared/data/games.pgn`` one after the other, each ``--plies`` plies with a
DGT clock, as human hands would (``drivers.simulators.handling``), and between two games the
players clear the board and set the pieces up again, which the rules core takes as a
new game (art. 7.1). The hands are ``--speed`` times quicker than the model's own.

After each game (once the next game's ``game_start`` has been seen, or the day's end)
the script notes the PSS of the daemon's whole process tree (``/proc/PID/smaps_rollup``)
and the size of the storage directory (journal and PGN files). Target: no growth
beyond the current game's own state, i.e. PSS flat from game to game once warm (a
slope near 0 MB a game) and the journal growing by one game's size a game.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import chess

from benchmarks.common import GAMES_PGN, footer, header
from benchmarks.daemonrun import BudgetDaemon, compile_sources
from benchmarks.processes import private_mb, tree_pss
from drivers.sensors import SensorEvent
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.gamelogs import distinct_openings
from drivers.simulators.handling import ALL, Hands, Timing

QUICK_HANDS = Timing(think=(0.3, 0.6), before_press=(0.1, 0.2))


def set_up_again(hands: Hands) -> None:
    """The players clear the board and set up the start position for the next game."""
    for square in list(hands.pieces):
        hands.lift(square)
        hands.wait(hands.rng.uniform(0.05, 0.2))
    hands.wait(1.5)
    start = chess.Board()
    for square, piece in start.piece_map().items():
        hands.put(square, piece.symbol())
        hands.wait(hands.rng.uniform(0.1, 0.4))
    hands.board = start
    hands.wait(2.0)
    if hands.with_clock:  # the clock is set for the next game and White's is started
        hands.times = {"white": 5400.0, "black": 5400.0}
        hands.running, hands.turn_started = "white", hands.t
        hands.clock_report()


def day_log(games: list[list[chess.Move]]) -> tuple[list[SensorEvent], list[float]]:
    """The whole day's sensor log, and the time each game's last press was made."""
    hands = Hands(chess.Board(), seed=3, with_clock=True, timing=QUICK_HANDS)
    ends: list[float] = []
    for number, moves in enumerate(games):
        if number:
            set_up_again(hands)
        for move in moves:
            hands.think()
            hands.play(move, ALL - {"fast_reply"})
            hands.wait(hands.rng.uniform(*hands.timing.before_press))
            hands.press()
        ends.append(hands.t)
        hands.wait(1.0)
    hands.wait(2.0)
    return hands.events, ends


def directory_size(path: Path) -> tuple[int, int]:
    files = [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def slope(values: list[float]) -> float:
    """Least-squares slope per step of ``values`` (MB a game)."""
    if len(values) < 2:
        return 0.0
    xs = range(len(values))
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(values)
    num = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, values, strict=True))
    return num / sum((x - mean_x) ** 2 for x in xs)


def traced_day(events: list[SensorEvent], ends: list[float], speed: float, first: int) -> None:
    """The same day with the daemon in this process under ``tracemalloc``: what Python
    holds after game ``first`` and after the last, and the lines whose allocations
    grew most between the two (a leak of objects shows here; memory the allocator
    keeps after freeing it does not)."""
    import asyncio
    import os
    import tracemalloc

    from daemon.app import Daemon
    from daemon.config import load

    tracemalloc.start(8)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("DGT_BRIDGE_")}
    environ.update({"DGT_BRIDGE_BROADCAST__ADDRESS": "127.0.0.1",
                    "DGT_BRIDGE_BROADCAST__PORT": "0"})  # fmt: skip
    settings = load(None, environ)
    snapshots: dict[int, tracemalloc.Snapshot] = {}

    async def day(work: Path, port: str, emulator: BoardEmulator) -> None:
        daemon = Daemon(settings, port=port, storage_dir=work / "games", resume=False,
                        speech=False)  # fmt: skip
        await daemon.start()
        try:
            emulator.play(events, speed=speed)
            started = time.monotonic()
            for number, end in enumerate(ends, start=1):
                due = started + (end - events[0].t) / speed + 2.0
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                if number in (first, len(ends)):
                    snapshots[number] = tracemalloc.take_snapshot()
                    traced, _ = tracemalloc.get_traced_memory()
                    print(f"in-process, after game {number}: Python holds {traced / 1e6:.2f} MB",
                          flush=True)  # fmt: skip
        finally:
            daemon.stop()
            await daemon.close()

    emulator = BoardEmulator().start()
    try:
        with tempfile.TemporaryDirectory(prefix="dgt-growth-traced-") as tmp:
            asyncio.run(day(Path(tmp), emulator.port_path, emulator))
    finally:
        emulator.stop()
        tracemalloc.stop()
    if first in snapshots and len(ends) in snapshots:
        keep = tracemalloc.Filter(False, tracemalloc.__file__)
        before = snapshots[first].filter_traces([keep])
        after = snapshots[len(ends)].filter_traces([keep])
        grown = after.compare_to(before, "lineno")
        total = sum(d.size_diff for d in grown)
        print(f"Python's own allocations from game {first} to {len(ends)}: {total / 1e3:+.1f} kB "
              f"({total / 1e3 / (len(ends) - first):+.1f} kB a game); the lines that grew most:")
        for diff in sorted(grown, key=lambda d: -d.size_diff)[:12]:
            frame = diff.traceback[0]
            print(f"  {diff.size_diff / 1e3:+8.1f} kB {diff.count_diff:+6d} blocks  "
                  f"{frame.filename.replace(str(Path.cwd()) + '/', '')}:{frame.lineno}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games back to back (20)")
    parser.add_argument("--plies", type=int, default=30, help="plies a game (30)")
    parser.add_argument("--speed", type=float, default=4.0, help="hands x faster (4)")
    parser.add_argument("--quick", action="store_true", help="3 games of 4 plies")
    parser.add_argument(
        "--trace",
        type=int,
        metavar="GAME",
        default=0,
        help="instead: the daemon in this process, tracemalloc's growth from game GAME "
        "to the last (no speech)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.plies = 3, 4
    header("a tournament day: games back to back through one daemon")
    compile_sources()  # an installed daemon starts from bytecode
    games = distinct_openings(GAMES_PGN, args.games, args.plies)
    events, ends = day_log(games)
    duration = (events[-1].t - events[0].t) / args.speed
    print(f"{len(games)} games of {args.plies} plies, {duration:.0f} s at hands x{args.speed:g}")
    if args.trace:
        traced_day(events, ends, args.speed, min(args.trace, len(ends) - 1))
        footer()
        return 0
    emulator = BoardEmulator().start()
    rows: list[tuple[int, float, dict[str, float], int, int, int]] = []
    privates: list[float] = []  # the daemon's own private memory after each game
    failed = False
    try:
        with tempfile.TemporaryDirectory(prefix="dgt-growth-") as tmp:
            work = Path(tmp)
            daemon = BudgetDaemon(None, work, port=emulator.port_path)
            try:
                daemon.wait_ready(120)
                daemon.wait_for(lambda e: e.get("type") in ("game_start", "game_resumed"), 60)
                time.sleep(3.0)
                base, parts = tree_pss(daemon.pid)
                size, count = directory_size(work / "games")
                print(f"before the first game: PSS {base:.1f} MB; storage {size} bytes")
                emulator.play(events, speed=args.speed)
                started = time.monotonic()
                for number, end in enumerate(ends, start=1):
                    due = started + (end - events[0].t) / args.speed + 2.0
                    time.sleep(max(0.0, due - time.monotonic()))
                    with daemon.changed:
                        starts = sum(
                            1 for _, _, e in daemon.events if e.get("type") == "game_start"
                        )
                        moves = sum(1 for _, _, e in daemon.events if e.get("type") == "move")
                    pss, parts = tree_pss(daemon.pid)
                    privates.append(private_mb(daemon.pid))
                    size, count = directory_size(work / "games")
                    rows.append((number, pss, parts, size, count, moves))
                    print(
                        f"after game {number:2d}: PSS {pss:.1f} MB ("
                        + ", ".join(f"{k} {v:.1f}" for k, v in sorted(parts.items()))
                        + f"; the daemon's private {privates[-1]:.2f}); storage {size} bytes"
                        f" in {count} files; games started "
                        f"{starts}; move events so far {moves}",
                        flush=True,
                    )
                emulator.wait_played(60)
            finally:
                daemon.stop()
    finally:
        emulator.stop()
    expected_moves = sum(len(g) for g in games)
    got_moves = rows[-1][5] if rows else 0
    failed |= got_moves < expected_moves
    warm = [r[1] for r in rows[1:]] or [r[1] for r in rows]
    # The daemon's private memory (pages no other process maps) does not move with
    # what else runs on the machine, as PSS does: the steadier figure for a slope.
    # By halves of the day: growth that levels off (the allocator's free lists and
    # arenas filling) against growth that goes on.
    half = max(2, len(privates) // 2)
    for name, values in (("games 2 on", privates[1:]), (f"games 2-{half}", privates[1:half]),
                         (f"games {half}-{len(privates)}", privates[half - 1:])):  # fmt: skip
        if len(values) >= 2:
            print(
                f"the daemon's private memory, {name}: {values[0]:.2f} -> {values[-1]:.2f} MB, "
                f"slope {slope(values):+.4f} MB a game"
            )
    sizes = [r[3] for r in rows]
    per_game = [b - a for a, b in itertools.pairwise(sizes)]
    print(
        f"PSS from game 2 on: first {warm[0]:.1f} MB, last {warm[-1]:.1f} MB, "
        f"slope {slope(warm):+.3f} MB a game (target: about 0)"
    )
    if per_game:
        print(
            f"storage per game: median {statistics.median(per_game):.0f} bytes, "
            f"min {min(per_game)}, max {max(per_game)} (target: one game's own size)"
        )
    print(f"move events: {got_moves} for {expected_moves} plies played")
    footer()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
