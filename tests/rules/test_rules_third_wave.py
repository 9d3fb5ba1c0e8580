"""Issue 26: castling when the king cannot move, one alarm per irregularity, the mover's
hand knocking a piece after his move, a new game set up after a resignation, 4.3c cited
when both colours were touched, a lone king on a centre square taken back."""

from __future__ import annotations

import pytest
from rules_support import Script, game, kinds, of_type, played, run, settings

CLOCKS = pytest.mark.parametrize("clock", [False, True], ids=["no clock", "clock"])


def _clock_back(script: Script, clock: bool, mover: str) -> Script:
    """The arbiter sets the clock back after an illegal move (6.13; 7.5.1 today)."""
    if clock:
        script.running = mover
        script.report()
    return script.wait(0.5)


@CLOCKS
def test_4_4c_castling_when_the_king_cannot_move_leaves_him_any_legal_move(clock):
    # f1 is attacked by the rook on f8, so O-O is illegal, and the king has no legal move
    script = game(clock, "5rk1/8/8/8/8/2N5/3PP3/3QK2R w K - 0 1")
    script.lift("e1").put("g1", "K").lift("h1").put("f1", "R").done(clock).settle()
    script.lift("g1").put("e1", "K").lift("f1").put("h1", "R").settle()
    _clock_back(script, clock, "white")
    script.move("c3", "d5").done(clock)  # a knight: 4.4c, any legal move
    out = run(script.events, settings(clock))
    assert kinds(out) == [("illegal_move", "7.4")]  # the rook touched to castle binds nothing
    assert played(out) == ["c3d5"]


@CLOCKS
def test_castling_with_a_king_that_has_moved_is_one_illegal_move_not_two_alarms(clock):
    script = game(clock, "4k3/p7/8/8/8/8/P7/4K2R w - - 0 1")  # no castling right left
    script.lift("e1").put("g1", "K").lift("h1", after=1.2).put("f1", "R").done(clock).settle()
    out = run(script.events, settings(clock))
    assert kinds(out) == [("illegal_move", "7.4")]
    script.lift("g1").put("e1", "K").lift("f1").put("h1", "R").settle()
    _clock_back(script, clock, "white")
    script.move("e1", "d2").done(clock)  # 4.4c: another king move
    out = run(script.events, settings(clock))
    assert kinds(out) == [("illegal_move", "7.4")]
    assert [e.type for e in out].count("position_restored") == 1
    assert played(out) == ["e1d2"]


@CLOCKS
def test_the_movers_hand_knocking_a_piece_after_his_move_is_not_the_opponents_touch(clock):
    script = game(clock, "r1bqkbnr/pppppppp/8/3n4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1")
    script.lift("f1").put("c4", "B", after=0.3)
    script.lift("d5", after=0.2)  # his withdrawing hand knocks the black knight over
    if clock:
        script.press()
    script.wait(1.3).put("d5", "n")  # it lay 1.5 s, then righted
    script.wait(1.0).move("e7", "e6").done(clock)  # Black plays another piece
    out = run(script.events, settings(clock))
    assert played(out) == ["f1c4", "e7e6"]
    assert kinds(out) == []


_EIGHT_PLIES = (
    ("e2", "e4"),
    ("e7", "e5"),
    ("g1", "f3"),
    ("b8", "c6"),
    ("f1", "c4"),
    ("f8", "c5"),
    ("b1", "c3"),
    ("g8", "f6"),
)


@CLOCKS
def test_a_set_up_step_that_is_a_legal_move_after_a_resignation_is_no_move(clock):
    script = game(clock)
    for frm, to in _EIGHT_PLIES:
        script.move(frm, to).done(clock)
    if clock:  # the game is over: the clock stopped
        script.running = None
        script.report()
    script.wait(3.0)
    script.lift("f3").put("g1", "N", after=1.2)  # Nf3-g1 is legal, and stands 1.2 s
    for square in ("c4", "c3", "e4", "e5", "c6", "c5", "f6"):
        script.lift(square, after=0.4)
    for square, piece in (
        ("f1", "B"),
        ("b1", "N"),
        ("e2", "P"),
        ("e7", "p"),
        ("b8", "n"),
        ("f8", "b"),
        ("g8", "n"),
    ):
        script.put(square, piece, after=0.6)
    script.settle()
    if clock:  # the clock set for the next game
        script.running = "white"
        script.report()
    script.move("e2", "e4").done(clock)
    out = run(script.events, settings(clock))
    starts = [i for i, e in enumerate(out) if e.type == "game_start"]
    assert len(starts) == 2
    assert played(out[: starts[1]]) == [f"{frm}{to}" for frm, to in _EIGHT_PLIES]
    assert played(out[starts[1] :]) == ["e2e4"]
    assert kinds(out) == []


@CLOCKS
def test_detail_cites_4_3c_when_an_illegal_move_touched_both_colours(clock):
    script = game(clock)
    for frm, to in (("e2", "e4"), ("e7", "e5"), ("g1", "f3"), ("b8", "c6")):
        script.move(frm, to).done(clock)
    script.lift("e5").lift("f1").put("e5", "B").done(clock).settle()  # the pawn first, then Bxe5??
    script.lift("e5").put("f1", "B").put("e5", "p").settle()
    _clock_back(script, clock, "white")
    script.move("f1", "c4").done(clock)  # the bishop goes elsewhere; Nxe5 was due
    out = run(script.events, settings(clock))
    assert kinds(out) == [("illegal_move", "7.4"), ("touch_move", "4.3")]
    [touch] = [e for e in of_type(out, "irregularity") if e.kind == "touch_move"]  # type: ignore[attr-defined]
    assert touch.detail.startswith("4.3c:")  # type: ignore[attr-defined]
    assert "black pawn on e5" in touch.detail  # type: ignore[attr-defined]


def test_a_lone_king_moved_illegally_to_the_centre_and_taken_back_is_reported():
    script = game(False, "4k3/p7/8/8/8/8/P7/4K3 w - - 0 1")
    script.lift("e1").put("e4", "K", after=1.5).lift("e4").put("e1", "K").settle()
    script.move("e1", "d2").settle()  # 4.3: the king touched moves
    out = run(script.events, settings(False))
    assert kinds(out) == [("illegal_move", "7.4")]
    assert played(out) == ["e1d2"]


@CLOCKS
def test_the_opponents_king_set_on_a_centre_square_and_taken_back_is_reported(clock):
    script = game(clock, "4k3/p7/8/8/8/8/P7/4K3 w - - 0 1")
    script.lift("e8").put("e5", "k", after=1.5).lift("e5").put("e8", "k").settle()
    script.move("a2", "a3").done(clock)
    out = run(script.events, settings(clock))
    assert kinds(out) == [("displaced_pieces", "7.3")]
    assert [e.type for e in out].count("position_restored") == 1
    assert played(out) == ["a2a3"]


@CLOCKS
def test_a_fast_reply_with_the_piece_next_to_the_last_move_is_the_repliers_touch(clock):
    # Nxd7 lands next to e8; Black castles at once, king first: no knock, no 4.4b
    script = game(clock, "r3k2r/pppq1ppp/8/4N3/8/8/PPP2PPP/4K2R w Kkq - 0 1")
    script.lift("d7").lift("e5").put("d7", "N", after=0.15)
    if clock:
        script.press()
    script.lift("e8", after=0.2).lift("a8").put("c8", "k").put("d8", "r").done(clock)
    out = run(script.events, settings(clock))
    assert played(out) == ["e5d7", "e8c8"]
    assert kinds(out) == []
