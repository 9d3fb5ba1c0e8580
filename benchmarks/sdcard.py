"""The daemon on a slow SD card: every fsync takes 20-200 ms (issue 28).

    python -m benchmarks.sdcard [--quick] [--min-ms 20] [--max-ms 200]

A Pi keeps its journal on a microSD card, whose small random writes are slow: Jeff
Geerling's microSD benchmarks (pidramble.com/wiki/benchmarks/microsd-cards, on a
Raspberry Pi 2 B with ext4) measured 4K random writes of 0.17 to 3.00 MB/s across
fifteen cards, that is 43 to 750 writes a second, 1.3 to 23 ms each. An fsync of an
appended journal on ext4 (data=ordered, the Raspberry Pi OS default) writes the data
block, the inode and at least the journal's descriptor and commit blocks, then
flushes: four or more such writes, so about 5 to 100 ms on those cards, and the
wear-levelling stalls of cheap cards reach past that. The issue's 20-200 ms covers
the common cards and the bad ones; the delay is drawn log-uniformly over it.

How: ``benchmarks/slow_fsync.c``, built here with the machine's C compiler and
``LD_PRELOAD``-ed into each run, makes every ``fsync``/``fdatasync`` of the process
sleep that delay first (the journal's, the PGN's and its directory's). Each run is
a whole benchmark in its own process, with and without the slow card, one after the
other:

- ``latency``: one board, a real game through the serial link: press -> ``move``
  (target p99 < 50 ms with the slow card) and press -> first sample of speech;
- ``hall``: twelve boards on one DGT bus chain at blitz pace, with fsync on (the hall
  benchmark's own runs keep ``fsync: false``): press -> ``move`` p99 (target < 500 ms),
  every game exact, MQTT's relay and the page's viewer alive; and docs/daemon.md's
  promise checked move by move: a move the page's viewer had was on the card (an fsync
  of its journal line had returned before; the shim notes each fsync's file, size and
  end). A move shown before it was on the card fails the run.

Both run at this machine's full speed (the Pi's CPU budget with a slow card:
``python -m benchmarks.pihall --hall zero2w --slow-card``).

What the daemon must do for that: the journal's and the PGN's fsync must not hold the
event loop (``docs/daemon.md``, "What is on the card when").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import ROOT, footer, header

SHIM_SOURCE = ROOT / "benchmarks" / "slow_fsync.c"


def build_shim(directory: Path) -> Path:
    """The slow-fsync library, compiled for this machine (``cc``)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("benchmarks.sdcard: needs a C compiler (cc) to build slow_fsync.c")
    library = directory / "slow_fsync.so"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O2", "-o", str(library), str(SHIM_SOURCE), "-ldl", "-lm"],
        check=True,
    )
    return library


def shim_environment(
    shim: Path, log: Path, low: float = 20.0, high: float = 200.0
) -> dict[str, str]:
    """The variables that give a process the slow card: the shim preloaded, its delays'
    range (ms), the file each delay taken is noted in, a fixed seed."""
    return {
        "LD_PRELOAD": str(shim),
        "SLOW_FSYNC_MIN_MS": str(low),
        "SLOW_FSYNC_MAX_MS": str(high),
        "SLOW_FSYNC_LOG": str(log),
        "SLOW_FSYNC_SEED": "28",
    }


def run(
    module: str, args: list[str], *, shim: Path | None, low: float, high: float, log: Path
) -> tuple[str, list[float]]:
    """One benchmark's whole output, and the fsync delays it slept (ms)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if shim is not None:
        env.update(shim_environment(shim, log, low, high))
    log.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=3600,
    )
    delays = [f.ms for f in read_fsyncs(log)]
    return done.stdout + done.stderr, delays


@dataclass(frozen=True)
class Fsync:
    """One fsync the slow card served: the delay slept (ms), when it returned
    (``time.monotonic``'s clock), the file's size when it was called, the file."""

    ms: float
    done: float
    size: int
    path: str


def read_fsyncs(log: Path) -> list[Fsync]:
    """The fsyncs ``slow_fsync.c`` noted in ``log`` (none if it noted none)."""
    found = []
    with contextlib.suppress(OSError):
        for line in log.read_text().splitlines():
            ms, done, size, path = line.split(" ", 3)
            found.append(Fsync(float(ms), float(done), int(size), path))
    return found


def shown_before_on_card(
    storage: Path, fsyncs: list[Fsync], shown: dict[str, list[tuple[str, float]]]
) -> tuple[int, list[str]]:
    """Docs/daemon.md's promise, checked: a move shown on the page is on the card.
    ``shown``: each board's moves as a viewer had them (uci, time.monotonic()); each
    is looked up in its board's journal (``storage``/board-ID/*.jsonl), and it was on
    the card when an fsync of that journal, called once the file held the move's
    line, had returned before the viewer had the move. The moves checked, and those
    shown before (a line each)."""
    synced: dict[str, list[tuple[int, float]]] = {}
    for fsync in fsyncs:
        synced.setdefault(fsync.path, []).append((fsync.size, fsync.done))
    checked, early = 0, []
    for board, moves in shown.items():
        lines: dict[str, tuple[str, int]] = {}  # uci -> (journal, end of its line)
        for journal in sorted((storage / f"board-{board}").glob("*.jsonl")):
            offset = 0
            for raw in journal.read_bytes().splitlines(keepends=True):
                offset += len(raw)
                with contextlib.suppress(ValueError):
                    event = json.loads(raw)
                    if event.get("type") == "move":
                        key = f"{event['ply']}:{event['uci']}"
                        lines.setdefault(key, (str(journal.resolve()), offset))
        for ply, (uci, at) in enumerate(moves, start=1):
            where = lines.get(f"{ply}:{uci}")
            if where is None:
                continue
            checked += 1
            path, end = where
            if not any(size >= end and done <= at for size, done in synced.get(path, [])):
                early.append(f"board {board} ply {ply} {uci}")
    return checked, early


def lines_with(text: str, *needles: str) -> list[str]:
    return [line for line in text.splitlines() if any(n in line for n in needles)]


#: (module, what, the regex of its press -> move p99 in ms, the target in ms)
TARGETS = {
    "latency": ("one board: press -> move p99, all runs pooled",
                r"from the press\): all runs pooled: to event .*?p99 ([\d.]+) ms", 50.0),
    "hall": ("a bus chain (12 boards; --quick 2, and a USB board): press -> move p99",
             r"clock press -> move event: p50 \d+ ms, p99 (\d+) ms", 500.0),
}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs (smoke test)")
    parser.add_argument("--min-ms", type=float, default=20.0)
    parser.add_argument("--max-ms", type=float, default=200.0)
    args = parser.parse_args()
    header(f"a slow SD card: every fsync {args.min_ms:g}-{args.max_ms:g} ms (log-uniform)")
    latency_args = ["--quick"] if args.quick else ["--moves", "40", "--runs", "2"]
    hall_args = (
        ["--quick", "--usb", "0", "--fsync"]
        if args.quick
        else ["--chains", "12", "--usb", "0", "--plies", "24", "--fsync"]
    )
    failed = False
    table: list[str] = []
    with tempfile.TemporaryDirectory() as work:
        shim = build_shim(Path(work))
        log = Path(work) / "delays.txt"
        for module, module_args, needles in (
            ("latency", latency_args, ("median of the runs' p99", "wrong/missed", "pooled")),
            ("hall", hall_args, ("clock press -> move", "games exact", "boards",
                                 "on the card", "alive")),
        ):  # fmt: skip
            cells: list[str] = []
            for card in ("this machine's disk", "slow SD card"):
                output, delays = run(
                    module,
                    module_args,
                    shim=shim if card == "slow SD card" else None,
                    low=args.min_ms,
                    high=args.max_ms,
                    log=log,
                )
                slept = (
                    f"{len(delays)} fsyncs slept, median {sorted(delays)[len(delays) // 2]:.0f} ms"
                    if delays
                    else "no fsync slept"
                )
                print(f"\n== {module} {' '.join(module_args)}, {card} ({slept})")
                shown = lines_with(output, *needles) or output.splitlines()[-15:]
                for line in shown:
                    print(line)
                what, pattern, target = TARGETS[module]
                found = [float(x) for x in re.findall(pattern, output)]
                worst = max(found) if found else float("nan")
                cells.append(f"{worst:.0f} ms ({slept})")
                exact = re.findall(r"games exact: (\d+)/(\d+)", output)
                wrong = re.findall(r"wrong/missed moves (\d+), unspoken (\d+)", output)
                early = re.findall(r"before their journal line was on the card: (\d+) of", output)
                if (
                    "Traceback" in output
                    or "DEAD" in output
                    or not found
                    or any(a != b for a, b in exact)
                    or any(w != "0" or u != "0" for w, u in wrong)
                    or any(n != "0" for n in early)
                    or (card == "slow SD card" and module == "hall" and not early)
                ):
                    failed = True
                    print("(this run reported a miss or a failure; its output's end:)")
                    print("\n".join(output.splitlines()[-10:]))
            verdict = "meets" if worst < target else "MISSES"
            table.append(f"| {what} | {cells[0]} | {cells[1]} | < {target:.0f} ms | {verdict} |")
    print("\n| run | this machine's disk | slow SD card | target (slow card) | verdict |")
    print("|---|---|---|---|---|")
    print("\n".join(table))
    print(
        "every move exact, every output alive and every move shown on the page on the card "
        f"first: {'yes' if not failed else 'NO (see above)'}"
    )
    footer()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
