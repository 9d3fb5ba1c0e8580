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
import contextlib
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess

from benchmarks.common import GAMES_PGN, footer, header
from benchmarks.cpugroups import CpuGroup
from benchmarks.daemonrun import SYNTHESIS, BudgetDaemon, compile_sources
from benchmarks.memorymap import describe, private_dirty_by_kind
from benchmarks.processes import descendants, private_mb, proc_mb, tree_pss
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


def from_the_start(moves: list[chess.Move]) -> bool:
    """Whether ``moves`` are legal from the start position."""
    board = chess.Board()
    for move in moves:
        if not board.is_legal(move):
            return False
        board.push(move)
    return True


#: The environment that chooses the daemon's allocator: each variant's figures say
#: which (``MALLOC_ARENA_MAX=1``, ``PYTHONMALLOC=malloc``, jemalloc by ``LD_PRELOAD``).
ALLOCATOR_ENV = ("LD_PRELOAD", "MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_",
                 "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES", "PYTHONMALLOC")  # fmt: skip


def allocator() -> str:
    """The allocator settings this run (and the daemon it starts) has, for the output."""
    set_ = [f"{name}={os.environ[name]}" for name in ALLOCATOR_ENV if name in os.environ]
    return " ".join(set_) or "glibc's malloc and pymalloc, as shipped"


def slopes_from(values: dict[int, float], first: int, what: str, halves: bool = True) -> None:
    """Prints the slope of ``values`` (by game number) from game ``first`` to the last,
    and over each half of that span: growth that goes on against a step or a levelling."""
    games = sorted(n for n in values if n >= first)
    if len(games) < 4:
        return
    middle = games[len(games) // 2]
    spans = [(games[0], games[-1])]
    if halves:
        spans += [(games[0], middle), (middle, games[-1])]
    for low, high in spans:
        span = [values[n] for n in games if low <= n <= high]
        print(
            f"{what}, games {low}-{high}: {span[0]:.2f} -> {span[-1]:.2f} MB, "
            f"slope {slope(span) * 1e3:+.1f} kB a game"
        )


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


def _rss_mb() -> tuple[float, float]:
    """This process's resident and private (anonymous, dirty) memory, MB."""
    fields: dict[str, int] = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:]:
        name, _, rest = line.partition(":")
        with contextlib.suppress(ValueError, IndexError):
            fields[name] = int(rest.split()[0])
    return fields.get("Rss", 0) / 1e3, fields.get("Private_Dirty", 0) / 1e3


def pymalloc_mb() -> tuple[float, float]:
    """pymalloc's arenas in use (MB; an arena is given back only once every block in
    it is free) and the bytes its allocated blocks hold (MB): the first growing while
    the second does not is fragmentation. From ``sys._debugmallocstats`` (stderr)."""
    import re

    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        sys.stderr.flush()
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode(errors="replace")
    arenas = re.search(r"(\d+) arenas \* (\d+) bytes/arena", text)
    blocks = re.search(r"# bytes in allocated blocks\s+=\s+([\d,]+)", text)
    held = int(arenas.group(1)) * int(arenas.group(2)) / 1e6 if arenas else float("nan")
    used = int(blocks.group(1).replace(",", "")) / 1e6 if blocks else float("nan")
    return held, used


def glibc_mb() -> tuple[float, float, float]:
    """glibc's heap in this process (``mallinfo2``): bytes in use, free in its arenas
    and in mmapped chunks, MB; NaN where there is no glibc."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
            "uordblks", "fordblks", "keepcost")]  # fmt: skip

    try:
        call = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return float("nan"), float("nan"), float("nan")
    call.restype = MallInfo2
    info = call()
    return info.uordblks / 1e6, info.fordblks / 1e6, info.hblkhd / 1e6


def traced_day(events: list[SensorEvent], ends: list[float], speed: float, first: int,
               expected: int, features: bool = True, speech: bool = False,
               trace: bool = True) -> None:  # fmt: skip
    """The same day with the daemon in this process under ``tracemalloc``: after every
    game what Python's objects hold (tracemalloc) beside what the process holds (RSS,
    private dirty). Objects kept per game grow both; memory the allocator keeps after
    freeing it (fragmentation, free lists) grows RSS alone. Then the allocations that
    grew from game ``first`` to the last, grouped by traceback.

    With ``features`` the page has a viewer (``curl`` on ``/events``, its own process)
    and MQTT publishes to a real Mosquitto, as a hall runs; the journal and PGN are on.
    With ``speech`` the daemon speaks (pyttsx3 in its thread, into the benchmark's
    stand-in player), as the unit's does. Without ``trace`` (``--in-process``): no
    tracemalloc and no collection forced, as the daemon runs; then pymalloc's arenas
    and the bytes their blocks hold are shown beside the process's memory."""
    import asyncio
    import gc
    import shutil
    import subprocess
    import tracemalloc

    from benchmarks.alive import MOSQUITTO, _listening, free_port
    from daemon.app import Daemon
    from daemon.config import load

    environ = {k: v for k, v in os.environ.items() if not k.startswith("DGT_BRIDGE_")}
    environ.update({"DGT_BRIDGE_BROADCAST__ADDRESS": "127.0.0.1",
                    "DGT_BRIDGE_BROADCAST__PORT": "0"})  # fmt: skip
    helpers: list[subprocess.Popen[bytes]] = []
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dgt-growth-traced-")))
        stack.callback(lambda: [(h.terminate(), h.wait(10)) for h in helpers])
        if features and MOSQUITTO:
            port = free_port()
            (tmp / "mosquitto.conf").write_text(
                f"listener {port} 127.0.0.1\nallow_anonymous true\n"
            )
            helpers.append(subprocess.Popen([MOSQUITTO, "-c", str(tmp / "mosquitto.conf")],
                                            stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL))  # fmt: skip
            if _listening(port, 20):
                environ.update({"DGT_BRIDGE_BROADCAST__MQTT__ENABLED": "true",
                                "DGT_BRIDGE_BROADCAST__MQTT__HOST": "127.0.0.1",
                                "DGT_BRIDGE_BROADCAST__MQTT__PORT": str(port),
                                "DGT_BRIDGE_BROADCAST__MQTT__TOURNAMENT": "growth"})  # fmt: skip
                print(f"MQTT to mosquitto on 127.0.0.1:{port}")
        if speech:  # pyttsx3 in the daemon's thread, the stand-in player noting
            from benchmarks.latency import stream_player_setting

            environ.update({"DGT_BRIDGE_SPEECH__ENGINE": "pyttsx3",
                            "DGT_BRIDGE_SPEECH__DEVICE": '"null"',
                            "DGT_BRIDGE_SPEECH__STREAM_PLAYER":
                                stream_player_setting(tmp / "player.log")})  # fmt: skip
        settings = load(None, environ)
        snapshots: dict[int, tracemalloc.Snapshot] = {}
        #: per game: Python's objects, pymalloc's blocks, glibc's heap in use, RSS, dirty
        figures: dict[str, dict[int, float]] = {}
        if trace:
            tracemalloc.start(12)
            stack.callback(tracemalloc.stop)

        seen: dict[str, int] = {"game_start": 0, "move": 0}

        def count(event: dict[str, Any]) -> None:
            kind = event.get("type")
            if kind in seen:
                seen[kind] += 1

        async def day(port: str, emulator: BoardEmulator) -> None:
            daemon = Daemon(settings, port=port, storage_dir=tmp / "games", resume=False,
                            speech=speech, on_event=count)  # fmt: skip
            await daemon.start()
            try:
                for _ in range(200):
                    if daemon.http_url:
                        break
                    await asyncio.sleep(0.1)
                curl = shutil.which("curl")
                if features and daemon.http_url and curl:
                    helpers.append(subprocess.Popen([curl, "-sN", daemon.http_url + "/events"],
                                                    stdout=subprocess.DEVNULL))  # fmt: skip
                    print(f"a viewer (curl) on {daemon.http_url}/events")
                await asyncio.sleep(1.0)
                emulator.play(events, speed=speed)
                started = time.monotonic()
                for number, end in enumerate(ends, start=1):
                    due = started + (end - events[0].t) / speed + 2.0
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
                    if trace and number in (first, len(ends)):
                        snapshots[number] = tracemalloc.take_snapshot()
                    if trace:
                        gc.collect()  # what is kept, not what waits for the collector
                    traced = tracemalloc.get_traced_memory()[0] if trace else float("nan")
                    rss, dirty = _rss_mb()
                    arenas, blocks = pymalloc_mb()
                    used, free, mapped = glibc_mb()
                    split = private_dirty_by_kind()
                    if not (trace and number in (first, len(ends))):  # not a snapshot's
                        for name, value in (("Python's objects", traced / 1e6),
                                            ("pymalloc's blocks", blocks),
                                            ("pymalloc's arenas", arenas),
                                            ("glibc's heap in use", used),
                                            ("private dirty", dirty),
                                            *split.items()):  # fmt: skip
                            figures.setdefault(name, {})[number] = value
                    print(
                        f"after game {number:3d}: Python's objects {traced / 1e6:6.3f} MB; "
                        f"pymalloc's arenas {arenas:6.2f} MB holding blocks of "
                        f"{blocks:6.3f} MB; glibc's heap {used:6.2f} MB in use, {free:6.2f} "
                        f"free, {mapped:6.2f} mmapped; RSS {rss:6.2f} MB, private dirty "
                        f"{dirty:6.2f} MB ({describe(split)}); games started "
                        f"{seen['game_start']}, moves {seen['move']}",
                        flush=True,
                    )
            finally:
                daemon.stop()
                await daemon.close()

        emulator = BoardEmulator().start()
        stack.callback(emulator.stop)
        asyncio.run(day(emulator.port_path, emulator))
        # the daemon's journal: every game there, each with its moves
        pgns = sorted((tmp / "games").rglob("*.pgn"))
        print(
            f"storage: {len(pgns)} PGN files; games started {seen['game_start']}, "
            f"moves {seen['move']} of {expected}"
        )
    # from game 20 (a snapshot's game and the next left out: the snapshot's own memory)
    for name, values in figures.items():
        if values and all(v == v for v in values.values()):  # NaN: not measured
            slopes_from(values, max(first + 1, 20) if trace else 20, name)
    if first in snapshots and len(ends) in snapshots:
        keep = [tracemalloc.Filter(False, tracemalloc.__file__),
                tracemalloc.Filter(False, "<frozen importlib._bootstrap*>")]  # fmt: skip
        before = snapshots[first].filter_traces(keep)
        after = snapshots[len(ends)].filter_traces(keep)
        games = len(ends) - first
        grown = after.compare_to(before, "traceback")
        total = sum(d.size_diff for d in grown)
        print(
            f"Python's own allocations from game {first} to {len(ends)}: {total / 1e3:+.1f} kB "
            f"({total / 1e3 / games:+.2f} kB a game); the tracebacks that grew most:"
        )
        root = str(Path.cwd()) + "/"
        for diff in sorted(grown, key=lambda d: -d.size_diff)[:12]:
            recent = list(reversed(diff.traceback))  # the allocation first, then its callers
            ours = [f for f in recent[1:] if "site-packages" not in f.filename
                    and "/lib/python" not in f.filename][:3]  # fmt: skip
            where = " <- ".join(f"{f.filename.replace(root, '')}:{f.lineno}"
                                for f in [recent[0], *ours])  # fmt: skip
            print(f"  {diff.size_diff / 1e3:+8.1f} kB {diff.count_diff:+6d} blocks  {where}")
        by_owner(grown, root)


def owner(traceback: Any, root: str) -> str:
    """Whose an allocation is: the benchmark's own board (the emulator, in this process
    with --trace), else the daemon's module that made it (its most recent frame in
    ``daemon/``), else the interpreter's or a library's with no frame of ours."""
    files = [frame.filename.replace(root, "") for frame in traceback]
    if any(f.startswith(("drivers/simulators/", "benchmarks/")) for f in files):
        return "the benchmark's board (emulator) and the benchmark"
    ours = [f for f in reversed(files) if f.startswith(("daemon/", "drivers/"))]
    return ours[0] if ours else "no frame of ours (the interpreter, a library's thread)"


def by_owner(grown: list[Any], root: str) -> None:
    """The growth summed by whose it is: what the daemon keeps, module by module, apart
    from what the benchmark's board keeps (they share the process under --trace)."""
    sums: dict[str, list[int]] = {}
    for diff in grown:
        size_count = sums.setdefault(owner(diff.traceback, root), [0, 0])
        size_count[0] += diff.size_diff
        size_count[1] += diff.count_diff
    ours = ("daemon/", "drivers/")
    daemon = sum(size for name, (size, _) in sums.items() if name.startswith(ours))
    print(f"by whose: the daemon's modules {daemon / 1e3:+.1f} kB in all")
    for name, (size, count) in sorted(sums.items(), key=lambda item: -abs(item[1][0]))[:14]:
        print(f"  {size / 1e3:+8.1f} kB {count:+6d} blocks  {name}")


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
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="instead: the daemon in this process as it runs (no tracemalloc, no forced "
        "collection), pymalloc's arenas beside the process's memory after each game",
    )
    parser.add_argument(
        "--speech",
        action="store_true",
        help="with --trace: the daemon in this process speaks too (pyttsx3 in its thread)",
    )
    parser.add_argument(
        "--synthesis",
        choices=("thread", "process"),
        default="thread",
        help="speech.synthesis of the daemon: pyttsx3 in its thread (as shipped for one "
        "output) or in a worker process",
    )
    parser.add_argument(
        "--no-speech",
        action="store_true",
        help="the daemon without speech (what the speech adds to the day's memory)",
    )
    parser.add_argument(
        "--cpu",
        type=float,
        metavar="PERCENT",
        default=0.0,
        help="the daemon's process tree held to PERCENT of one core (a CPU group, as "
        "pibudget's: a Pi's slow CPU, where speech falls behind a move as on a Pi)",
    )
    parser.add_argument(
        "--rows",
        type=int,
        default=0,
        help="with --trace: the rules core's FEN row cache kept to N rows (an experiment)",
    )
    args = parser.parse_args(argv)
    if args.rows:
        from daemon.rules import placement

        placement.ROWS_KEPT = args.rows
    if args.quick:
        args.games, args.plies = 3, 4
    SYNTHESIS[0] = args.synthesis
    header("a tournament day: games back to back through one daemon")
    print(f"allocator: {allocator()}")
    compile_sources()  # an installed daemon starts from bytecode
    # a few of the file's games start from a set-up position (a FEN header): not a
    # game the players set up from the start position, so left out
    games = [g for g in distinct_openings(GAMES_PGN, args.games + 20, args.plies)
             if from_the_start(g)][: args.games]  # fmt: skip
    events, ends = day_log(games)
    duration = (events[-1].t - events[0].t) / args.speed
    print(f"{len(games)} games of {args.plies} plies, {duration:.0f} s at hands x{args.speed:g}")
    if args.trace or args.in_process:
        traced_day(
            events, ends, args.speed, min(args.trace, len(ends) - 1), sum(len(g) for g in games),
            speech=args.speech, trace=bool(args.trace),
        )  # fmt: skip
        footer()
        return 0
    group = CpuGroup("growth", args.cpu / 100) if args.cpu else None
    if group is not None:
        print(f"the daemon's tree held to {args.cpu:g}% of one core ({group.path.name})")
    emulator = BoardEmulator().start()
    rows: list[tuple[int, float, dict[str, float], int, int, int]] = []
    privates: list[float] = []  # the daemon's own private memory after each game
    # its dirty pages alone: the private (clean) pages of its libraries change when
    # another process on the machine maps the same file (another Python), not with it
    dirties: dict[int, float] = {}
    kinds: dict[str, dict[int, float]] = {}  # the dirty pages by what holds them
    failed = False
    try:
        with tempfile.TemporaryDirectory(prefix="dgt-growth-") as tmp:
            work = Path(tmp)
            daemon = BudgetDaemon(group, work, port=emulator.port_path, speech=not args.no_speech)
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
                    dirties[number] = proc_mb(daemon.pid, "smaps_rollup", "Private_Dirty:")
                    split = private_dirty_by_kind(daemon.pid)
                    for kind, mb in split.items():
                        kinds.setdefault(kind, {})[number] = mb
                    # the worker's too (speech.synthesis: process), the players'
                    children = sum(private_mb(p) for p in descendants(daemon.pid)[1:])
                    size, count = directory_size(work / "games")
                    rows.append((number, pss, parts, size, count, moves))
                    print(
                        f"after game {number:2d}: PSS {pss:.1f} MB ("
                        + ", ".join(f"{k} {v:.1f}" for k, v in sorted(parts.items()))
                        + f"; the daemon's private {privates[-1]:.2f} (dirty "
                        f"{dirties[number]:.2f}), "
                        f"its children's {children:.2f})" + f"; storage {size} bytes"
                        f" in {count} files; games started "
                        f"{starts}; move events so far {moves}; the daemon's dirty pages: "
                        f"{describe(split)}",
                        flush=True,
                    )
                emulator.wait_played(60)
                with daemon.changed:  # a speech engine set aside, a disk error ...
                    notices = Counter(str(e.get("code")) for _, _, e in daemon.events
                                      if e.get("type") == "notice")  # fmt: skip
                print(f"notices in the feed: {dict(notices) or 'none'}")
            finally:
                daemon.stop()
    finally:
        emulator.stop()
        if group is not None:
            group.close()
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
    slopes_from(dict(enumerate(privates, start=1)), 20, "the daemon's private memory")
    slopes_from(dirties, 20, "the daemon's private dirty memory")
    for kind, values in kinds.items():
        slopes_from(values, 20, f"  of it, {kind}", halves=False)
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
