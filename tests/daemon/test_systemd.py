"""The Pi side: the unit files, the installer, sd_notify and the journal's log format."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYSTEMD = ROOT / "systemd"


def test_unit_has_what_the_pi_needs() -> None:
    unit = (SYSTEMD / "dgt-bridge.service").read_text()
    for line in (
        "Type=notify",
        "Restart=on-failure",
        "User=dgt-bridge",
        "SupplementaryGroups=dialout audio",
        "StateDirectory=dgt-bridge",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "NoNewPrivileges=yes",
        "PrivateTmp=yes",
        "Environment=PYTHONOPTIMIZE=2",  # smaller on a Pi; the installer compiles for it
    ):
        assert line in unit.splitlines(), line
    assert any(line.startswith("WatchdogSec=") for line in unit.splitlines())


def test_unit_bounds_files_and_tasks_and_says_why() -> None:
    unit = (SYSTEMD / "dgt-bridge.service").read_text()
    lines = unit.splitlines()
    files = next(line for line in lines if line.startswith("LimitNOFILE="))
    # More than the default web limit (1000 connections) plus the 64 kept back.
    assert int(files.split("=")[1]) >= 1000 + 64
    assert any(line.startswith("TasksMax=") for line in lines)
    comments = unit[: unit.index("TasksMax=")]
    assert "descriptor" in comments and "journal" in comments and "Tasks" in comments


def test_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    unit = (SYSTEMD / "dgt-bridge.service").read_text()
    # The venv does not exist here: point ExecStart at a program that does.
    unit = unit.replace("/opt/dgt-bridge/venv/bin/dgt-bridge", shutil.which("true") or "/bin/true")
    (tmp_path / "dgt-bridge.service").write_text(unit)
    result = subprocess.run(
        [analyze, "verify", str(tmp_path / "dgt-bridge.service")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "dgt-bridge.service" not in result.stderr, result.stderr


def test_udev_rule_links_dgt_boards_for_dialout() -> None:
    rules = [
        line
        for line in (SYSTEMD / "99-dgt-board.rules").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    tty = [r for r in rules if 'SUBSYSTEM=="tty"' in r]
    assert tty and 'ATTRS{idVendor}=="045b"' in tty[0]
    assert 'SYMLINK+="dgt-board"' in tty[0] and 'GROUP="dialout"' in tty[0]
    udevadm = shutil.which("udevadm")
    if (
        udevadm
        and "verify" in subprocess.run([udevadm, "--help"], capture_output=True, text=True).stdout
    ):
        check = subprocess.run(
            [udevadm, "verify", str(SYSTEMD / "99-dgt-board.rules")], capture_output=True
        )
        assert check.returncode == 0, check.stderr


def test_installer_syntax_and_dry_run_changes_nothing(tmp_path: Path) -> None:
    assert subprocess.run(["bash", "-n", str(SYSTEMD / "install.sh")]).returncode == 0
    result = subprocess.run(
        ["bash", str(SYSTEMD / "install.sh"), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    plan = result.stdout
    for step in (
        "espeak-ng",
        "useradd --system",
        "dialout,audio",
        "venv /opt/dgt-bridge/venv",
        "/etc/systemd/system/dgt-bridge.service",
        "/etc/udev/rules.d/99-dgt-board.rules",
        "/etc/dgt-bridge/dgt-bridge.yaml",
        "systemctl enable dgt-bridge.service",
    ):
        assert step in plan, step


def _install(destdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DESTDIR": str(destdir)}
    return subprocess.run(
        ["bash", str(SYSTEMD / "install.sh"), "--no-venv", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_installer_is_idempotent_keeps_a_changed_config_and_uninstalls(tmp_path: Path) -> None:
    root = tmp_path / "root"
    first = _install(root)
    assert first.returncode == 0, first.stderr
    config = root / "etc/dgt-bridge/dgt-bridge.yaml"
    unit = root / "etc/systemd/system/dgt-bridge.service"
    rule = root / "etc/udev/rules.d/99-dgt-board.rules"
    assert config.is_file() and unit.is_file() and rule.is_file()
    assert unit.read_text() == (SYSTEMD / "dgt-bridge.service").read_text()

    config.write_text(config.read_text().replace("port: auto", "port: /dev/dgt-board"))
    games = root / "var/lib/dgt-bridge"
    games.mkdir(parents=True)
    (games / "20260101-120000-01.pgn").write_text("1. e4 *\n")
    again = _install(root)
    assert again.returncode == 0, again.stderr
    assert "port: /dev/dgt-board" in config.read_text(), "the user's config was overwritten"
    assert (root / "etc/dgt-bridge/dgt-bridge.yaml.dist").is_file()

    gone = _install(root, "--uninstall")
    assert gone.returncode == 0, gone.stderr
    assert not config.exists() and not unit.exists() and not rule.exists()
    assert (games / "20260101-120000-01.pgn").is_file(), "the games must survive"


def test_systemctl_status_shows_the_web_limits(tmp_path: Path) -> None:
    """STATUS= (what systemctl status prints) carries the connection limits once the
    page is up (READY comes before it: the first status says it is starting)."""
    address = str(tmp_path / "notify.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(address)
    listener.settimeout(1.0)
    env = {
        **os.environ,
        "NOTIFY_SOCKET": address,
        "DGT_BRIDGE_BROADCAST__ADDRESS": "127.0.0.1",
        "DGT_BRIDGE_BROADCAST__PORT": "0",
        "DGT_BRIDGE_BROADCAST__MAX_CONNECTIONS_PER_ADDRESS": "7",
        "DGT_BRIDGE_STORAGE__DIRECTORY": str(tmp_path / "games"),
        "DGT_BRIDGE_CONFIG": str(ROOT / "config" / "dgt-bridge.yaml"),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "daemon", "run", "--port", str(tmp_path / "no-board"),
         "--no-speech"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    statuses: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any("connections" in s for s in statuses):
            try:
                message = listener.recv(4096).decode()
            except TimeoutError:
                if process.poll() is not None:
                    break
                continue
            statuses += [s for s in message.splitlines() if s.startswith("STATUS=")]
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        listener.close()
    assert statuses, output
    assert "live page starting" in statuses[0], statuses  # READY, the page not yet up
    assert "connections (7 per address" in statuses[-1] and "files)" in statuses[-1], statuses
    assert "live page http://127.0.0.1:" in statuses[-1], statuses


def test_daemon_notifies_ready_and_pings_the_watchdog(tmp_path: Path) -> None:
    """As the unit runs it: PYTHONOPTIMIZE=2 (no asserts, no docstrings) included."""
    address = str(tmp_path / "notify.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(address)
    listener.settimeout(1.0)
    env = {
        **os.environ,
        "NOTIFY_SOCKET": address,
        "WATCHDOG_USEC": "200000",  # ping every 0.1 s
        "PYTHONOPTIMIZE": "2",
        "JOURNAL_STREAM": "8:12345",
        "DGT_BRIDGE_BROADCAST__ENABLED": "false",
        "DGT_BRIDGE_STORAGE__DIRECTORY": str(tmp_path / "games"),
        "DGT_BRIDGE_CONFIG": str(ROOT / "config" / "dgt-bridge.yaml"),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daemon",
            "run",
            "--port",
            str(tmp_path / "no-board"),
            "--no-speech",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=ROOT,
    )
    messages: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                messages.append(listener.recv(4096).decode())
            except TimeoutError:
                if process.poll() is not None:
                    break
                continue
            ready = [m for m in messages if "READY=1" in m.splitlines()]
            pings = [m for m in messages if "WATCHDOG=1" in m.splitlines()]
            if ready and len(pings) >= 3:
                break
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
        listener.settimeout(0.2)
        while True:
            try:
                messages.append(listener.recv(4096).decode())
            except TimeoutError:
                break
    finally:
        if process.poll() is None:
            process.kill()
        listener.close()
    assert any("READY=1" in m.splitlines() for m in messages), (messages, output)
    assert sum("WATCHDOG=1" in m.splitlines() for m in messages) >= 3, messages
    assert process.returncode == 0, output
    assert "STOPPING=1" in messages[-1].splitlines(), messages[-3:]
    # Under systemd (JOURNAL_STREAM) the log lines carry a priority, not a timestamp.
    lines = [line for line in output.splitlines() if line.strip()]
    assert lines and all(line.startswith("<") for line in lines), output
    assert any("dgt-bridge running" in line for line in lines), output
