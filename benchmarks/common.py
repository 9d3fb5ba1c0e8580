"""What every benchmark prints: the machine, its load, the figures' spread, the command.

The machine is shared and its load changes the timings, so each script prints the
load average next to its figures and the exact command line that reproduces them.
"""

from __future__ import annotations

import math
import os
import platform
import re
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("DGT_BRIDGE_SHARED", ROOT.parent / "shared"))
GAMES_PGN = SHARED / "data" / "games.pgn"
CAPTURE_LOG = SHARED / "data" / "dgt-capture-1" / "sensor-log.jsonl"


def load_average() -> str:
    """``uptime``'s three load averages, as a string for the report."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """One line naming the machine the figures come from."""
    return (
        f"{socket.gethostname()}: {cpu_model()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}"
    )


def header(title: str) -> None:
    print(f"== {title}")
    print(f"machine: {machine()}")
    print(f"load average at start: {load_average()}")


def footer() -> None:
    print(f"load average at end: {load_average()}")
    command = " ".join(shlex.quote(a) for a in sys.argv[1:])
    script = Path(sys.argv[0]).resolve()
    try:
        module = ".".join(script.relative_to(ROOT).with_suffix("").parts)
    except ValueError:
        module = f"benchmarks.{script.stem}"
    print(f"reproduce: cd {ROOT} && python -m {module} {command}".rstrip())


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (p99 of 100 values is the 99th smallest)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def spread_ms(values: Sequence[float]) -> str:
    """p50/p99/max of durations in seconds, shown in milliseconds."""
    if not values:
        return "no samples"
    return (
        f"p50 {statistics.median(values) * 1e3:.2f} ms, "
        f"p99 {percentile(values, 0.99) * 1e3:.2f} ms, "
        f"max {max(values) * 1e3:.2f} ms (n={len(values)})"
    )


def verdict(value: float, target: float) -> str:
    return "meets target" if value < target else "MISSES TARGET"


def valgrind_instructions(command: Sequence[str], env: dict[str, str] | None = None,
                          tool: str = "cachegrind") -> int:  # fmt: skip
    """The instructions valgrind's ``tool`` counts for one run of ``command`` (no cache
    simulation): a figure the machine's load does not change."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "out")
        counted = ["valgrind", f"--tool={tool}", f"--{tool}-out-file={out}"]
        if tool == "cachegrind":
            counted.append("--cache-sim=no")
        subprocess.run([*counted, *command], check=True, env=env, capture_output=True, text=True)
        with open(out, encoding="utf-8") as handle:
            text = handle.read()
    found = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
    if found is None:
        raise SystemExit(f"{tool} wrote no summary line")
    return int(found.group(1))
