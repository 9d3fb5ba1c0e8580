"""The Pi-budget runner's plumbing: its calibration program and its CPU group.

The budget's figures are the benchmark's business (``benchmarks/pibudget.py``); what
is checked here is what they rest on: the n-body used to compare this machine with a
published Pi 4 figure computes the n-body (the Benchmarks Game's energies), and a CPU
group really holds a process to its fraction of a core, and is removed afterwards; and
with one group per process, each process the daemon starts gets its own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from benchmarks.pibudget import (
    CpuGroup,
    ProcessGroups,
    can_use_cgroups,
    nbody,
    nbody_seconds_per_step,
    tree_of,
)


def test_the_calibration_program_is_the_n_body_of_the_benchmarks_game() -> None:
    # The Benchmarks Game gives -0.169075164 before and -0.169087605 after 1000 steps.
    assert round(nbody(0), 9) == -0.169075164
    assert round(nbody(1000), 9) == -0.169087605


@pytest.mark.skipif(can_use_cgroups() is not None, reason="no writable cgroup cpu controller")
def test_a_cpu_group_holds_its_process_to_the_fraction_and_is_removed() -> None:
    group = CpuGroup("test", 0.2)
    try:
        # a high weight: on a loaded machine the group still gets its whole quota
        assert int((group.path / "cpu.shares").read_text()) > 1024
        started = time.perf_counter()
        cpu, wall = nbody_seconds_per_step(20_000, group)
        elapsed = time.perf_counter() - started
    finally:
        group.close()
    assert not group.path.exists()
    assert wall > 3 * cpu  # 20% of a core: about 5x the CPU time, never near 1x
    assert elapsed < 60


@pytest.mark.skipif(can_use_cgroups() is not None, reason="no writable cgroup cpu controller")
def test_each_process_of_the_tree_gets_a_group_of_its_own_with_the_same_quota() -> None:
    # The Pi's four cores: the daemon's children (the speech worker, the player) do
    # not share the daemon's slice of a core.
    groups = ProcessGroups("test-each", 0.2)
    parent = None
    try:
        sleeper = "import time; time.sleep(5)"
        code = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {sleeper!r}])"
        parent = subprocess.Popen([sys.executable, "-c", code], preexec_fn=groups.join)
        groups.watch(parent.pid)
        deadline = time.monotonic() + 10
        while len(groups.groups) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        child = groups.groups[1]
        members = (child.path / "cgroup.procs").read_text().split()
        assert len(members) == 1 and int(members[0]) != parent.pid
        assert (groups.groups[0].path / "cgroup.procs").read_text().split() == [str(parent.pid)]
        assert (child.path / "cpu.cfs_quota_us").read_text() == (
            groups.groups[0].path / "cpu.cfs_quota_us"
        ).read_text()
    finally:
        if parent is not None:
            for pid in tree_of(parent.pid)[::-1]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            parent.wait()
        groups.close()
    assert not any(g.path.exists() for g in groups.groups)
