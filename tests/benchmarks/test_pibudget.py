"""The Pi-budget runner's plumbing: its calibration program and its CPU group.

The budget's figures are the benchmark's business (``benchmarks/pibudget.py``); what
is checked here is what they rest on: the n-body used to compare this machine with a
published Pi 4 figure computes the n-body (the Benchmarks Game's energies), and a CPU
group really holds a process to its fraction of a core, and is removed afterwards; and
with one group per process, each process the daemon starts gets its own; and a daemon
that does not read its board is reported with what says why.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchmarks.cpugroups import CpuGroup, ProcessGroups, can_use_cgroups
from benchmarks.daemonrun import BudgetDaemon
from benchmarks.nbody import nbody, nbody_seconds_per_step
from benchmarks.processes import descendants, thread_name, thread_states


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
            for pid in descendants(parent.pid)[::-1]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            parent.wait()
        groups.close()
    assert not any(g.path.exists() for g in groups.groups)


@pytest.mark.skipif(can_use_cgroups() is not None, reason="no writable cgroup cpu controller")
def test_the_daemon_s_helper_threads_share_a_group_beside_its_loop_s_and_synthesis_its_own() -> (
    None
):
    # On a Pi the disk writer's fsyncs run on another core while the loop runs; the
    # synthesis thread names itself, perhaps after the watcher first saw it.
    from daemon.speech.synthesis import OS_THREAD_NAME

    code = f"""
import threading, time
from daemon.speech.synthesis import name_os_thread
def helper(): time.sleep(5)
def synthesis(): time.sleep(0.3); name_os_thread({OS_THREAD_NAME!r}); time.sleep(5)
for target in (helper, helper, synthesis):
    threading.Thread(target=target, daemon=True).start()
time.sleep(5)
"""
    groups = ProcessGroups("test-threads", 0.2)
    daemon = None
    try:
        daemon = subprocess.Popen([sys.executable, "-c", code], preexec_fn=groups.join)
        groups.watch(daemon.pid)

        def tasks(group: CpuGroup) -> set[int]:
            return {int(t) for t in (group.path / "tasks").read_text().split()}

        deadline = time.monotonic() + 10
        while len(groups.groups) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)  # the synthesis thread named, and moved
        loop, helpers, synthesis = (tasks(g) for g in groups.groups[:3])
        assert loop == {daemon.pid}
        assert len(helpers) == 2 and daemon.pid not in helpers
        assert len(synthesis) == 1
        assert thread_name(daemon.pid, next(iter(synthesis))) == OS_THREAD_NAME
    finally:
        if daemon is not None:
            daemon.kill()
            daemon.wait()
        groups.close()


def test_a_daemon_that_never_read_its_board_is_reported_with_its_log_threads_and_feed(
    tmp_path: Path,
) -> None:
    # A stand-in for the daemon's process (starting the real one takes seconds): the
    # note must say whether it still runs and where its threads wait, then its end.
    daemon = BudgetDaemon.__new__(BudgetDaemon)
    daemon.log_path = tmp_path / "daemon.log"
    daemon.log_path.write_text("".join(f"line {n}\n" for n in range(30)))
    daemon.events = [(0.0, 0.0, {"type": "connection", "state": "lost", "detail": "x"})]
    daemon.changed = threading.Condition()
    daemon.started = time.monotonic()
    daemon.process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"], text=True
    )
    try:
        deadline = time.monotonic() + 30
        while " S " not in thread_states(daemon.pid) and time.monotonic() < deadline:
            time.sleep(0.05)  # until it sleeps (it starts running, R)
        running = daemon.not_read()
    finally:
        daemon.process.kill()
        daemon.process.wait()
    assert "still running" in running and " S " in running  # the sleeper's state, asleep
    assert "line 29" in running and "line 17" not in running  # the log's last lines
    assert json.dumps(daemon.events[0][2]) in running
    assert f"exited with status {-signal.SIGKILL}" in daemon.not_read()
