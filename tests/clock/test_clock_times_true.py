"""The times a blind player hears are the clock's own, at every press.

The daemon in-process, with the shipped configuration (no time control), reads the
emulated DGT 3000 while it plays a game moved by human hands on a 90+30 clock.
At each press the clock shows the mover's time with the increment added; the
daemon must report those times in the feed, answer ``say clock`` with them and
write them as ``[%clk]`` in the PGN, from the first press on (the increment is
learnt from the clock, not held back as an implausible rise).
"""

from __future__ import annotations

import copy
import io
import itertools
import json
import math
from dataclasses import replace
from pathlib import Path

import chess
import chess.pgn
import pytest

from daemon.config import load_file
from daemon.files import resources
from daemon.game.record import GameRecord, format_clock
from daemon.speech.answers import answer
from daemon.speech.vocabulary import load_vocabulary
from drivers.sensors import ClockReport
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.handling import Timing, human_sensor_log
from tests.clock.live_daemon import play_on_emulator

pytestmark = pytest.mark.slow

SPEED = 8.0
BRISK = Timing(think=(0.6, 2.5), before_press=(0.15, 0.4))
#: A Ruy Lopez: 16 plies, no check, no capture that ends anything.
UCIS = [
    *("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6"),
    *("e1g1", "f8e7", "f1e1", "b7b5", "a4b3", "d7d6", "c2c3", "e8g8"),
]


def shown(seconds: float) -> int:
    """What a DGT clock shows for a time (whole seconds, rounded up, as it counts down)."""
    return math.ceil(seconds - 1e-6)


def press_reports(log: list) -> list[ClockReport]:
    """The clock as it stands right after each press: the report handing the run over."""
    reports = [e for e in log if isinstance(e, ClockReport)]
    return [
        now
        for before, now in itertools.pairwise(reports)
        if before.running and now.running != before.running
    ]


async def play(tmp_path: Path) -> tuple[list[dict], list, Path]:
    settings = load_file(resources.default_config_file(), {})
    assert settings.clock.time_control in (None, "")  # the shipped configuration: none
    settings.broadcast = replace(settings.broadcast, enabled=False)
    moves = [chess.Move.from_uci(u) for u in UCIS]
    log = human_sensor_log(chess.Board(), moves, seed=5, with_clock=True, timing=BRISK)
    storage = tmp_path / "games"
    with BoardEmulator(tmp_path) as emulator:
        feed = await play_on_emulator(
            settings, emulator, log, storage, speed=SPEED, moves=len(UCIS)
        )
    return feed, log, storage


async def test_reported_spoken_and_written_times_are_the_clocks_own(tmp_path: Path) -> None:
    feed, log, storage = await play(tmp_path)
    truth = press_reports(log)
    moves = [e for e in feed if e["type"] == "move"]
    assert [m["uci"] for m in moves] == UCIS
    assert len(truth) == len(moves)

    # The feed: each move's clock is the clock at its press.
    reported = [(m["clock"]["white"], m["clock"]["black"]) for m in moves]
    assert reported == [(shown(r.white), shown(r.black)) for r in truth]

    # Spoken: ``say clock`` right after each press answers the clock's times.
    vocabulary = load_vocabulary(load_file(resources.default_config_file(), {}).speech.vocabulary)
    record = GameRecord()
    heard, expected = [], []
    presses = iter(truth)
    for event in feed:
        record.apply(json.loads(json.dumps(event)))
        if event["type"] == "move":
            # E.9.d's answer (moves completed, time used) with the time left added
            heard.append(answer("clock", {}, record, vocabulary, time_left=True))
            true = next(presses)
            honest = copy.deepcopy(record)  # the same game, the clock's own times
            honest.clock = {"white": shown(true.white), "black": shown(true.black)}
            expected.append(answer("clock", {}, honest, vocabulary, time_left=True))
    assert heard == expected

    # Written: the PGN's [%clk] is the mover's time after his press.
    pgn_path = next(storage.glob("*.pgn"))
    game = chess.pgn.read_game(io.StringIO(pgn_path.read_text(encoding="utf-8")))
    written = [node.comment for node in game.mainline()]
    movers = ["white", "black"] * (len(truth) // 2)
    assert written == [
        f"[%clk {format_clock(shown(getattr(report, mover)))}]"
        for report, mover in zip(truth, movers, strict=True)
    ]
