"""The n-body of the Computer Language Benchmarks Game (Sun, Jupiter, Saturn, Uranus,
Neptune, dt 0.01), written here from its specification: the program that compares this
machine with a published Raspberry Pi 4 figure (``benchmarks/nbody.py``).

It runs unchanged in CPython 2.7 and 3.x (no annotations, no f-strings), because the
comparison is only fair in the interpreter the Pi's figure was measured with, which is
years older than ours (``benchmarks/nbody.py`` says which and why).

    python benchmarks/nbody_program.py STEPS

prints the CPU seconds and the wall seconds of STEPS steps, then the energy after them.
"""

import itertools
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
    """(position, velocity, mass) of the Sun and the four giant planets, the Sun's
    momentum set so that the system's is zero."""
    found = [([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], SOLAR_MASS)]
    for x, y, z, vx, vy, vz, mass in PLANETS:
        velocity = [vx * DAYS_PER_YEAR, vy * DAYS_PER_YEAR, vz * DAYS_PER_YEAR]
        found.append(([x, y, z], velocity, mass * SOLAR_MASS))
    sun_velocity = found[0][1]
    for axis in range(3):
        momentum = sum(v[axis] * m for _, v, m in found)
        sun_velocity[axis] = -momentum / SOLAR_MASS
    return found


def energy(system):
    """The system's kinetic plus potential energy."""
    total = 0.0
    for _, (vx, vy, vz), m in system:
        total += 0.5 * m * (vx * vx + vy * vy + vz * vz)
    for (r1, _, m1), (r2, _, m2) in itertools.combinations(system, 2):
        dx, dy, dz = r1[0] - r2[0], r1[1] - r2[1], r1[2] - r2[2]
        total -= m1 * m2 / (dx * dx + dy * dy + dz * dz) ** 0.5
    return total


def nbody(steps, dt=0.01):
    """Advance the five bodies ``steps`` times; return the energy (a check it ran).

    Written in the style of the Benchmarks Game's first Python program, the likeliest
    to be the one the Pi's figure ran (its unpacking of each pair is what older
    interpreters did fastest: in CPython 3.7 a version indexing lists took 1.2x as long
    here, in 3.11 1.05x)."""
    system = bodies()
    pairs = list(itertools.combinations(system, 2))
    for _ in range(steps):
        for ([x1, y1, z1], v1, m1), ([x2, y2, z2], v2, m2) in pairs:
            dx, dy, dz = x1 - x2, y1 - y2, z1 - z2
            magnitude = dt * (dx * dx + dy * dy + dz * dz) ** -1.5
            m2_magnitude, m1_magnitude = m2 * magnitude, m1 * magnitude
            v1[0] -= dx * m2_magnitude
            v1[1] -= dy * m2_magnitude
            v1[2] -= dz * m2_magnitude
            v2[0] += dx * m1_magnitude
            v2[1] += dy * m1_magnitude
            v2[2] += dz * m1_magnitude
        for r, (vx, vy, vz), _ in system:
            r[0] += dt * vx
            r[1] += dt * vy
            r[2] += dt * vz
    return energy(system)


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
