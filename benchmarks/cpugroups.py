"""CPU groups (cgroup v1's ``cpu.cfs_quota_us``) that hold the daemon's process tree to
a fraction of one core of this machine: a Raspberry Pi's CPU budget, simulated
(``benchmarks/pibudget.py`` says how the fractions are derived). One group for the
whole tree (``CpuGroup``), or one per process (``ProcessGroups``: a Pi's four cores,
one for each process)."""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.processes import daemon_threads, descendants, synthesis_threads

CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
PERIOD_US = 10_000
MIN_QUOTA_US = 1_000
#: The group's weight against the others (cgroup v1's default is 1024): the quota is
#: only a ceiling, and on a machine loaded by other programs a group with the default
#: weight gets less than its quota; 8x the default gives it its whole quota first.
CPU_SHARES = 8192


class CpuGroup:
    """A cgroup-v1 CPU group with a quota: ``fraction`` of one core; removed by close()."""

    def __init__(self, name: str, fraction: float) -> None:
        self.path = CGROUP_CPU / f"dgt-pibudget-{os.getpid()}-{name}"
        self.path.mkdir()
        # The kernel's smallest quota is 1 ms: a small fraction needs a longer period.
        self.period_us = max(PERIOD_US, math.ceil(MIN_QUOTA_US / fraction))
        self.quota_us = round(fraction * self.period_us)
        (self.path / "cpu.cfs_period_us").write_text(str(self.period_us))
        (self.path / "cpu.cfs_quota_us").write_text(str(self.quota_us))
        (self.path / "cpu.shares").write_text(str(CPU_SHARES))
        self.fraction = fraction

    def join(self) -> None:
        """Moves the calling process (a child between fork and exec) into the group."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def close(self) -> None:
        for _ in range(50):  # the last members may still be exiting
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


class ProcessGroups:
    """One CPU group per process of the daemon's tree, each with the same fraction of
    one core: a Pi's four cores, one for each process (the daemon, the speech worker,
    the player), instead of the whole tree on one core.

    The daemon joins the first group between fork and exec (``join``); ``watch`` then
    moves each process it starts (within ``WATCH_EVERY``) into a group of its own, and
    so too the daemon's pyttsx3 synthesis thread (``speech.synthesis: thread``, found by
    its system name), which on a Pi runs on another core while espeak-ng synthesises
    without the GIL, as the worker process did. The daemon's other threads (the disk
    writer's fsyncs, asyncio's executor: start-up's imports, a name lookup) share one
    more group: on a Pi they run on another core while the event loop runs, and they
    did not do so here when they shared the loop's quota. In three pairs of Zero 2 W
    hall runs, interleaved, the loop's own group gave the worst board's press -> move
    p99 305-887 ms, and its helpers' group beside it 171-291 ms, the tree's CPU the
    same (``RESULTS.md``, issue 28); the loop's slow turns had been whole periods of
    its quota spent waiting, not its own CPU. The one-core budgets keep the whole tree
    in one group (pessimistic)."""

    WATCH_EVERY = 0.01

    def __init__(self, name: str, fraction: float) -> None:
        self.name = name
        self.fraction = fraction
        self.groups = [CpuGroup(f"{name}-0", fraction)]
        self.path = self.groups[0].path
        self.period_us, self.quota_us = self.groups[0].period_us, self.groups[0].quota_us
        self._placed: set[int] = set()
        self._synthesis_group: CpuGroup | None = None
        self._helpers_group: CpuGroup | None = None
        self._helpers: set[int] = set()  # the daemon's threads in that group
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    def join(self) -> None:
        self.groups[0].join()

    def paths(self) -> list[Path]:
        return [g.path for g in self.groups]

    def watch(self, root: int) -> None:
        """Gives every process below ``root`` its own group, until ``close``."""
        self._stop.clear()
        self._placed.add(root)
        self._watcher = threading.Thread(target=self._watch, args=(root,), daemon=True)
        self._watcher.start()

    def _watch(self, root: int) -> None:
        while not self._stop.wait(self.WATCH_EVERY):
            for pid in descendants(root):
                if pid not in self._placed:
                    self._placed.add(pid)
                    self._own_group(pid, "cgroup.procs")
            # the loop's thread is ``root``, placed; a helper is looked at again each
            # pass (the synthesis thread may name itself after it was first seen)
            tasks = [t for t in daemon_threads(root) if t not in self._placed]
            threads = synthesis_threads(root, tasks)
            if threads:  # one group for them (espeak-ng's own thread takes the name too)
                self._placed.update(threads)
                self._helpers.difference_update(threads)  # named after it was seen
                self._synthesis_group = self._into(self._synthesis_group, threads)
            helpers = [t for t in tasks if t not in threads and t not in self._helpers]
            if helpers:
                self._helpers.update(helpers)
                self._helpers_group = self._into(self._helpers_group, helpers)

    def _into(self, group: CpuGroup | None, threads: list[int]) -> CpuGroup:
        """``threads`` moved into ``group`` (made for the first when None)."""
        if group is None:
            group = self._own_group(threads[0], "tasks")
        for thread in threads:  # cgroup v1 moves one thread by its tasks file
            with contextlib.suppress(OSError):
                (group.path / "tasks").write_text(str(thread))
        return group

    def _own_group(self, ident: int, file: str) -> CpuGroup:
        group = CpuGroup(f"{self.name}-{len(self.groups)}", self.fraction)
        with contextlib.suppress(OSError):  # gone already
            (group.path / file).write_text(str(ident))
        self.groups.append(group)  # listed once it holds its process
        return group

    def unwatch(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join()
            self._watcher = None

    def close(self) -> None:
        self.unwatch()
        for group in self.groups:
            group.close()


@dataclass
class Budget:
    name: str
    fraction: float | None  # of one core of this machine; None: no quota
    #: each process of the tree its own group (one core each), not one for the tree
    per_process: bool = False

    def label(self) -> str:
        if self.fraction is None:
            return f"{self.name} (no quota)"
        each = ", one core per process" if self.per_process else ", the tree on one core"
        return f"{self.name} ({self.fraction * 100:.1f}% of a core{each})"


@contextlib.contextmanager
def cpu_group(budget: Budget) -> Iterator[CpuGroup | ProcessGroups | None]:
    if budget.fraction is None:
        yield None
        return
    group: CpuGroup | ProcessGroups = (
        ProcessGroups(budget.name, budget.fraction)
        if budget.per_process
        else CpuGroup(budget.name, budget.fraction)
    )
    print(
        f"   group {group.path.name}: {group.quota_us} µs of CPU every {group.period_us} µs, "
        f"cpu.shares {CPU_SHARES}" + (", and one such group per process" if budget.per_process
                                      else ""),
        flush=True,
    )  # fmt: skip
    try:
        yield group
    finally:
        group.close()


def can_use_cgroups() -> str | None:
    """None if a CPU group can be made here, else why not."""
    if not (CGROUP_CPU / "cpu.cfs_quota_us").exists():
        return f"no cgroup-v1 cpu controller at {CGROUP_CPU} (cgroup v2 needs cpu.max)"
    try:
        group = CpuGroup("probe", 0.5)
    except OSError as exc:
        return f"cannot make a CPU group in {CGROUP_CPU}: {exc}"
    group.close()
    return None


def enter(group: CpuGroup | ProcessGroups | None) -> None:
    """In the daemon's process before exec: the usual priority, the budget's group."""
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    if group is not None:
        group.join()
