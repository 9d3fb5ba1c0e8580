"""Results signalled on the board, and clearing the board after a game (issue 13)."""

from __future__ import annotations

import chess
import pytest
from rules_support import Script, game, kinds, of_type, played, run, settings

from daemon.rules import RulesCore

CLOCKS = pytest.mark.parametrize("clock", [False, True], ids=["no clock", "clock"])
MIDDLEGAME = "r3k3/pppp4/8/8/8/8/PPPP4/R3K3 w - - 0 1"


@CLOCKS
@pytest.mark.parametrize(
    ("white_king", "black_king", "result"),
    [("e4", "d5", "1-0"), ("d4", "e5", "0-1"), ("d4", "e4", "1/2-1/2"), ("e5", "d5", "1/2-1/2")],
    ids=["white wins", "black wins", "draw on rank 4", "draw on rank 5"],
)
def test_kings_on_the_centre_squares_end_the_game_with_their_result(
    clock, white_king, black_king, result
):
    script = game(clock, MIDDLEGAME).wait(2.0)
    script.lift("e1").put(white_king, "K", after=1.5)  # a pause longer than the settle time
    script.lift("e8").put(black_king, "k").settle()
    out = run(script.events, settings(clock))
    [end] = of_type(out, "game_end")
    assert (end.result, end.reason) == (result, "result_on_board")
    assert kinds(out) == [] and played(out) == []


def test_the_final_position_is_the_one_before_the_kings_were_lifted():
    script = game(False, MIDDLEGAME).move("a2", "a3").settle().move("a7", "a6").settle()
    script.lift("e1").put("e4", "K").lift("e8").put("d5", "k").settle()
    core = RulesCore(settings(False))
    for event in script.events:
        core.judge(event)
    while (deadline := core.next_deadline()) is not None:
        core.tick(deadline)
    expected = chess.Board(MIDDLEGAME)
    for uci in ("a2a3", "a7a6"):
        expected.push_uci(uci)
    assert core.board.fen() == expected.fen()


@CLOCKS
def test_the_signal_can_be_turned_off(clock):
    script = game(clock, MIDDLEGAME).lift("e1").put("e4", "K").lift("e8").put("d5", "k")
    out = run(script.settle().events, settings(clock, result_on_board=False))
    assert of_type(out, "game_end") == []
    assert kinds(out) == [("displaced_pieces", "7.3")]


def _sweep_and_set_up(script: Script, pause: float = 0.7) -> Script:
    """Every piece off the board, then the start position piece by piece, slowly."""
    for square in sorted(script.pieces):
        script.lift(chess.square_name(square), after=0.1)
    script.wait(1.5)
    for square, piece in sorted(chess.Board().piece_map().items()):
        script.put(chess.square_name(square), piece.symbol(), after=pause)
    return script.settle()


def _ended(how: str, clock: bool) -> Script:
    if how == "checkmate":  # fool's mate
        script = game(clock)
        for frm, to in (("f2", "f3"), ("e7", "e5"), ("g2", "g4"), ("d8", "h4")):
            script.move(frm, to).done(clock)
        return script.settle()
    script = game(clock, MIDDLEGAME).move("a2", "a3").done(clock)
    if how == "signal":
        return script.lift("e1").put("e4", "K").lift("e8").put("d5", "k").settle()
    return script.request("result", result="0-1").wait(0.5)  # the arbiter


@CLOCKS
@pytest.mark.parametrize("how", ["checkmate", "signal", "arbiter"])
def test_clearing_the_board_after_the_end_raises_no_alarm_and_starts_the_next_game(clock, how):
    script = _sweep_and_set_up(_ended(how, clock))
    out = run(script.events, settings(clock))
    assert len(of_type(out, "game_end")) == 1
    moves_before = len(played(out))
    assert kinds(out) == [] and of_type(out, "notice") == []
    starts = of_type(out, "game_start")
    assert len(starts) == 2 and starts[-1].fen == chess.STARTING_FEN
    assert starts[-1].t > of_type(out, "game_end")[0].t
    assert moves_before == len([e for e in out if e.type == "move" and e.t < starts[-1].t])


RESIGNED = [("e2", "e4"), ("e7", "e5"), ("g1", "f3"), ("b8", "c6"), ("f1", "c4"), ("f8", "c5")]


@CLOCKS
def test_a_game_that_stops_and_is_reset_gives_one_notice_and_no_invented_move(clock):
    script = game(clock)
    for frm, to in RESIGNED:
        script.move(frm, to).done(clock)
    script.wait(3.0)  # white resigns without a signal; the players put the pieces back
    for frm, to in (("c5", "f8"), ("c6", "b8"), ("e5", "e7"), ("c4", "f1"), ("f3", "g1")):
        script.move(frm, to).wait(0.8)
    script.move("e4", "e2").settle()
    out = run(script.events, settings(clock))
    assert played(out) == [frm + to for frm, to in RESIGNED][: len(played(out))]
    assert len(played(out)) == len(RESIGNED)  # the record ends at the last real move
    assert kinds(out) == []
    assert len(of_type(out, "notice")) <= 1
    assert len(of_type(out, "game_start")) == 2  # the next game once the start stands


@CLOCKS
def test_a_king_left_alone_on_a_centre_square_is_judged_after_the_wait(clock):
    fen = "4k3/8/8/8/8/4K3/8/R7 w - - 0 1"  # Ke3-e5 is no king move
    script = game(clock, fen).lift("e3").put("e5", "K")
    if clock:
        script.press()  # the press says the move is made: judged at once
    script.wait(4.0)
    out = run(script.events, settings(clock))
    assert kinds(out) == [("illegal_move", "7.4")]
    assert of_type(out, "game_end") == []


@CLOCKS
def test_a_position_put_back_during_each_set_up_follows_a_notice_each_time(clock):
    """A game that stops; the players begin to set up (a ``board_reset`` notice), put
    the game's position back (``position_restored``), then begin again. The second
    set-up is noticed too: the core used to take the set-up's transition without its
    notice after the first, so a blind player and the arbiter heard "position
    restored" with nothing before it."""
    script = game(clock)
    for frm, to in RESIGNED:
        script.move(frm, to).done(clock)
    script.wait(3.0)  # white resigns without a signal
    for _ in range(2):  # two black pieces back home at once: the board is being set up
        script.lift("c5", after=0.05).lift("c6", after=0.05)
        script.put("f8", "b", after=0.05).put("b8", "n").settle()
        script.lift("f8", after=0.05).lift("b8", after=0.05)  # ... and put back
        script.put("c5", "b", after=0.05).put("c6", "n").settle()
    out = run(script.events, settings(clock))
    said = [e.type for e in out if e.type in ("notice", "position_restored")]
    assert said == ["notice", "position_restored"] * 2
    assert {e.code for e in of_type(out, "notice")} == {"board_reset"}  # type: ignore[attr-defined]
    assert kinds(out) == [] and played(out) == [frm + to for frm, to in RESIGNED]
