"""The n-body of the Computer Language Benchmarks Game (Sun, Jupiter, Saturn, Uranus,
Neptune, dt 0.01), written here from its specification: the program that compares this
machine with a published Raspberry Pi 4 figure (``benchmarks/nbody.py``).

It runs unchanged in CPython 2.7 and 3.x (no annotations, no f-strings), because the
comparison is only fair in the interpreter the Pi's figure was measured with, which is
years older than ours (``benchmarks/nbody.py`` says which and why).

    python benchmarks/nbody_program.py STEPS

prints the CPU seconds and the wall seconds of STEPS steps, then the energy after them.
"""

import sys
import time

SOLAR_MASS = 4 * 3.141592653589793**2
DAYS_PER_YEAR = 365.24

PLANETS = (
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
)  # fmt: skip


def bodies():
    """x, y, z, vx, vy, vz, mass of the Sun and the four giant planets, the Sun's
    momentum set so that the system's is zero."""
    found = [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, SOLAR_MASS]]
    for x, y, z, vx, vy, vz, mass in PLANETS:
        found.append(
            [x, y, z, vx * DAYS_PER_YEAR, vy * DAYS_PER_YEAR, vz * DAYS_PER_YEAR,
             mass * SOLAR_MASS]
        )  # fmt: skip
    px = sum(b[3] * b[6] for b in found)
    py = sum(b[4] * b[6] for b in found)
    pz = sum(b[5] * b[6] for b in found)
    found[0][3], found[0][4], found[0][5] = (
        -px / SOLAR_MASS, -py / SOLAR_MASS, -pz / SOLAR_MASS
    )  # fmt: skip
    return found


def nbody(steps, dt=0.01):
    """Advance the five bodies ``steps`` times; return the energy (a check it ran)."""
    system = bodies()
    pairs = [(system[i], system[j]) for i in range(5) for j in range(i + 1, 5)]
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
        for body in system:
            body[0] += dt * body[3]
            body[1] += dt * body[4]
            body[2] += dt * body[5]
    energy = 0.0
    for i, a in enumerate(system):
        energy += 0.5 * a[6] * (a[3] ** 2 + a[4] ** 2 + a[5] ** 2)
        for b in system[i + 1 :]:
            dx, dy, dz = a[0] - b[0], a[1] - b[1], a[2] - b[2]
            energy -= a[6] * b[6] / (dx * dx + dy * dy + dz * dz) ** 0.5
    return energy


def main():
    steps = int(sys.argv[1])
    # CPython 2.7 has no process_time; its clock() is the process's CPU time on Unix.
    cpu_clock = getattr(time, "process_time", None) or time.clock
    cpu, wall = cpu_clock(), time.time()
    energy = nbody(steps)
    cpu, wall = cpu_clock() - cpu, time.time() - wall
    sys.stdout.write(" ".join(repr(v) for v in (cpu, wall, energy)) + "\n")


if __name__ == "__main__":
    main()
