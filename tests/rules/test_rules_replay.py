"""``dgt-bridge replay``: the event feed on stdout, clear errors, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from daemon.cli import main

LOGS = Path(__file__).parent / "logs"


def _feed(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_fast_replay_prints_the_feed_as_json_lines(capsys):
    assert main(["replay", "--fast", str(LOGS / "rook_first_castling.jsonl")]) == 0
    feed = _feed(capsys.readouterr().out)
    assert [e["type"] for e in feed if e["type"] != "clock"] == [
        "game_start",
        "move",
        "irregularity",
    ]
    assert feed[-1]["kind"] == "castling_rook_first"


def test_no_clock_option_ignores_clock_lines(capsys):
    assert main(["replay", "--fast", "--no-clock", str(LOGS / "rook_first_castling.jsonl")]) == 0
    feed = _feed(capsys.readouterr().out)
    assert not [e for e in feed if e["type"] == "clock"]
    assert [e["uci"] for e in feed if e["type"] == "move"][-1] == "e1g1"


def test_settle_option_changes_what_a_pause_means(capsys):
    log = str(LOGS / "rook_first_castling_no_clock.jsonl")
    assert main(["replay", "--fast", "--settle", "2.5", log]) == 0
    moves = [e for e in _feed(capsys.readouterr().out) if e["type"] == "move"]
    assert [(m["uci"], m["correction"]) for m in moves] == [("e1g1", False)]


def test_casual_option_allows_takebacks(tmp_path, capsys):
    log = tmp_path / "takeback.jsonl"
    lines = [
        {"t": 0.0, "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"},
        {"t": 1.0, "square": "e2", "piece": None},
        {"t": 1.2, "square": "e4", "piece": "P"},
        {"t": 3.0, "square": "e7", "piece": None},
        {"t": 3.2, "square": "e5", "piece": "p"},
        {"t": 5.0, "square": "e5", "piece": None},
        {"t": 5.2, "square": "e7", "piece": "p"},
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["replay", "--fast", "--casual", str(log)]) == 0
    assert [e["ply"] for e in _feed(capsys.readouterr().out) if e["type"] == "takeback"] == [2]
    assert main(["replay", "--fast", str(log)]) == 0
    tournament = _feed(capsys.readouterr().out)
    assert not [e for e in tournament if e["type"] == "takeback"]


def test_real_time_replay_waits_for_the_log_times(tmp_path, capsys):
    log = tmp_path / "short.jsonl"
    log.write_text(
        '{"t": 0.0, "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}\n'
        '{"t": 0.1, "square": "e2", "piece": null}\n'
        '{"t": 0.2, "square": "e4", "piece": "P"}\n'
    )
    started = time.monotonic()
    assert main(["replay", "--settle", "0.3", str(log)]) == 0
    assert time.monotonic() - started >= 0.45  # 0.2 s of log, then the 0.3 s settle time
    assert [e["uci"] for e in _feed(capsys.readouterr().out) if e["type"] == "move"] == ["e2e4"]


def test_real_time_replay_counts_from_the_first_line_not_from_zero(tmp_path, capsys):
    log = tmp_path / "late.jsonl"
    log.write_text(
        '{"t": 5000.0, "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}\n'
        '{"t": 5000.1, "square": "e2", "piece": null}\n'
    )
    started = time.monotonic()
    assert main(["replay", str(log)]) == 0
    assert time.monotonic() - started < 30
    assert [e["type"] for e in _feed(capsys.readouterr().out)] == ["game_start"]


def test_malformed_line_names_the_line_and_exits_non_zero(tmp_path, capsys):
    log = tmp_path / "bad.jsonl"
    log.write_text(
        '{"t": 0.0, "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}\n'
        "# a comment\n"
        '{"t": 1.0, "square": "e9", "piece": null}\n'
    )
    assert main(["replay", "--fast", str(log)]) == 2
    captured = capsys.readouterr()
    assert "line 3" in captured.err and "e9" in captured.err
    assert "Traceback" not in captured.err
    assert [e["type"] for e in _feed(captured.out)] == ["game_start"]  # what came before stays


def test_missing_file_is_a_clear_message(tmp_path, capsys):
    assert main(["replay", "--fast", str(tmp_path / "nowhere.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["--settle", "0"], ["--settle", "-1"]])
def test_bad_settle_time_is_refused(args, capsys):
    assert main(["replay", "--fast", *args, str(LOGS / "rook_first_castling.jsonl")]) == 2
    assert "--settle" in capsys.readouterr().err


def test_console_script_entry_runs_replay():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "daemon",
            "replay",
            "--fast",
            str(LOGS / "en_passant_pawn_first.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 0, result.stderr
    assert [e["uci"] for e in _feed(result.stdout) if e["type"] == "move"] == ["d7d5", "e5d6"]
