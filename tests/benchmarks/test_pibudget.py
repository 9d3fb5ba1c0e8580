"""The Pi-budget runner's plumbing: its calibration program and its CPU group.

The budget's figures are the benchmark's business (``benchmarks/pibudget.py``); what
is checked here is what they rest on: the n-body used to compare this machine with a
published Pi 4 figure computes the n-body (the Benchmarks Game's energies), and a CPU
group really holds a process to its fraction of a core, and is removed afterwards.
"""

from __future__ import annotations

import time

import pytest

from benchmarks.pibudget import CpuGroup, can_use_cgroups, nbody, nbody_seconds_per_step


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
