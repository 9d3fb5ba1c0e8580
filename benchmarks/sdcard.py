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
  benchmark's own runs keep ``fsync: false``): press -> ``move`` p99 (target < 500 ms).

What the daemon must do for that: the journal's and the PGN's fsync must not hold the
event loop (``docs/daemon.md``, "What is on the card when").
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
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
    delays = [float(x) for x in log.read_text().split()] if log.exists() else []
    return done.stdout + done.stderr, delays


def lines_with(text: str, *needles: str) -> list[str]:
    return [line for line in text.splitlines() if any(n in line for n in needles)]


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
    with tempfile.TemporaryDirectory() as work:
        shim = build_shim(Path(work))
        log = Path(work) / "delays.txt"
        for module, module_args, needles in (
            ("latency", latency_args, ("median of the runs' p99", "wrong/missed")),
            ("hall", hall_args, ("clock press -> move", "games exact", "boards")),
        ):
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
                exact = re.findall(r"games exact: (\d+)/(\d+)", output)
                wrong = re.findall(r"wrong/missed moves (\d+), unspoken (\d+)", output)
                if (
                    "Traceback" in output
                    or any(a != b for a, b in exact)
                    or any(w != "0" or u != "0" for w, u in wrong)
                ):
                    failed = True
                    print("(this run reported a miss or a failure; its output's end:)")
                    print("\n".join(output.splitlines()[-10:]))
    footer()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
