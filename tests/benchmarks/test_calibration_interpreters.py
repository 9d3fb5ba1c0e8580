"""The budgets' calibration times the n-body in the Pi's own interpreters.

The published Pi 4 figure was measured in January 2020, in CPython 3.7 or 2.7; ours is
3.11, which runs the n-body about 1.4x faster. Timed in 3.11, every Pi budget came out
that much too small (``benchmarks/nbody.py``). What is checked here: the program computes
the n-body in every interpreter it is timed in, the old ones are found where pyenv or
the PATH has them, the fastest of them sets the budget, and without any the benchmark
says what to do instead of measuring against the wrong interpreter.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import nbody as calibration
from benchmarks import pibudget

INTERPRETERS = [sys.executable, *calibration.era_pythons()]


@pytest.mark.parametrize("python", INTERPRETERS)
def test_the_program_computes_the_n_body_in_each_interpreter_it_is_timed_in(python: str) -> None:
    # The Benchmarks Game gives -0.169087605 after 1000 steps.
    done = subprocess.run(
        [python, str(calibration.PROGRAM), "1000"],
        capture_output=True,
        text=True,
        check=True,
    )
    cpu, wall, energy = (float(v) for v in done.stdout.split())
    assert round(energy, 9) == -0.169087605
    assert cpu > 0 and 0 < wall < 10


def _fake_python(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.symlink_to(sys.executable)


def test_the_newest_release_of_each_old_interpreter_is_found_in_pyenv(tmp_path: Path) -> None:
    versions = tmp_path / "versions"
    for release in ("3.7.3", "3.7.16", "3.7.9", "2.7.18", "3.11.7"):
        _fake_python(versions / release / "bin" / "python")
    (versions / "3.7.20").mkdir()  # a release without its interpreter (a failed build)
    found = calibration.era_pythons(tmp_path)
    assert found == [
        str(versions / "3.7.16" / "bin" / "python"),
        str(versions / "2.7.18" / "bin" / "python"),
    ]


def test_an_old_interpreter_on_the_path_is_found_without_pyenv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "python2.7"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert calibration.era_pythons(tmp_path / "no-pyenv") == [str(script)]


def test_without_an_old_interpreter_the_benchmark_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(calibration, "era_pythons", lambda: [])
    with pytest.raises(SystemExit) as stopped:
        calibration.calibration_pythons("era")
    message = str(stopped.value)
    assert "pyenv install 3.7" in message and "--calibration-python running" in message
    assert calibration.calibration_pythons("running") == [sys.executable]
    assert calibration.calibration_pythons(f"{sys.executable},{calibration.RUNNING}") == [
        sys.executable,
        sys.executable,
    ]
    with pytest.raises(SystemExit, match="no interpreter at /no/python"):
        calibration.calibration_pythons("/no/python")


def test_the_fastest_of_the_pi_s_interpreters_sets_the_budget(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The smaller budget where it is not known which of the two the Pi ran.
    per_step = {"/old/python3.7": 5.6e-6, "/old/python2.7": 5.2e-6}
    monkeypatch.setattr(pibudget, "calibration_pythons", lambda asked: list(per_step))
    monkeypatch.setattr(pibudget, "seconds_per_step", lambda python, steps: per_step[python])
    monkeypatch.setattr(pibudget, "interpreter_name", os.path.basename)
    (budget,) = pibudget.calibrated_budgets("pi4-cores", 1000)
    pi4_step = pibudget.PI4_NBODY_SECONDS / pibudget.PI4_NBODY_STEPS
    assert budget.fraction == pytest.approx(5.2e-6 / pi4_step)
    assert "python2.7" in capsys.readouterr().out


def test_budgets_pinned_by_hand_need_no_old_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    # A before/after pair at a pinned budget runs wherever the benchmark runs.
    def none_here(asked: str) -> list[str]:
        raise SystemExit("no old interpreter here")

    monkeypatch.setattr(pibudget, "calibration_pythons", none_here)
    budgets = pibudget.calibrated_budgets(
        "pi4-cores,zero2w-cores,full", 1000, zero2w_pinned=4.7, pi4_pinned=14.2
    )
    assert [b.fraction for b in budgets] == [pytest.approx(0.142), pytest.approx(0.047), None]
    with pytest.raises(SystemExit):  # the Pi 4's budget is still the calibration's
        pibudget.calibrated_budgets("pi4-cores", 1000, zero2w_pinned=4.7)
