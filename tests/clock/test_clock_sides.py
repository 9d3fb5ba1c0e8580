"""Whose clock side is whose, learnt from evidence (``clock.sides: auto``).

The rules core completes a move at its mover's press, so a swapped mapping makes
every move wait for the next press: announced a press late, a game's last move
never recorded. These tests play the clock path of the daemon on simulated time
(``clock_pipeline``): the hands' clock as a DGT 3000 reports it, left and right.
"""

from __future__ import annotations

from dataclasses import replace

import chess
import chess.pgn
import pytest

from benchmarks.daemonrun import shipped_games
from daemon.clock.sides import SideMapper
from daemon.game.events import GameEnd
from drivers.clock.dgt3000 import DgtClockInterpreter
from drivers.sensors import BoardDump, ClockReport, SensorEvent
from drivers.simulators.handling import Hands, human_sensor_log
from tests.clock.clock_pipeline import ClockPipeline, bwtime

START = chess.Board().board_fen()


def presses(log: list[SensorEvent]) -> list[float]:
    """When each move's press was made (the running side changes)."""
    times, running = [], None
    for event in log:
        if isinstance(event, ClockReport) and event.running is not None:
            if running is not None and event.running != running:
                times.append(event.t)
            running = event.running
    return times


def check_every_move_at_its_own_press(
    feed: list[dict], moves: list[chess.Move], log: list[SensorEvent], first_press: int = 0
) -> None:
    """Every move recorded once, the last one too, each before the next move's press
    (the log's presses from ``first_press`` on are the moves' own)."""
    decided = [e for e in feed if e["type"] == "move" and not e["correction"]]
    assert [e["uci"] for e in decided] == [m.uci() for m in moves]
    pressed = presses(log)[first_press:]
    for move, next_press in zip(decided, pressed[1:], strict=False):
        assert move["t"] < next_press, f"ply {move['ply']} announced a press late"
    assert not [e for e in feed if e["type"] == "irregularity"]


def test_a_clock_running_on_blacks_side_at_the_setup_misleads_nobody() -> None:
    """The clock still runs on Black's side (the right) as the pieces stand ready;
    Black starts White's clock, White plays and presses: White's side is the left.
    The first side seen running (Black's) and the first press (Black's) prove
    nothing; the press after White's move does."""
    hands = Hands(chess.Board(), seed=3, with_clock=False)
    hands.with_clock = True
    hands.running = "black"
    hands.clock_report()  # running as the pieces are set up
    hands.wait(2.0)
    hands.press()  # Black starts White's clock
    moves = [chess.Move.from_uci(u) for u in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5")]
    for move in moves:
        hands.think()
        hands.play(move, {"plain"})
        hands.wait(0.3)
        hands.press()
    table = ClockPipeline(white_on_left=True)
    table.play(hands.events)
    table.advance(hands.t + 5)
    assert table.sides.white_side == "left"
    assert [e["white"] for e in table.of("clock_sides")] == ["left"]
    check_every_move_at_its_own_press(table.feed, moves, hands.events, first_press=1)


@pytest.mark.parametrize("white_on_left", [True, False])
def test_a_press_that_contradicts_the_sides_is_reported_and_nothing_acts_on_it(
    white_on_left: bool,
) -> None:
    """A mapping taken from the journal is wrong (the clock was turned round while
    the daemon was down): White's press stops the side taken as Black's. That is
    reported, the clock counts as stopped, and the sides are learnt again."""
    moves = [chess.Move.from_uci(u) for u in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6")]
    log = human_sensor_log(chess.Board(), moves, seed=5, with_clock=True)
    table = ClockPipeline(white_on_left=white_on_left)
    wrong = "right" if white_on_left else "left"
    table.play(log[:1])  # the start position: game_start
    table.sides.resume_game(0, 0, white_side=wrong)
    table.play(log[1:])
    table.advance(log[-1].t + 5)
    notices = [e for e in table.of("notice") if e["code"] == "clock_sides_contradiction"]
    assert len(notices) == 1
    assert table.sides.white_side == ("left" if white_on_left else "right")
    decided = [e["uci"] for e in table.of("move") if not e["correction"]]
    assert decided == [m.uci() for m in moves]


def test_a_restart_after_a_press_made_while_down_reuses_the_journals_sides() -> None:
    """The daemon was down while Black moved and pressed; restarted, the first clock
    seen running is White's. With the journal's mapping the clock's colours are right
    at once; the moves after it are each decided at their own press."""
    game = shipped_games()[3]
    moves = list(game.mainline_moves())
    log = human_sensor_log(game.board(), moves, seed=7, with_clock=True)
    first = ClockPipeline(white_on_left=False)
    pressed = presses(log)
    cut = next(i for i, e in enumerate(log) if e.t == pressed[9])  # ply 10's press
    down_from = next(i for i, e in enumerate(log) if e.t == pressed[8]) + 1
    first.play(log[:down_from])
    first.advance(log[down_from].t - 0.01)
    [learnt] = first.of("clock_sides")
    assert learnt["white"] == "right"

    # Restart: a fresh core and interpreter, the journal's moves and mapping.
    again = ClockPipeline(white_on_left=False)
    done = [e["uci"] for e in first.of("move") if not e["correction"]]
    again.core.resume(log[cut].t, chess.STARTING_FEN, done)
    again.sides.resume_game(5, 4, white_side="right")
    placement = chess.Board()
    for move in moves[: len(done) + 1]:
        placement.push(move)
    again.sensor(BoardDump(log[cut].t + 0.5, placement.board_fen()))
    tick = replace(log[cut], t=log[cut].t + 1.0)
    again.sensor(tick)
    again.play([e for e in log[cut + 1 :] if e.t > tick.t])
    again.advance(log[-1].t + 5)
    decided = done + [e["uci"] for e in again.of("move") if not e["correction"]]
    assert decided == [m.uci() for m in moves]
    assert again.of("game_end"), "the last move (mate) reached the feed"
    later = [e for e in log if e.t > tick.t]
    check_every_move_at_its_own_press(
        again.of("move"), moves[len(done) :], [*log[cut - 1 : cut], *later]
    )


def test_a_tournament_day_twenty_games_back_to_back_every_game_right() -> None:
    """20 games in a row with ``sides: auto``; the players change colours each game,
    so White's clock side alternates, and the clock is still running from the last
    game while the pieces are set up again (nobody resets it)."""
    games = shipped_games()
    mapper = SideMapper("auto", clock=DgtClockInterpreter())
    t = 0.0
    for number in range(20):
        game = games[number % len(games)]
        moves = list(game.mainline_moves())
        log = human_sensor_log(
            game.board(), moves, seed=100 + number, with_clock=True, start_time=t
        )
        if number:
            # No stopped clock between games: the last game's clock runs on.
            log = [e for e in log if not (isinstance(e, ClockReport) and e.running is None)]
            log = [BoardDump(t, "8/8/8/8/8/8/8/8"), *log]
        table = ClockPipeline(white_on_left=number % 2 == 0, mapper=mapper)
        table.play(log)
        t = log[-1].t + 5.0
        table.advance(t)
        if not table.of("game_end"):  # resigned: the arbiter enters the result
            table.pipeline.publish([GameEnd(t, result=game.headers["Result"], reason="arbiter")])
        check_every_move_at_its_own_press(table.feed, moves, log)
        white = "left" if number % 2 == 0 else "right"
        assert [e["white"] for e in table.of("clock_sides")] == [white], f"game {number + 1}"
        assert not [e for e in table.of("notice") if "clock" in e["code"]]


def test_bwtime_helper_puts_white_where_the_players_sit() -> None:
    report = ClockReport(1.0, 100.0, 200.0, "white")
    assert bwtime(report, white_on_left=False).right_to_move
    assert bwtime(report, white_on_left=False).right.total_seconds == 100
