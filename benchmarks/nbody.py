"""The calibration program of ``pibudget``: the n-body of the Computer Language
Benchmarks Game (Sun, Jupiter, Saturn, Uranus, Neptune, dt 0.01), written here from
its specification, timed in a fresh interpreter (in a CPU group, if given) so that
this machine's CPU time per step can be set against a published Pi's
(``benchmarks/pibudget.py`` says how the budgets are derived from it)."""

from __future__ import annotations

import functools
import subprocess
import sys

from benchmarks.common import ROOT
from benchmarks.cpugroups import CpuGroup, ProcessGroups, enter

SOLAR_MASS = 4 * 3.141592653589793**2
DAYS_PER_YEAR = 365.24


def _bodies() -> list[list[float]]:
    """x, y, z, vx, vy, vz, mass of the Sun and the four giant planets."""
    planets = [
        (4.84143144246472090e00, -1.16032004402742839e00, -1.03622044471123109e-01,
         1.66007664274403694e-03, 7.69901118419740425e-03, -6.90460016972063023e-05,
         9.54791938424326609e-04),
        (8.34336671824457987e00, 4.12479856412430479e00, -4.03523417114321381e-01,
         -2.76742510726862411e-03, 4.99852801234917238e-03, 2.30417297573763929e-05,
         2.85885980666130812e-04),
        (1.28943695621391310e01, -1.51111514016986312e01, -2.23307578892655734e-01,
         2.96460137564761618e-03, 2.37847173959480950e-03, -2.96589568540237556e-05,
         4.36624404335156298e-05),
        (1.53796971148509165e01, -2.59193146099879641e01, 1.79258772950371181e-01,
         2.68067772490389322e-03, 1.62824170038242295e-03, -9.51592254519715870e-05,
         5.15138902046611451e-05),
    ]  # fmt: skip
    bodies = [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, SOLAR_MASS]]
    for x, y, z, vx, vy, vz, mass in planets:
        bodies.append(
            [x, y, z, vx * DAYS_PER_YEAR, vy * DAYS_PER_YEAR, vz * DAYS_PER_YEAR,
             mass * SOLAR_MASS]
        )  # fmt: skip
    px = sum(b[3] * b[6] for b in bodies)
    py = sum(b[4] * b[6] for b in bodies)
    pz = sum(b[5] * b[6] for b in bodies)
    bodies[0][3], bodies[0][4], bodies[0][5] = (
        -px / SOLAR_MASS, -py / SOLAR_MASS, -pz / SOLAR_MASS
    )  # fmt: skip
    return bodies


def nbody(steps: int, dt: float = 0.01) -> float:
    """Advance the five bodies ``steps`` times; return the energy (a check it ran)."""
    bodies = _bodies()
    pairs = [(bodies[i], bodies[j]) for i in range(5) for j in range(i + 1, 5)]
    for _ in range(steps):
        for a, b in pairs:
            dx, dy, dz = a[0] - b[0], a[1] - b[1], a[2] - b[2]
            distance2 = dx * dx + dy * dy + dz * dz
            magnitude = dt / (distance2 * distance2**0.5)
            bm, am = b[6] * magnitude, a[6] * magnitude
            a[3] -= dx * bm
            a[4] -= dy * bm
            a[5] -= dz * bm
            b[3] += dx * am
            b[4] += dy * am
            b[5] += dz * am
        for body in bodies:
            body[0] += dt * body[3]
            body[1] += dt * body[4]
            body[2] += dt * body[5]
    energy = 0.0
    for i, a in enumerate(bodies):
        energy += 0.5 * a[6] * (a[3] ** 2 + a[4] ** 2 + a[5] ** 2)
        for b in bodies[i + 1 :]:
            dx, dy, dz = a[0] - b[0], a[1] - b[1], a[2] - b[2]
            energy -= a[6] * b[6] / (dx * dx + dy * dy + dz * dz) ** 0.5
    return energy


def nbody_seconds_per_step(
    steps: int, group: CpuGroup | ProcessGroups | None = None
) -> tuple[float, float]:
    """(CPU, wall) seconds per n-body step in a fresh interpreter, in ``group`` if given."""
    code = (
        "import time, sys; from benchmarks.nbody import nbody; "
        "c, w = time.process_time(), time.perf_counter(); nbody(int(sys.argv[1])); "
        "print(time.process_time() - c, time.perf_counter() - w)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(steps)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=functools.partial(enter, group),
        timeout=3600,
    )
    cpu, wall = (float(v) for v in done.stdout.split())
    return cpu / steps, wall / steps
