"""``config/mosquitto/make-logins.sh``: every board its login, the ACL printed, and
the files the broker reads left readable by the broker's group (Mosquitto, once it
is the ``mosquitto`` user, refused the docs' broker.key, made by openssl for root
alone, and did not start)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "config" / "mosquitto" / "make-logins.sh"


@pytest.mark.skipif(shutil.which("mosquitto_passwd") is None, reason="mosquitto is not installed")
def test_make_logins_gives_every_board_a_login_and_the_broker_its_key(tmp_path: Path) -> None:
    key = tmp_path / "broker.key"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    key.chmod(0o600)  # as openssl writes it
    result = subprocess.run(
        ["sh", str(SCRIPT), "club-open", "1", "3"],
        env={**os.environ, "PASSWORDS": str(tmp_path / "passwords")},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    leaves = "".join(f"topic write dgt-bridge/club-open/+/3/{leaf}\n"
                     for leaf in ("events", "state", "pgn", "status"))  # fmt: skip
    assert f"user board-3\n{leaves}" in result.stdout  # its four topics, nothing else
    logins = [line.split()[0] for line in result.stderr.splitlines()]
    assert logins == ["relay", "board-1", "board-2", "board-3"]
    for path in (key, tmp_path / "passwords"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o640, path.name


@pytest.mark.skipif(shutil.which("mosquitto_passwd") is None, reason="mosquitto is not installed")
def test_with_the_evenings_rounds_a_board_writes_in_those_rounds_only(tmp_path: Path) -> None:
    """A login may then keep at most four retained messages a round on the broker,
    not one on every topic below its board's (issue 24)."""
    result = subprocess.run(
        ["sh", str(SCRIPT), "club-open", "2", "2"],
        env={**os.environ, "PASSWORDS": str(tmp_path / "passwords"), "ROUNDS": "3 4"},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    writes = [line for line in result.stdout.splitlines() if line.startswith("topic write")]
    leaves = ("events", "state", "pgn", "status")
    assert writes == [f"topic write dgt-bridge/club-open/{r}/2/{leaf}"
                      for r in ("3", "4") for leaf in leaves]  # fmt: skip
