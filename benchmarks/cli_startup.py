"""How fast the command line starts, as ratios to an empty Python in the same venv.

Every ``dgt-bridge`` command pays for what it imports before it does anything; on a
Pi that is seconds. Measured here, in one run and interleaved (so that the shared
machine's load falls on all three alike):

- ``python -c pass``: the floor (the interpreter and ``site``);
- ``dgt-bridge --help``: the CLI alone (target: within 4x the floor; argparse itself
  is about 2x);
- ``dgt-bridge replay --fast LOG``: a whole game through the daemon's pipeline,
  configured as ``run`` is, printed as the event feed (target: within 12x; importing
  python-chess alone is about 6x).

Each command runs ``--runs`` times; the ratio is of the fastest runs (the run least
disturbed by other processes), and the medians are printed beside them. A first,
untimed run of each command writes what an installed package has after its first
start: the bytecode, and the parsed configuration and vocabulary in the cache
directory (``daemon.files.yamlcache``), so the timed runs import no PyYAML.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import CAPTURE_LOG, footer, header

TARGETS = {"--help": 4.0, "replay --fast": 12.0}


def game_log(directory: Path, long: bool = False) -> Path:
    """The real capture (57 moves) when the shared material is here, else a game
    played by the hands generator (so the script runs anywhere). ``long``: the 160-ply
    game of ``benchmarks.replay_cost`` (game 404 of games.pgn, with a clock), the
    issue-28 figure."""
    if long:
        from benchmarks.replay_cost import build
        from drivers.sensorlog import write_event

        path = directory / "long-game.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for event in build("long"):
                write_event(handle, event)
        return path
    if CAPTURE_LOG.is_file():
        return CAPTURE_LOG
    import chess

    from drivers.sensorlog import write_event
    from drivers.simulators.handling import human_sensor_log

    board = chess.Board()
    opening = "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7 f1e1 b7b5 a4b3 d7d6"
    moves = [chess.Move.from_uci(uci) for uci in opening.split(" ")]
    path = directory / "game.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for event in human_sensor_log(board, moves, seed=1, with_clock=True):
            write_event(handle, event)
    return path


def dgt_bridge(python: str) -> list[str]:
    """The installed ``dgt-bridge`` script beside this Python, else ``python -m daemon``."""
    script = Path(python).parent / "dgt-bridge"
    return [str(script)] if script.is_file() else [python, "-m", "daemon"]


#: The commands run as after an install, with their bytecode cached: without this, a
#: PYTHONDONTWRITEBYTECODE in the caller's environment keeps the warm-up from writing
#: the .pyc files and every run compiles the package's modules afresh (~35 of them).
ENVIRONMENT = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str], cwd: str | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENVIRONMENT, cwd=cwd
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="runs of each command (30)")
    parser.add_argument("--quick", action="store_true", help="5 runs (a smoke test)")
    parser.add_argument(
        "--against",
        metavar="CHECKOUT",
        action="append",
        default=[],
        help="also replay with another checkout's package (e.g. a worktree of an older "
        "commit), run as `python -m daemon.cli` from there: a before/after in one run "
        "(may be given more than once)",
    )
    parser.add_argument(
        "--long",
        action="store_true",
        help="replay the 160-ply game with a clock (benchmarks.replay_cost's) instead of "
        "the capture",
    )
    args = parser.parse_args()
    runs = 5 if args.quick else args.runs
    header("CLI start-up, as ratios to `python -c pass` in the same venv")
    python = sys.executable
    with tempfile.TemporaryDirectory() as scratch:
        log = game_log(Path(scratch), long=args.long)
        lines = sum(1 for _ in log.open(encoding="utf-8"))
        cli = dgt_bridge(python)
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "--help": [*cli, "--help"],
            "replay --fast": [*cli, "replay", "--fast", str(log)],
        }
        where: dict[str, str | None] = dict.fromkeys(commands)
        if args.against:  # each as `python -m daemon.cli`, the current directory first
            here = str(Path(__file__).resolve().parent.parent)
            for label, checkout in [*((c, c) for c in args.against), ("this checkout", here)]:
                name = f"python -m daemon.cli replay --fast ({label})"
                commands[name] = [python, "-m", "daemon.cli", "replay", "--fast", str(log)]
                where[name] = checkout
        for name, command in commands.items():  # warm the file cache and the .pyc files
            timed(command, where[name])
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, command in commands.items():
                times[name].append(timed(command, where[name]))
    floor = min(times["python -c pass"])
    floor_median = statistics.median(times["python -c pass"])
    print(f"replayed log: {log.name} ({lines} sensor events)")
    print(f"runs per command: {runs}, interleaved")
    print(f"python -c pass: fastest {floor * 1000:.1f} ms, median {floor_median * 1000:.1f} ms")
    for name, target in TARGETS.items():
        fastest, median = min(times[name]), statistics.median(times[name])
        ratio = fastest / floor
        verdict = "meets" if ratio <= target else "MISSES"
        print(
            f"dgt-bridge {name}: fastest {fastest * 1000:.1f} ms, median {median * 1000:.1f} ms; "
            f"ratio {ratio:.1f}x (medians {median / floor_median:.1f}x), "
            f"target <= {target:g}x: {verdict}"
        )
    for name in list(commands)[3:]:
        fastest, median = min(times[name]), statistics.median(times[name])
        print(
            f"{name}: fastest {fastest * 1000:.1f} ms, median {median * 1000:.1f} ms; "
            f"ratio {fastest / floor:.1f}x (medians {median / floor_median:.1f}x)"
        )
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
