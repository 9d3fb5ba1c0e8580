"""Every hand-written sensor log in ``logs/`` replays to the events its header expects.

A log's header says what it reproduces, the settings (``# settings: {...}``) and,
in order, each event expected in the feed (``# expect: {...}``, the fields that
matter). Clock updates are left out of the comparison; nothing else is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rules_support import run

from daemon.rules import RulesSettings
from drivers.sensorlog import read_log

LOGS = sorted((Path(__file__).parent / "logs").glob("*.jsonl"))


def _header(path: Path) -> tuple[dict, list[dict]]:
    settings: dict = {}
    expected: list[dict] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# settings:"):
            settings = json.loads(line.removeprefix("# settings:"))
        elif line.startswith("# expect:"):
            expected.append(json.loads(line.removeprefix("# expect:")))
    return settings, expected


def test_there_are_logs_for_the_dynamics_examples():
    names = {path.stem for path in LOGS}
    for needed in (
        "capture_without_intermediate_state",
        "sliding_queen_c1_c4_capture",
        "rook_first_castling",
        "en_passant_victim_first",
        "en_passant_pawn_first",
    ):
        assert needed in names


@pytest.mark.parametrize("path", LOGS, ids=[p.stem for p in LOGS])
def test_log_replays_to_its_expected_events(path):
    settings, expected = _header(path)
    assert expected, f"{path.name} says nothing about what it expects"
    feed = [e.to_dict() for e in run(read_log(str(path)), RulesSettings(**settings))]
    feed = [event for event in feed if event["type"] != "clock"]
    assert len(feed) == len(expected), json.dumps(feed, indent=1)
    for got, want in zip(feed, expected, strict=True):
        assert {key: got.get(key) for key in want} == want
