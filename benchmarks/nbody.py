"""The calibration of ``pibudget`` and ``pihall``: this machine's CPU time per n-body
step, set against a published Raspberry Pi 4 figure to find the fraction of one of our
cores that a Pi's core is worth (``benchmarks/pibudget.py`` says how the budgets are
derived from it).

**The interpreter matters as much as the machine.** The Pi 4's figure (158.26 s for
5,000,000 steps) was published on 2020-01-28 (the date in its page's source), when
Raspbian Buster's ``python3`` was CPython 3.7.3 and its ``python`` 2.7.16. CPython 3.11
runs this n-body 1.4x faster than 3.7 and 1.5x faster than 2.7 on the same machine (its
specialising interpreter: the floats' arithmetic above all; another way of writing it,
indexing lists, gains 1.6x). Set against our 3.11, the Pi's 3.7 made a Pi 4 look that
much slower than a Pi 4 running Raspberry Pi OS Bookworm's 3.11, where the daemon runs,
so every budget was 1.3-1.4x too small. So the program is timed in the Pi's interpreters
here (``ERA_PYTHONS``), and the faster of them sets the budget: the smaller budget, where
it is uncertain which of the two the Pi ran.

What is assumed: that one build of an interpreter is as much faster than another on the
Pi's ARM core as here. Both sides of the comparison are built alike: here pyenv's 3.7
and 2.7 against the daemon's pyenv 3.11, there Debian's 3.7 or 2.7 against Debian's 3.11.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.cpugroups import CpuGroup, ProcessGroups, enter
from benchmarks.nbody_program import nbody

__all__ = ["nbody"]

PROGRAM = Path(__file__).with_name("nbody_program.py")
#: The interpreters the published Pi 4 figure can have been measured with (see above).
ERA_PYTHONS = ("3.7", "2.7")
#: ``--calibration-python``'s word for the interpreter running the benchmark (3.11
#: here: budgets about 1.4x too small, about as before 2026-12-07).
RUNNING = "running"


def nbody_seconds_per_step(
    steps: int, group: CpuGroup | ProcessGroups | None = None, python: str = sys.executable
) -> tuple[float, float]:
    """(CPU, wall) seconds per n-body step in a fresh ``python``, in ``group`` if given."""
    done = subprocess.run(
        [python, str(PROGRAM), str(steps)],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=functools.partial(enter, group),
        timeout=3600,
    )
    cpu, wall, _ = (float(v) for v in done.stdout.split())
    return cpu / steps, wall / steps


def era_pythons(pyenv_root: Path | None = None) -> list[str]:
    """Each of ``ERA_PYTHONS`` found on this machine: the newest of its releases that
    pyenv has (``$PYENV_ROOT``, else ``~/.pyenv``), else ``pythonX.Y`` on the PATH."""
    if pyenv_root is None:
        pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = []
    for version in ERA_PYTHONS:
        releases = sorted(
            (d for d in (pyenv_root / "versions").glob(f"{version}.*") if d.is_dir()),
            key=lambda d: [int(p) if p.isdigit() else -1 for p in d.name.split(".")],
        )
        executables = [d / "bin" / "python" for d in releases if (d / "bin" / "python").exists()]
        if executables:
            found.append(str(executables[-1]))
        elif on_path := shutil.which(f"python{version}"):
            found.append(on_path)
    return found


def calibration_pythons(asked: str) -> list[str]:
    """The interpreters ``--calibration-python`` names: ``era`` (those found of
    ``ERA_PYTHONS``), ``running`` (this one), or paths, comma-separated. Raises
    SystemExit with what to do when ``era`` finds none, or a path is not an interpreter."""
    if asked == "era":
        found = era_pythons()
        if not found:
            raise SystemExit(
                "cannot calibrate: no CPython "
                + " or ".join(ERA_PYTHONS)
                + " here, the interpreters of the Pi 4's published n-body figure "
                "(benchmarks/nbody.py says why). Install one (`pyenv install 3.7`), or "
                f"pass --calibration-python {RUNNING} for this interpreter (budgets "
                "about 1.4x too small) or the path of one."
            )
        return found
    named = [sys.executable if p == RUNNING else p for p in asked.split(",") if p]
    missing = [p for p in named if shutil.which(p) is None]
    if missing or not named:
        where = ", ".join(missing) or "(none named)"
        raise SystemExit(f"--calibration-python: no interpreter at {where}")
    return named


def seconds_per_step(python: str, steps: int, runs: int = 3) -> float:
    """The median CPU seconds per step of ``runs`` runs in ``python``."""
    return statistics.median(nbody_seconds_per_step(steps, python=python)[0] for _ in range(runs))


def interpreter_name(python: str) -> str:
    """``CPython 3.7.16`` and the like, as ``python`` says of itself."""
    done = subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return "CPython " + done.stdout.strip()


def add_options(parser: argparse.ArgumentParser) -> None:
    """The calibration's options, the same in every budget benchmark."""
    parser.add_argument(
        "--calibrate-steps", type=int, default=200_000, help="n-body steps a run (200000)"
    )
    parser.add_argument(
        "--calibration-python",
        default="era",
        help="the interpreter(s) the n-body is timed in: era (the default: CPython "
        + " and ".join(ERA_PYTHONS)
        + ", those of the Pi's figure, the faster one counts), running (this one: "
        "budgets about 1.4x too small), or paths, comma-separated",
    )
