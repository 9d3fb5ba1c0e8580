"""An organiser who configures more boards than the computer was measured with hears
it from check-config and at every start, before the round (daemon/service/capacity)."""

from __future__ import annotations

import argparse
import contextlib
import logging
from pathlib import Path

import pytest

from daemon.commands.check_config import check_config
from daemon.config.sections import BoardEntry
from daemon.service import capacity
from daemon.service.capacity import capacity_warnings, this_computer

ZERO = "Raspberry Pi Zero 2 W Rev 1.0"
PI4 = "Raspberry Pi 4 Model B Rev 1.4"


def _chain(n: int, port: str = "/dev/ttyUSB0", first: int = 1) -> list[BoardEntry]:
    return [BoardEntry(id=str(i), bus_port=port, bus_serial=f"{1024 + i:05d}")
            for i in range(first, first + n)]  # fmt: skip


def _speaking(board_id: str, port: str) -> BoardEntry:
    return BoardEntry(id=board_id, port=port, speak=True)


def test_the_device_tree_names_the_pi_and_nothing_elsewhere(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.write_bytes(ZERO.encode() + b"\0")  # the device tree ends it with a NUL
    assert this_computer(model) == ZERO
    assert this_computer(tmp_path / "none") is None  # a PC has no device tree


def test_a_zero_with_the_hall_it_was_measured_with_says_nothing() -> None:
    assert capacity_warnings([*_chain(8), _speaking("s1", "/dev/ttyACM0")], ZERO) == []


def test_a_zero_with_twelve_boards_on_its_chain_is_told_to_keep_to_eight() -> None:
    (warning,) = capacity_warnings([*_chain(12), _speaking("s1", "/dev/ttyACM0")], ZERO)
    assert warning.startswith("12 boards on the chain at /dev/ttyUSB0")
    assert "a Pi Zero 2 W" in warning and "up to 8 boards on a chain" in warning
    assert "presses may show late" in warning and "docs/tournament.md" in warning


def test_a_zero_with_a_second_chain_or_a_second_blind_player_is_told_each() -> None:
    boards = (_chain(4) + _chain(4, "/dev/ttyUSB1", first=5)
              + [_speaking("s1", "/dev/ttyACM0"), _speaking("s2", "/dev/ttyACM1")])  # fmt: skip
    warnings = capacity_warnings(boards, ZERO)
    assert [w.split(":")[0] for w in warnings] == ["2 chains", "2 speaking boards"]


def test_a_pi4_carries_two_chains_of_twelve_and_two_blind_players() -> None:
    hall = (_chain(12) + _chain(12, "/dev/ttyUSB1", first=13)
            + [_speaking("s1", "/dev/ttyACM0"), _speaking("s2", "/dev/ttyACM1")])  # fmt: skip
    assert capacity_warnings(hall, PI4) == []
    (warning,) = capacity_warnings(hall + _chain(1, "/dev/ttyUSB1", first=25), PI4)
    assert warning.startswith("13 boards on the chain at /dev/ttyUSB1") and "a Pi 4" in warning


@pytest.mark.parametrize("model", [None, "Raspberry Pi 5 Model B Rev 1.0"])
def test_a_computer_not_measured_as_short_of_cpu_is_never_warned(model: str | None) -> None:
    assert capacity_warnings(_chain(30), model) == []


def test_a_single_board_is_never_warned() -> None:
    assert capacity_warnings([_speaking("1", "/dev/ttyACM0")], ZERO) == []


def _hall_config(tmp_path: Path, boards: int) -> Path:
    lines = ["boards:"] + [
        f'  - {{id: "{i}", bus_port: /dev/ttyUSB0, bus_serial: "{1024 + i:05d}"}}'
        for i in range(1, boards + 1)
    ]
    config = tmp_path / "hall.yaml"
    config.write_text("\n".join(lines) + "\n")
    return config


def test_check_config_on_a_zero_prints_the_warning_and_still_accepts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "model"
    model.write_bytes(ZERO.encode() + b"\0")
    monkeypatch.setattr(capacity, "MODEL_FILE", model)
    config = _hall_config(tmp_path, 12)
    assert check_config(argparse.Namespace(file=str(config), show=False)) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{config}: OK"
    assert out[1].startswith(f"{config}: warning: 12 boards on the chain at /dev/ttyUSB0")
    model.write_bytes(PI4.encode() + b"\0")  # the same hall on a Pi 4: nothing to say
    assert check_config(argparse.Namespace(file=str(config), show=False)) == 0
    assert capsys.readouterr().out.splitlines() == [f"{config}: OK"]


def test_run_on_a_zero_logs_the_warning_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """``run`` says it in the log (the journal) before it reads any board."""
    from daemon.commands import run

    model = tmp_path / "model"
    model.write_bytes(ZERO.encode() + b"\0")
    monkeypatch.setattr(capacity, "MODEL_FILE", model)
    started: list[object] = []
    monkeypatch.setattr("daemon.app.Daemon", lambda settings, **kw: started.append(settings))
    monkeypatch.setattr("daemon.app.setup_logging", lambda *a, **kw: None)
    args = argparse.Namespace(config=str(_hall_config(tmp_path, 10)), events="", verbose=False,
                              port=None, no_speech=True, storage=None)  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="dgt-bridge"), contextlib.ExitStack() as stack:
        run._make_daemon(args, stack)
    assert started, "the daemon was not made"
    assert any("10 boards on the chain" in r.getMessage() for r in caplog.records)
