"""One composition root: ``replay`` gives exactly the feed the daemon gives live.

The same sensor log goes through ``dgt-bridge replay --fast --config FILE`` and
through the daemon's own pipeline (``Daemon.submit``, journal and feed writer
included, on simulated time); the two feeds must be equal, field by field, the
moves' spoken phrase included.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest

from daemon.app import Daemon
from daemon.boards.pipeline import SimulatedScheduler
from daemon.cli import main
from daemon.config import load_file
from drivers.sensorlog import read_log, write_event
from drivers.sensors import SensorEvent
from drivers.simulators.handling import human_sensor_log
from tests.daemon.feed import Heard

#: Keys that change what the core decides or how a move is phrased.
CONFIGS = {
    "blitz": "clock:\n  time_control: '3+2'\nbroadcast:\n  enabled: false\n",
    "flipped": (
        "board:\n  orientation: flipped\nclock:\n  time_control: '1+0'\n"
        "broadcast:\n  enabled: false\n"
    ),
    "no-clock": "clock:\n  device: none\nbroadcast:\n  enabled: false\n",
}


def config_file(tmp_path: Path, name: str) -> Path:
    """A user's configuration file: the shipped defaults but for these keys."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(CONFIGS[name], encoding="utf-8")
    return path


def daemon_feed(config: Path, events: list[SensorEvent], storage: Path) -> list[dict]:
    """The daemon's own pipeline on simulated time: each event at its time, every
    timer of the core at its deadline, as the loop would have run them."""
    return settings_feed(load_file(config, environ={}), events, storage)


def settings_feed(settings: Any, events: list[SensorEvent], storage: Path) -> list[dict]:
    """``daemon_feed`` for settings already loaded."""
    out = io.StringIO()
    scheduler = SimulatedScheduler()
    daemon = Daemon(
        settings,
        events_out=out,
        speech=False,
        storage_dir=storage,
        resume=False,
        scheduler=scheduler,
    )
    for event in events:
        scheduler.run_before(event.t)
        daemon.submit(event)
    scheduler.run_before(None)
    daemon.journal.close()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def replay_feed(config: Path, log: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    capsys.readouterr()
    assert main(["replay", "--fast", "--config", str(config), str(log)]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def write_log(path: Path, events: list[SensorEvent]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for event in events:
            write_event(handle, event)
    return path


def generated_log(shared: Path, nth: int, *, seed: int, **hands: object) -> list:
    """The ``nth`` standard game of the shared games (not Chess960), played by hand."""
    with (shared / "data" / "games.pgn").open(encoding="utf-8") as handle:
        while True:
            offset = handle.tell()
            headers = chess.pgn.read_headers(handle)
            assert headers is not None, "not that many standard games"
            if "FEN" not in headers and nth == 0:
                break
            nth -= "FEN" not in headers
        handle.seek(offset)
        game = chess.pgn.read_game(handle)
    assert game is not None
    moves = list(game.mainline_moves())
    return human_sensor_log(game.board(), moves, seed=seed, with_clock=True, **hands)


def assert_same_feed(replayed: list[dict], live: list[dict]) -> None:
    assert len(replayed) == len(live)
    for ours, theirs in zip(replayed, live, strict=True):
        assert ours == theirs  # every field: t, type, san, fen, speech, clock, ...


def test_the_real_capture_replays_to_the_daemons_feed(shared, tmp_path, capsys) -> None:
    log = shared / "data" / "dgt-capture-1" / "sensor-log.jsonl"
    config = config_file(tmp_path, "blitz")
    replayed = replay_feed(config, log, capsys)
    live = daemon_feed(config, read_log(str(log)), tmp_path / "games")
    assert_same_feed(replayed, live)
    moves = [e for e in live if e["type"] == "move"]
    text = (shared / "data" / "dgt-capture-1" / "1.uci").read_text()
    played = [word for word in text.split() if not word.endswith(".") and word != "*"]
    final = {m["ply"]: m["uci"] for m in moves}  # a correction replaces its ply
    assert [final[ply] for ply in sorted(final)] == played
    # The phrase is Appendix E's, as the daemon speaks it, not the core's English fallback.
    assert moves[0]["speech"] == "Bauer Eva vier"


@pytest.mark.parametrize(
    ("config_name", "game_index", "hands"),
    [
        ("blitz", 0, {"clock_seconds": 180.0, "increment": 2.0}),
        ("flipped", 3, {"clock_seconds": 60.0, "increment": 0.0, "flipped": True}),
        ("no-clock", 7, {}),
    ],
)
def test_generated_games_replay_to_the_daemons_feed(
    shared, tmp_path, capsys, config_name, game_index, hands
) -> None:
    """Hands with a clock and a time control (a flag may fall: 6.9, 6.11), a board
    standing turned round, a board with no clock."""
    events = generated_log(shared, game_index, seed=game_index + 11, **hands)
    log = write_log(tmp_path / "game.jsonl", events)
    config = config_file(tmp_path, config_name)
    replayed = replay_feed(config, log, capsys)
    live = daemon_feed(config, read_log(str(log)), tmp_path / "games")
    assert_same_feed(replayed, live)
    moves = [e for e in live if e["type"] == "move"]
    assert len(moves) >= 10
    assert all(" to " not in m["speech"] for m in moves)  # not "pawn e2 to e4"


def test_a_core_failure_is_noticed_and_the_board_goes_on(tmp_path, monkeypatch) -> None:
    """A bug in the rules core (here: its settle timer raising once) is logged and
    published as an internal_error notice; the next sensor events are decided."""
    from daemon.boards.pipeline import BoardPipeline
    from daemon.compose import build_board_parts
    from drivers.sensors import BoardDump, SquareChange

    settings = load_file(config_file(tmp_path, "no-clock"), environ={})
    scheduler = SimulatedScheduler()
    feed = Heard()
    pipeline = BoardPipeline("1", build_board_parts(settings), scheduler, outputs=[feed])
    real_tick = pipeline.core.tick
    failures = iter([True])

    def tick_failing_once(t: float) -> list:
        if next(failures, False):
            raise RuntimeError("a bug")
        return real_tick(t)

    monkeypatch.setattr(pipeline.core, "tick", tick_failing_once)
    start = chess.Board().board_fen()
    for event in (
        BoardDump(0.0, start),
        SquareChange(1.0, "e2", None),
        SquareChange(1.2, "e4", "P"),
        SquareChange(5.0, "e7", None),
        SquareChange(5.2, "e5", "p"),
    ):
        scheduler.run_before(event.t)
        pipeline.submit(event)
    scheduler.run_before(None)
    notices = [e for e in feed if e.type == "notice"]
    assert [n.code for n in notices] == ["internal_error"]
    assert [e.uci for e in feed if e.type == "move"][-1] == "e7e5"
