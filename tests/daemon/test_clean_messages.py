"""Bad input on the command line gets one clear message, never a traceback.

Each case is what a new user typed in the first hour: the command is run as they
run it (``python -m daemon ...``), and what it prints must be a message naming
what is wrong, with a usage error's exit status.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.cli import main

ROOT = Path(__file__).resolve().parents[2]


def dgt_bridge(*args: str, cwd: Path, stdin: str | None = None, timeout: float = 30):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(cwd)}
    env.pop("DGT_BRIDGE_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
        input=stdin,
    )


def assert_clean(result, status: int, *needles: str) -> None:
    """One message (no traceback) saying each needle; the expected exit status."""
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    assert result.returncode == status, text
    for needle in needles:
        assert needle in text, text


def test_a_demo_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    result = dgt_bridge("demo", "--port", "99999", cwd=tmp_path)
    assert_clean(result, 2, "--port", "0 to 65535", "99999")


def test_emulate_refuses_a_binary_file_as_replay_does(tmp_path: Path) -> None:
    binary = tmp_path / "not-a-log.jsonl"
    binary.write_bytes(bytes(range(256)) * 4)
    for command in ("emulate --log", "replay"):
        result = dgt_bridge(*command.split(), str(binary), cwd=tmp_path)
        assert_clean(result, 2, "not-a-log.jsonl", "not UTF-8 text")


def test_a_log_line_of_two_kinds_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "two.jsonl"
    log.write_text('{"t": 0, "board": "8/8/8/8/8/8/8/8", "square": "e2", "piece": null}\n')
    for command in ("emulate --log", "replay"):
        result = dgt_bridge(*command.split(), str(log), cwd=tmp_path)
        assert_clean(result, 2, "line 1", "board and square")


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("broadcast:\n  port: 99999\n", "line 2: broadcast.port: a TCP port is 0 to 65535"),
        ("broadcast:\n  port: -5\n", "line 2: broadcast.port: a TCP port is 0 to 65535"),
        ('broadcast:\n  boards:\n    - id: "../x"\n', "line 3: broadcast.boards[0].id: '../x'"),
        ("storage:\n  directory: 42\n", "line 2: storage.directory: expected a path (text)"),
        ("clock:\n  time_control: 90+x\n", "line 2: clock.time_control: cannot read time"),
    ],
)
def test_check_config_and_run_refuse_alike(
    tmp_path: Path, yaml_text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same file/line/key message from both, and run refuses before it starts."""
    config = tmp_path / "bad.yaml"
    config.write_text(yaml_text)
    assert main(["check-config", str(config)]) == 2
    checked = capsys.readouterr()
    assert f"bad.yaml, {message}" in checked.err and "INVALID" in checked.err
    assert main(["run", "--config", str(config), "--no-speech"]) == 2
    assert f"bad.yaml, {message}" in capsys.readouterr().err


# --- closed pipes and full disks: the one handler in daemon/cli.py --------------------

LOG = ROOT / "tests" / "rules" / "logs" / "en_passant_pawn_first.jsonl"


def command(*args: str, cwd: Path, stdout=subprocess.PIPE) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(cwd)}
    env.pop("DGT_BRIDGE_CONFIG", None)
    return subprocess.Popen(
        [sys.executable, "-m", "daemon", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )


def read_three_lines_and_close(process: subprocess.Popen) -> list[str]:
    """What ``| head -3`` does: three lines, then the reading end is closed."""
    lines = [process.stdout.readline() for _ in range(3)]
    process.stdout.close()
    return lines


def test_replay_into_head_stops_quietly(tmp_path: Path) -> None:
    from drivers.sensorlog import write_event
    from drivers.sensors import BoardDump, ClockReport

    log = tmp_path / "ticking.jsonl"  # a clock ticking for 3 s: a feed line every 10 ms
    with log.open("w") as out:
        write_event(out, BoardDump(0.0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"))
        for i in range(300):
            write_event(out, ClockReport(0.01 * i, 600.0 - i, 600.0, "white"))
    replay = command("replay", str(log), cwd=tmp_path)  # real time: writes as it goes
    lines = read_three_lines_and_close(replay)
    assert all(line.startswith("{") for line in lines)
    assert replay.wait(timeout=30) == 141  # as a Unix tool ended by SIGPIPE
    assert replay.stderr.read() == ""


def test_record_into_head_stops_quietly(tmp_path: Path) -> None:
    from drivers.sensors import SquareChange
    from drivers.simulators.emulator import BoardEmulator

    with BoardEmulator(tmp_path) as board:
        record = command("record", "--port", board.port_path, "-", cwd=tmp_path)
        status: int | None = None
        try:
            board.play([SquareChange(0.5 * i, "e2" if i % 2 else "e4", None) for i in range(60)])
            lines = read_three_lines_and_close(record)  # the board goes on reporting
            status = record.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass  # told below, with what it wrote
        finally:
            if record.poll() is None:
                record.kill()
                record.wait()
    # All it said, in every failure's message (issue 28: a failure under load kept
    # only the status, and its cause was lost).
    stderr = record.stderr.read()
    said = f"status {status}; stdout {lines!r}; stderr {stderr!r}"
    assert len(lines) == 3 and all(line.startswith("{") for line in lines), said
    assert status == 141, said
    assert stderr.splitlines() == [f"recording {board.port_path} to - (Ctrl-C to stop)"], said


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_one_line(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        replay = command("replay", "--fast", str(LOG), cwd=tmp_path, stdout=full)
        assert replay.wait(timeout=30) == 1
    assert replay.stderr.read() == "dgt-bridge replay: No space left on device\n"


def test_emulate_makes_a_missing_directory(tmp_path: Path) -> None:
    """As the docs' example (``--dir /tmp/dgt``) expects on a fresh machine."""
    import signal

    where = tmp_path / "not" / "yet"
    emulate = command("emulate", "--dir", str(where), cwd=tmp_path)
    try:
        port = emulate.stdout.readline().strip()
        assert port == str(where / "dgt-board") and Path(port).exists()
    finally:
        emulate.send_signal(signal.SIGTERM)
        assert emulate.wait(timeout=15) == 0
    assert "Traceback" not in emulate.stderr.read()
