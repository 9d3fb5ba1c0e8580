"""How often an idle daemon wakes, and what a wake costs: the idle budget's two factors.

    python -m benchmarks.idle_wakes [--seconds S] [--quick]

The daemon as ``benchmarks.pibudget`` measures it idle (``dgt-bridge run`` as the unit
runs it, the emulated board still, MQTT towards a real Mosquitto, one viewer on the
page), at full speed. Over ``--seconds`` (30) it prints each of its threads' run time
(schedstat), how many times a second it ran, and its CPU per run. An idle daemon's
CPU is its wakes times their cost: the liveness probe and its answer (one each a
second, by design), the MQTT keepalive's check, the web app's timers. On a VM a wake
can cost more in the kernel than in Python, so fewer wakes is the saving that holds
on any machine.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from benchmarks.alive import Features
from benchmarks.common import footer, header
from benchmarks.daemonrun import BudgetDaemon, unit_config
from benchmarks.keepawake import add_option as add_keep_awake
from benchmarks.keepawake import describe as describe_idle
from benchmarks.keepawake import kept_awake
from benchmarks.latency import StampingEmulator
from benchmarks.processes import is_connected, task_schedstat, thread_name


def thread_names(pid: int, tasks: Iterable[int]) -> dict[int, str]:
    """The names of ``pid``'s threads ``tasks`` (read while they run)."""
    names = {}
    for task in tasks:
        with contextlib.suppress(OSError):
            names[task] = thread_name(pid, task).decode(errors="replace")
    return names


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="the idle window (30)")
    parser.add_argument("--quick", action="store_true", help="a 3 s window")
    add_keep_awake(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds = 3.0
    header("an idle daemon's wakes: one board still, MQTT, one viewer, at full speed")
    print(describe_idle(args.keep_awake))
    with kept_awake(args.keep_awake):
        return _measure(args)


def _measure(args: argparse.Namespace) -> int:
    """The daemon started, left idle, its threads read over the window (main's work)."""
    emulator = StampingEmulator().start()
    work = Path(tempfile.mkdtemp(prefix="dgt-idle-wakes-"))
    features = Features(work).start()
    try:
        with tempfile.TemporaryDirectory(prefix="dgt-idle-wakes-") as tmp:
            config = unit_config(Path(tmp), None, {"broadcast": features.settings("idle")})
            daemon = BudgetDaemon(None, Path(tmp), port=emulator.port_path, config=config)
            try:
                daemon.wait_ready(120)
                daemon.wait_for(is_connected, 60)
                daemon.wait_started(120)
                features.watch(daemon.http_port)
                time.sleep(5.0)  # the first clock reports, the viewer's first messages
                before = task_schedstat(daemon.pid)
                time.sleep(args.seconds)
                after = task_schedstat(daemon.pid)
                names = thread_names(daemon.pid, after)
            finally:
                daemon.stop()
    finally:
        features.stop()
        emulator.stop()
    print("| thread | CPU, % of one of our cores | runs a second | CPU a run (µs) |")
    print("|---|---|---|---|")
    for tid, (run_ns, runs) in sorted(after.items()):
        run_before, runs_before = before.get(tid, (0, 0))
        ran, woke = run_ns - run_before, runs - runs_before
        if woke:
            print(f"| {names.get(tid, '?')} ({tid}) | {ran / args.seconds / 1e7:.3f} | "
                  f"{woke / args.seconds:.2f} | {ran / woke / 1e3:.0f} |")  # fmt: skip
    footer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
