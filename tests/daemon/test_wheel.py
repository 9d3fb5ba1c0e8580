"""The installed wheel works from any directory, without the source tree."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv (with the system's packages for the dependencies) holding only the wheel."""
    base = tmp_path_factory.mktemp("wheel")
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            *isolation,
            str(ROOT),
            "-w",
            str(base / "dist"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if built.returncode != 0:
        pytest.skip(f"cannot build the wheel here (no hatchling, offline?): {built.stderr[-300:]}")
    wheel = next((base / "dist").glob("dgt_bridge-*.whl"))
    venv = base / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    # The dependencies come from the interpreter running the tests (a CI venv or the
    # system), after the venv's own site-packages, so the wheel's package wins over
    # any editable install of the source tree.
    own = next((venv / "lib").glob("python3*/site-packages"))
    dependencies = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    (own / "_test_dependencies.pth").write_text("\n".join(dependencies) + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    return venv


def run(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DGT_BRIDGE", "PYTHONPATH"))}
    return subprocess.run(
        [str(venv / "bin" / "dgt-bridge"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )


@pytest.mark.slow
def test_the_wheel_carries_its_defaults_and_every_command_works_elsewhere(
    installed: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shipped = subprocess.run(
        [
            str(installed / "bin" / "python"),
            "-c",
            "from daemon.files import resources; print(resources.default_config_file())",
        ],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        timeout=60,
    )
    path = Path(shipped.stdout.strip())
    assert path.is_file() and "_shipped_config" in path.parts, shipped.stderr
    assert ROOT not in path.parents, "the installed package must not read the source tree"

    top = run(installed, elsewhere, "--help")
    assert top.returncode == 0
    for command in ("run", "demo", "check-config"):
        assert command in top.stdout
    helped = run(installed, elsewhere, "run", "--help")
    assert helped.returncode == 0 and "usage: dgt-bridge run" in helped.stdout

    assert run(installed, elsewhere, "check-config", str(path)).returncode == 0
    mine = elsewhere / "mine.yaml"
    mine.write_text("board:\n  port: /dev/dgt-board\nspeech:\n  vocabulary: en\n")
    checked = run(installed, elsewhere, "check-config", str(mine))
    assert checked.returncode == 0 and "OK" in checked.stdout, checked.stderr
    mine.write_text("board:\n  port: /dev/dgt-board\n  baud: 9600\n")
    refused = run(installed, elsewhere, "check-config", str(mine))
    assert refused.returncode == 2 and "line 3: board.baud: unknown key" in refused.stderr
