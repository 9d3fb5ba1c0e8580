"""A game recorded from the daemon's board replays to the daemon's own feed, clock sides included.

The daemon runs in-process on the emulated board with a DGT 3000 whose White side is
the *right* one (nothing configured: ``clock.sides: auto``), while human hands play a
game. What its link hands the pipeline is written as a sensor log, as ``record``
writes it: the clock's readings are left and right, no colours. ``replay --fast`` of
that log must give the feed the daemon gave live, the ``clock_sides`` it learnt and
every clock time by colour included: the side mapping is made again, from the same
readings and the same board, as the daemon made it.
"""

from __future__ import annotations

import json
from pathlib import Path

import chess
import pytest

from daemon.cli import main
from daemon.config import load_file
from drivers.sensorlog import read_log, write_event
from drivers.sensors import ClockReading, ClockReport, SensorEvent
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.handling import Timing, human_sensor_log
from tests.clock.live_daemon import play_on_emulator

pytestmark = pytest.mark.slow

SPEED = 8.0
BRISK = Timing(think=(0.8, 2.0), before_press=(0.15, 0.4))
UCIS = ["e2e4", "c7c5", "g1f3", "d7d6", "d2d4", "c5d4", "f3d4", "g8f6", "b1c3", "a7a6"]


async def play_live(config: Path, storage: Path) -> tuple[list[dict], list[SensorEvent]]:
    """The daemon's feed of a game played on the emulated board, and its sensor log."""
    moves = [chess.Move.from_uci(u) for u in UCIS]
    hands = human_sensor_log(chess.Board(), moves, seed=9, with_clock=True, timing=BRISK)
    sensed: list[SensorEvent] = []
    with BoardEmulator(storage.parent, white_on_left=False) as emulator:
        feed = await play_on_emulator(
            load_file(config, environ={}),
            emulator,
            hands,
            storage,
            speed=SPEED,
            moves=len(UCIS),
            record=sensed.append,
        )
    return feed, sensed


def to_the_millisecond(feed: list[dict]) -> list[dict]:
    """The log keeps times to the microsecond, a settle deadline sums them again."""
    return [{**event, "t": round(event["t"], 3)} for event in feed]


async def test_a_recorded_game_replays_to_the_daemons_feed(tmp_path, capsys) -> None:
    config = tmp_path / "daemon.yaml"
    config.write_text("broadcast:\n  enabled: false\n", encoding="utf-8")
    live, sensed = await play_live(config, tmp_path / "games")
    log = tmp_path / "game.jsonl"
    with log.open("w", encoding="utf-8") as handle:
        for event in sensed:
            write_event(handle, event)

    recorded = read_log(str(log))
    assert any(isinstance(e, ClockReading) for e in recorded)
    assert not any(isinstance(e, ClockReport) for e in recorded), "no colours in the log"
    assert [e["uci"] for e in live if e["type"] == "move"] == UCIS
    assert [e["white"] for e in live if e["type"] == "clock_sides"] == ["right"]

    capsys.readouterr()
    assert main(["replay", "--fast", "--config", str(config), str(log)]) == 0
    replayed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert to_the_millisecond(replayed) == to_the_millisecond(live)
