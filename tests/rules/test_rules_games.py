"""Measured accuracy: real games played by the human-handling model, and a real capture.

Every move of every game must come out exactly, with no irregularity, with and
without a clock. Run with ``-s`` to see the games-per-second figure.
"""

from __future__ import annotations

import time

import pytest
from rules_support import kinds, lawful_moves, played, run, set_position_request

from daemon.rules import RulesSettings
from drivers.sensorlog import read_log
from drivers.simulators.handling import Timing, human_sensor_log

GAMES = 1000


@pytest.fixture(scope="module")
def games(real_games):
    return real_games


def _capture_moves(shared) -> list[str]:
    text = (shared / "data" / "dgt-capture-1" / "1.uci").read_text()
    return [word for word in text.split() if len(word) in (4, 5) and word[0] in "abcdefgh"]


def test_real_capture_with_its_clock_gives_exactly_its_57_moves(shared):
    events = read_log(str(shared / "data" / "dgt-capture-1" / "sensor-log.jsonl"))
    out = run(events, RulesSettings(use_clock=True))
    expected = _capture_moves(shared)
    assert len(expected) == 57
    assert played(out) == expected
    assert kinds(out) == []
    assert not [e for e in out if e.type == "move" and e.correction]
    assert all(e.clock is not None for e in out if e.type == "move")


def test_real_capture_without_the_clock_gives_the_same_57_moves(shared):
    """Its times are right to about a second; the settle time still separates the moves."""
    events = read_log(str(shared / "data" / "dgt-capture-1" / "sensor-log.jsonl"))
    out = run(events, RulesSettings(use_clock=False))
    assert played(out) == _capture_moves(shared)
    assert kinds(out) == []
    assert not [e for e in out if e.type == "move" and e.correction]
    assert not [e for e in out if e.type == "clock"]


@pytest.mark.parametrize("settle", [0.3, 0.45, 0.8, 1.2])
def test_real_capture_without_the_clock_at_other_settle_times(shared, settle):
    """Shorter: a rook's pause on e1 during Ra1-f1 (0.53 s) is announced, then corrected."""
    events = read_log(str(shared / "data" / "dgt-capture-1" / "sensor-log.jsonl"))
    out = run(events, RulesSettings(use_clock=False, settle_time=settle))
    assert played(out) == _capture_moves(shared)
    assert kinds(out) == []
    corrected = [(e.ply, e.uci) for e in out if e.type == "move" and e.correction]
    assert corrected == ([(35, "a1f1")] if settle < 0.53 else [])


def test_a_thousand_real_games_every_move_recognised_with_and_without_clock(games):
    assert len(games) == GAMES
    assert sum(1 for g in games if g.start.chess960) == 8
    failures = []
    started = time.perf_counter()
    events_fed = cut_short = 0
    for game in games:
        with_clock = game.index % 2 == 0
        log = human_sensor_log(game.start, game.moves, seed=game.index, with_clock=with_clock)
        events = set_position_request(game) + log
        events_fed += len(events)
        out = run(events, RulesSettings(chess960=True))
        expected = lawful_moves(game)
        cut_short += len(expected) < len(game.moves)
        corrections = [e for e in out if e.type == "move" and e.correction]
        if played(out) != expected or kinds(out) or corrections:
            failures.append((game.index, with_clock, kinds(out)[:3], len(played(out))))
    elapsed = time.perf_counter() - started
    print(
        f"\n{len(games)} games ({events_fed} sensor events) generated and replayed in "
        f"{elapsed:.1f} s: {len(games) / elapsed:.0f} games/s, "
        f"{events_fed / elapsed:.0f} events/s; {cut_short} games end early in a dead position"
    )
    assert failures == []


def test_fast_hands_moves_inside_one_settle_window_are_all_recognised(games):
    """Bullet speed: think times of 0.1-0.9 s, replies often before the settle time."""
    fast = Timing(think=(0.1, 0.9))
    failures = []
    for game in games[:150]:
        with_clock = game.index % 3 == 0
        log = human_sensor_log(
            game.start, game.moves, seed=game.index + 77, with_clock=with_clock, timing=fast
        )
        out = run(set_position_request(game) + log, RulesSettings(chess960=True))
        corrections = [e for e in out if e.type == "move" and e.correction]
        if played(out) != lawful_moves(game) or kinds(out) or corrections:
            failures.append((game.index, with_clock, kinds(out)[:3]))
    assert failures == []


def test_every_move_event_carries_the_position_python_chess_computes(games):
    for game in games[:60]:
        out = run(
            set_position_request(game)
            + human_sensor_log(game.start, game.moves, seed=game.index, with_clock=False),
            RulesSettings(chess960=True),
        )
        board = game.start.copy()
        for event, move in zip([e for e in out if e.type == "move"], game.moves, strict=True):
            assert event.san == board.san(move)
            board.push(move)
            assert event.fen == board.fen(), (game.index, event.ply)
        ends = [e for e in out if e.type == "game_end"]
        if board.is_checkmate():
            assert [(e.reason, e.result) for e in ends] == [("checkmate", board.result())]
        elif board.is_stalemate() or board.is_insufficient_material():
            assert [e.result for e in ends] == ["1/2-1/2"]
        else:
            assert ends == []


def test_a_board_turned_round_reports_true_squares(games):
    game = next(g for g in games if not g.needs_set_position)
    log = human_sensor_log(game.start, game.moves, seed=3, with_clock=True, flipped=True)
    assert log[0].placement.startswith("RNBKQBNR")  # a turned board sees white at the top
    out = run(log)
    assert [e.flipped for e in out if e.type == "game_start"] == [True]
    assert played(out) == [m.uci() for m in game.moves]
    assert kinds(out) == []


def test_chess960_games_castle_by_their_own_rules(games):
    chess960_games = [g for g in games if g.start.chess960]
    castled = 0
    for game in chess960_games:
        board = game.start.copy()
        for move in game.moves:
            castled += board.is_castling(move)
            board.push(move)
        out = run(
            set_position_request(game)
            + human_sensor_log(game.start, game.moves, seed=7, with_clock=False),
            RulesSettings(chess960=True),
        )
        assert [e.chess960 for e in out if e.type == "game_start"] == [True]
        assert played(out) == [m.uci() for m in game.moves]
        assert kinds(out) == []
    assert castled > 0  # the test sees Chess960 castling, not only ordinary moves
