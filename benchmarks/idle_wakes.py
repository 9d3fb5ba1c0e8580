"""How often an idle daemon wakes, and what a wake costs: the idle budget's two factors.

    python -m benchmarks.idle_wakes [--seconds S] [--quick] [--chain N] [--keep-awake]

The daemon as ``benchmarks.pibudget`` measures it idle (``dgt-bridge run`` as the unit
runs it, the emulated board still, MQTT towards a real Mosquitto, one viewer on the
page), at full speed. Over ``--seconds`` (30) it prints each of its threads' run time
(schedstat), how many times a second it ran, and its CPU per run. An idle daemon's
CPU is its wakes times their cost: the liveness probe and its answer (one each a
second, by design), the MQTT keepalive's check, the web app's timers. On a VM a wake
can cost more in the kernel than in Python, so fewer wakes is the saving that holds
on any machine.

``--chain N``: the daemon reads an idle chain of N emulated bus boards instead (no
MQTT, no viewer, no speech; every board found before the window), and the chain's
commands a second are printed beside the threads: what polling a hall's chain costs
while nobody moves, the floor under a hall's CPU on a Pi's budget (issue 28).
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
    parser.add_argument(
        "--chain",
        type=int,
        default=0,
        help="an idle chain of this many bus boards instead of one board (no MQTT, viewer, speech)",
    )
    add_keep_awake(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds = 3.0
    if args.chain:
        header(f"an idle daemon's wakes: a chain of {args.chain} bus boards still, at full speed")
    else:
        header("an idle daemon's wakes: one board still, MQTT, one viewer, at full speed")
    print(describe_idle(args.keep_awake))
    with kept_awake(args.keep_awake):
        before, after, names = _watch_chain(args) if args.chain else _watch_board(args)
    _print_threads(before, after, names, args.seconds)
    footer()
    return 0


Schedstat = dict[int, tuple[int, int]]


def _watch_chain(args: argparse.Namespace) -> tuple[Schedstat, Schedstat, dict[int, str]]:
    """The daemon reading an idle chain, its threads read over the window, and the
    chain's commands a second printed."""
    from benchmarks.pibudget import bus_chain

    with tempfile.TemporaryDirectory(prefix="dgt-idle-wakes-") as tmp:
        chain, config = bus_chain(Path(tmp), args.chain)
        try:
            daemon = BudgetDaemon(None, Path(tmp), config=config, speech=False)
            try:
                daemon.wait_ready(120)
                found = daemon.boards_read(args.chain, 60)
                time.sleep(3.0)  # every board's first dump and clock read
                commands = len(chain.bus_received)
                before = task_schedstat(daemon.pid)
                time.sleep(args.seconds)
                after = task_schedstat(daemon.pid)
                commands = len(chain.bus_received) - commands
                names = thread_names(daemon.pid, after)
            finally:
                daemon.stop()
        finally:
            chain.stop()
    print(f"the chain: {found} of {args.chain} boards read, "
          f"{commands / args.seconds:.1f} commands/s over the window")  # fmt: skip
    return before, after, names


def _watch_board(args: argparse.Namespace) -> tuple[Schedstat, Schedstat, dict[int, str]]:
    """The daemon started on one board, left idle, its threads read over the window."""
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
    return before, after, names


def _print_threads(
    before: Schedstat, after: Schedstat, names: dict[int, str], seconds: float
) -> None:
    print("| thread | CPU, % of one of our cores | runs a second | CPU a run (µs) |")
    print("|---|---|---|---|")
    for tid, (run_ns, runs) in sorted(after.items()):
        run_before, runs_before = before.get(tid, (0, 0))
        ran, woke = run_ns - run_before, runs - runs_before
        if woke:
            print(f"| {names.get(tid, '?')} ({tid}) | {ran / seconds / 1e7:.3f} | "
                  f"{woke / seconds:.2f} | {ran / woke / 1e3:.0f} |")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
