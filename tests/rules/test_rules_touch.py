"""Article 4.3: every piece touched counts, with and without a clock (issue 13)."""

from __future__ import annotations

import pytest
from rules_support import game, kinds, of_type, played, run, settings

CLOCKS = pytest.mark.parametrize("clock", [False, True], ids=["no clock", "clock"])


def touch_events(out):
    return [e for e in of_type(out, "irregularity") if e.kind == "touch_move"]


@CLOCKS
def test_4_3a_a_first_touched_piece_that_cannot_move_does_not_free_the_player(clock):
    # Ra1 cannot move; Ng1 can: Ng1 is the piece that had to move, not e2
    script = game(clock).lift("a1").put("a1", "R").lift("g1").put("g1", "N")
    script.move("e2", "e4").done(clock)
    out = run(script.events, settings(clock))
    assert played(out) == ["e2e4"]  # the move stands; the arbiter decides
    [touch] = touch_events(out)
    assert touch.squares == ["g1", "e2"] and touch.article == "4.3"
    assert touch.detail.startswith("4.3a:") and "white knight on g1" in touch.detail


@CLOCKS
def test_4_5_when_no_touched_piece_can_move_any_move_is_free(clock):
    script = game(clock).lift("a1").put("a1", "R").lift("h1").put("h1", "R")
    script.move("e2", "e4").done(clock)
    out = run(script.events, settings(clock))
    assert played(out) == ["e2e4"] and kinds(out) == []


@CLOCKS
def test_4_3b_the_first_opposing_piece_that_can_be_captured_must_be(clock):
    script = game(clock).move("e2", "e4").done(clock).move("d7", "d5").done(clock)
    # the rook on a8 cannot be captured; the pawn on d5 can
    script.wait(1.0).lift("a8").put("a8", "r").lift("d5").put("d5", "p")
    script.move("g1", "f3").done(clock)
    out = run(script.events, settings(clock))
    [touch] = touch_events(out)
    assert touch.squares == ["d5", "g1"]
    assert touch.detail.startswith("4.3b:") and "black pawn on d5" in touch.detail


@CLOCKS
def test_4_3c_both_colours_touched_he_must_capture_with_the_piece_touched(clock):
    fen = "4k3/8/8/3p4/8/2N5/4P3/4K3 w - - 0 1"  # Nc3 can take d5
    script = game(clock, fen).lift("c3").put("c3", "N").lift("d5").put("d5", "p")
    script.move("e2", "e4").done(clock)
    out = run(script.events, settings(clock))
    [touch] = touch_events(out)
    assert touch.squares == ["c3", "d5", "e2"]
    assert touch.detail.startswith("4.3c:")
    assert "white knight on c3 could capture the black pawn on d5" in touch.detail
    capture = game(clock, fen).lift("c3").put("c3", "N").lift("d5").lift("c3").put("d5", "N")
    out = run(capture.done(clock).events, settings(clock))
    assert played(out) == ["c3d5"] and kinds(out) == []


@CLOCKS
def test_4_3c_when_the_capture_is_illegal_the_first_touched_must_move(clock):
    fen = "4k3/8/8/3p4/8/8/4P3/R3K3 w - - 0 1"  # Ra1 cannot take d5
    script = game(clock, fen).lift("a1").put("a1", "R").lift("d5").put("d5", "p")
    script.move("e2", "e4").done(clock)
    out = run(script.events, settings(clock))
    [touch] = touch_events(out)
    assert touch.squares == ["a1", "e2"]
    assert "white rook on a1" in touch.detail


@CLOCKS
def test_a_touch_is_not_forgotten_across_a_knocked_piece(clock):
    script = game(clock).move("e2", "e4").done(clock).move("f7", "f5").done(clock)
    script.lift("g1").put("g1", "N").wait(1.0)
    script.lift("d7").put("d6", "p").settle().lift("d6").put("d7", "p").settle()  # knocked
    script.lift("f5").lift("e4").put("f5", "P").done(clock)
    out = run(script.events, settings(clock))
    assert played(out) == ["e2e4", "f7f5", "e4f5"]
    assert kinds(out) == [("displaced_pieces", "7.3"), ("touch_move", "4.3")]
    assert touch_events(out)[0].squares == ["g1", "e4"]


@CLOCKS
def test_the_mover_re_centring_his_piece_is_not_the_opponent_touching_it(clock):
    # Bb5 can be taken by a6xb5 later; white re-centres it straight after the release
    script = game(clock)
    for frm, to in (("e2", "e4"), ("a7", "a6"), ("g2", "g3"), ("h7", "h6")):
        script.move(frm, to).done(clock)
    script.lift("f1").put("b5", "B", after=0.1)
    if clock:
        script.press()  # the clock first, then the hand goes back to the bishop
    script.wait(0.3 if clock else 0.5).lift("b5", after=0.15).put("b5", "B")
    script.settle().move("g8", "f6").done(clock)
    out = run(script.events, settings(clock))
    assert played(out)[-2:] == ["f1b5", "g8f6"]
    assert kinds(out) == []


@CLOCKS
def test_the_opponent_touching_a_piece_after_the_window_is_a_touch(clock):
    script = game(clock)
    for frm, to in (("e2", "e4"), ("a7", "a6"), ("g2", "g3"), ("h7", "h6")):
        script.move(frm, to).done(clock)
    script.lift("f1").put("b5", "B").done(clock)
    script.wait(1.0).lift("b5", after=0.15).put("b5", "B")  # black touches it, then plays Nf6
    script.move("g8", "f6").done(clock)
    out = run(script.events, settings(clock))
    [touch] = touch_events(out)
    assert touch.squares == ["b5", "g8"] and touch.by == "black"
    assert touch.detail.startswith("4.3b:")
