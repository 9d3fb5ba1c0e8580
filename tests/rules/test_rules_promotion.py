"""Promotions as hands make them (4.4d, 4.6c, 7.4a), with and without a clock (issue 13)."""

from __future__ import annotations

import pytest
from rules_support import game, kinds, of_type, played, run, settings

CLOCKS = pytest.mark.parametrize("clock", [False, True], ids=["no clock", "clock"])
PAWN_ON_E7 = "8/4P3/8/8/8/2k5/8/4K3 w - - 0 1"
CAPTURE_ON_D8 = "3r4/4P3/8/8/8/2k5/8/4K3 w - - 0 1"


@CLOCKS
def test_the_new_piece_set_down_before_the_pawn_is_lifted_is_the_promotion(clock):
    script = game(clock, PAWN_ON_E7).put("e8", "Q", after=0.9).lift("e7").done(clock)
    out = run(script.events, settings(clock))
    assert played(out) == ["e7e8q"]
    assert kinds(out) == [] and of_type(out, "position_restored") == []


@CLOCKS
def test_the_new_piece_first_also_with_a_capture_in_either_state_of_the_victim(clock):
    replaced = game(clock, CAPTURE_ON_D8).lift("d8").put("d8", "Q", after=0.9).lift("e7")
    direct = game(clock, CAPTURE_ON_D8).put("d8", "Q", after=0.9).lift("e7")  # code replaced
    for script in (replaced, direct):
        out = run(script.done(clock).events, settings(clock))
        assert played(out) == ["e7d8q"] and kinds(out) == []


@CLOCKS
def test_a_piece_of_the_wrong_colour_is_an_illegal_move_counted_for_7_4b(clock):
    script = game(clock, PAWN_ON_E7).lift("e7").put("e8", "q").done(clock).settle()
    out = run(script.events, settings(clock))
    [illegal] = of_type(out, "irregularity")
    assert (illegal.kind, illegal.article, illegal.by, illegal.count) == (
        "illegal_move",
        "7.4",
        "white",
        1,
    )
    assert illegal.restore == [{"square": "e7", "piece": "P"}, {"square": "e8", "piece": None}]
    script.lift("e8").put("e8", "Q").settle()  # 7.4a: the promotion made properly
    out = run(script.events, settings(clock))
    assert played(out) == ["e7e8q"] and len(of_type(out, "irregularity")) == 1


@CLOCKS
def test_a_swap_after_the_move_is_announced_is_reported_and_never_rewrites_it(clock):
    script = game(clock, PAWN_ON_E7).lift("e7").put("e8", "Q").done(clock).settle()
    script.lift("e8").put("e8", "N").settle()  # 4.4d: the queen is final
    out = run(script.events, settings(clock))
    assert [m.uci for m in of_type(out, "move")] == ["e7e8q"]  # no correction
    [swap] = of_type(out, "irregularity")
    assert (swap.kind, swap.article, swap.by) == ("promotion_changed", "4.4", "white")
    assert swap.restore == [{"square": "e8", "piece": "Q"}]
    assert swap.detail.startswith("4.4d:")
    script.lift("e8").put("e8", "Q").settle()  # guided back; the game goes on
    script.move("c3", "d3").done(clock)
    out = run(script.events, settings(clock))
    assert played(out) == ["e7e8q", "c3d3"]
    assert len(of_type(out, "position_restored")) == 1 and len(of_type(out, "irregularity")) == 1


def test_a_swap_before_the_press_keeps_the_first_piece_that_touched_the_square():
    script = game(True, PAWN_ON_E7).lift("e7").put("e8", "Q", after=0.3)
    script.lift("e8", after=0.2).put("e8", "N").press().settle()
    out = run(script.events, settings(True))
    assert played(out) == ["e7e8q"]
    [swap] = of_type(out, "irregularity")
    assert swap.kind == "promotion_changed" and swap.restore == [{"square": "e8", "piece": "Q"}]
