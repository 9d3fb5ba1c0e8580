"""Rules-core cost: sensor events per second and the time one event takes.

    python -m benchmarks.core [--games N] [--runs N] [--quick]

Replays sensor logs through ``RulesCore.judge`` (and ``tick`` when a settle timer is
due, as the daemon's timer does): the real DGT capture (with its clock, and again
without) and real games played by the human-handling model (``drivers.simulators.handling``,
half of them with a clock). The logs are made before the clock starts; only the
core's own work is timed, one call at a time.

Target: p99 under 1 ms per event here. A Raspberry Pi 3 is about ten times slower; a
board sends at most about 190 field updates a second (9600 baud, 5 bytes each).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.common import CAPTURE_LOG, GAMES_PGN, footer, header, percentile
from daemon.rules import RulesCore, RulesSettings
from drivers.sensorlog import read_log
from drivers.sensors import SensorEvent
from drivers.simulators.gamelogs import read_games, set_position_request
from drivers.simulators.handling import human_sensor_log

BOARD_LIMIT = 9600 / 10 / 5  # updates a second: 10 bits a byte on the line, 5 bytes each


@dataclass
class Replay:
    name: str
    events: list[SensorEvent]
    settings: RulesSettings


@dataclass
class Timing:
    durations: list[float]  # wall-clock seconds per call (feed or tick)
    cpu: list[float]  # this thread's CPU seconds per call (blind to other processes)
    kinds: list[str]  # the sensor event's class name, or "tick"
    wall: float  # seconds for the whole replay, calls and loop together
    events: int  # sensor events fed


def replay(log: Replay) -> Timing:
    """Feed the log as the daemon does: each event, then any timer that came due."""
    core = RulesCore(log.settings)
    durations: list[float] = []
    cpu: list[float] = []
    kinds: list[str] = []
    clock, cpu_clock = time.perf_counter, time.thread_time

    def timed(call, argument, kind: str) -> None:
        before, before_cpu = clock(), cpu_clock()
        call(argument)
        cpu.append(cpu_clock() - before_cpu)
        durations.append(clock() - before)
        kinds.append(kind)

    started = clock()
    for event in log.events:
        while (deadline := core.next_deadline()) is not None and deadline <= event.t:
            timed(core.tick, deadline, "tick")
        timed(core.judge, event, type(event).__name__)
    while (deadline := core.next_deadline()) is not None:
        timed(core.tick, deadline, "tick")
    return Timing(durations, cpu, kinds, clock() - started, len(log.events))


def make_logs(games: int) -> list[Replay]:
    capture = read_log(str(CAPTURE_LOG))
    logs = [
        Replay("real capture, clock", capture, RulesSettings(use_clock=True)),
        Replay("real capture, no clock", capture, RulesSettings(use_clock=False)),
    ]
    for game in read_games(GAMES_PGN, limit=games):
        with_clock = game.index % 2 == 0
        log = human_sensor_log(game.start, game.moves, seed=game.index, with_clock=with_clock)
        logs.append(
            Replay(
                f"game {game.index}", set_position_request(game) + log, RulesSettings(chess960=True)
            )
        )
    return logs


def measure(logs: Sequence[Replay]) -> Timing:
    total = Timing([], [], [], 0.0, 0)
    gc.collect()
    for log in logs:
        timing = replay(log)
        total.durations += timing.durations
        total.cpu += timing.cpu
        total.kinds += timing.kinds
        total.wall += timing.wall
        total.events += timing.events
    return total


def _us(values: Sequence[float]) -> str:
    return (
        f"p50 {statistics.median(values) * 1e6:6.0f} µs, p99 {percentile(values, 0.99) * 1e6:6.0f}"
        f" µs, max {max(values) * 1e6:7.0f} µs"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300, help="real games to replay (300)")
    parser.add_argument("--runs", type=int, default=5, help="runs; the median run is shown (5)")
    parser.add_argument("--quick", action="store_true", help="a few games, one run")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.runs = 4, 1
    header("rules-core cost per sensor event")
    logs = make_logs(args.games)
    print(
        f"logs: the real capture (with and without clock) + {args.games} real games, "
        f"{sum(len(log.events) for log in logs)} sensor events"
    )
    runs: list[Timing] = []
    for number in range(1, args.runs + 1):
        timing = measure(logs)
        runs.append(timing)
        print(
            f"run {number}: {timing.events / timing.wall:7.0f} events/s; wall per call "
            f"{_us(timing.durations)}; CPU per call {_us(timing.cpu)}"
        )
    runs.sort(key=lambda r: percentile(r.durations, 0.99))
    median = runs[len(runs) // 2]
    p99 = percentile(median.durations, 0.99)
    p99_cpu = percentile(median.cpu, 0.99)
    print("\nmedian run (by wall p99):")
    print(
        f"  throughput: {median.events / median.wall:.0f} sensor events/s "
        f"({median.events} events in {median.wall:.2f} s)"
    )
    print(f"  wall per call: {_us(median.durations)} over {len(median.durations)} calls")
    print(f"  CPU per call:  {_us(median.cpu)} (this thread's CPU time: other load excluded)")
    by_kind: dict[str, list[tuple[float, float]]] = {}
    for kind, wall, cpu in zip(median.kinds, median.durations, median.cpu, strict=True):
        by_kind.setdefault(kind, []).append((wall, cpu))
    for kind, pairs in sorted(by_kind.items()):
        walls = [w for w, _ in pairs]
        cpus = [c for _, c in pairs]
        print(f"    {kind:13} n={len(pairs):7d}  wall {_us(walls)};  CPU {_us(cpus)}")
    print(f"  target p99 < 1 ms (wall): {'meets' if p99 < 1e-3 else 'MISSES'} ({p99 * 1e3:.3f} ms)")
    print(
        f"  target p99 < 1 ms (CPU):  {'meets' if p99_cpu < 1e-3 else 'MISSES'} "
        f"({p99_cpu * 1e3:.3f} ms)"
    )
    pi_p99 = p99_cpu * 10
    print(
        f"  a Pi 3 (~10x slower): p99 ~{pi_p99 * 1e3:.2f} ms of CPU, "
        f"i.e. ~{1 / pi_p99:.0f} events/s"
        f" even if every event cost the p99, against the board's {BOARD_LIMIT:.0f} updates/s"
    )
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
