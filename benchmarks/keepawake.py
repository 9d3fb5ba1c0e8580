"""This machine's CPUs kept from halting while a benchmark runs: a Pi's idle, not a VM's.

``--keep-awake`` (``benchmarks.pihall``, ``benchmarks.pibudget``,
``benchmarks.idle_wakes``) starts one spinner per CPU at ``SCHED_IDLE``, the lowest
class the kernel has, before the calibration and until the end. A spinner runs only
when nothing else wants its CPU, and gives way at once when a task wakes; a
daemon's group keeps its quota (``cpugroups``). What it changes is what a CPU does
when our processes sleep: it spins instead of halting.

Why that is nearer a Pi (issue 28). On this machine, a VM guest, a CPU with nothing to
run halts, and the host runs something else on the core. The daemon sleeps between
two of the bus's commands (12 ms at 9600 baud) and finds its caches cold when the
reply wakes it: on this machine an idle 12-board chain cost 282-309 µs of CPU a
command with the CPUs halting and 156-158 µs with them kept awake (two 15 s windows
each, interleaved, ``/proc/PID/task/*/schedstat`` over ``/proc/PID/io``'s writes: one
a command), while the n-body that calibrates the budgets ran at 3.50-3.81 µs a step
with no spinner and 3.83-3.92 with two. So the calibration prices the daemon's work
at a busy CPU's speed, and the halting VM then charged the daemon about twice that for
each of its ~70 wakes a second. A Pi's core halts too (``WFI``), but nothing else
runs on it meanwhile and it wakes in microseconds with its caches as they were.

Neither is a Pi. The figures with ``--keep-awake`` say what this machine's wakes
would cost if they cost what its busy CPU costs; those without it say what they cost
on this VM. A benchmark prints which it measured, and ``RESULTS.md`` gives both.
The spinners add one to the load average for each CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import subprocess
import sys
from collections.abc import Iterator

SPIN = "while True: pass"


def _idle_on(cpu: int) -> None:
    """In the spinner's child, before exec: this CPU only, the idle class."""
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


@contextlib.contextmanager
def kept_awake(on: bool = True) -> Iterator[list[int]]:
    """One ``SCHED_IDLE`` spinner on each CPU this process may use, while inside (none
    when ``on`` is false); yields the spinners' pids."""
    spinners: list[subprocess.Popen[bytes]] = []
    try:
        if on:
            for cpu in sorted(os.sched_getaffinity(0)):
                spinners.append(
                    subprocess.Popen(
                        [sys.executable, "-S", "-c", SPIN],
                        preexec_fn=functools.partial(_idle_on, cpu),
                        stdin=subprocess.DEVNULL,
                    )
                )
        yield [spinner.pid for spinner in spinners]
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def add_option(parser: argparse.ArgumentParser) -> None:
    """``--keep-awake``, as each budget benchmark takes it."""
    parser.add_argument(
        "--keep-awake",
        action="store_true",
        help="a SCHED_IDLE spinner on each CPU: the daemon's wakes priced as a Pi's, not "
        "this VM's (benchmarks/keepawake.py)",
    )


def describe(on: bool) -> str:
    """The line a benchmark prints about its CPUs' idle."""
    if on:
        return (
            f"CPUs kept awake: a SCHED_IDLE spinner on each of {len(os.sched_getaffinity(0))} "
            "(--keep-awake; a Pi's idle, not this VM's halt: benchmarks/keepawake.py)"
        )
    return "CPUs halt when idle, as this machine's do (--keep-awake: as a Pi's would)"
