"""Putting an illegal move back: one alarm, one restoration (issue 13)."""

from __future__ import annotations

import pytest
from rules_support import game, kinds, of_type, played, run, settings

CLOCKS = pytest.mark.parametrize("clock", [False, True], ids=["no clock", "clock"])
#: castling through g1, which the rook on g2 attacks; and castling out of check
THROUGH_ATTACK = "4k3/8/8/8/8/8/6r1/R3K2R w KQ - 0 1"
IN_CHECK = "4k3/8/8/8/8/8/4r3/R3K2R w KQ - 0 1"


@CLOCKS
@pytest.mark.parametrize("fen", [THROUGH_ATTACK, IN_CHECK], ids=["through attack", "in check"])
def test_an_illegal_castling_put_back_slowly_gives_one_alarm_and_one_restore(clock, fen):
    script = game(clock, fen).lift("e1").put("g1", "K").lift("h1").put("f1", "R").done(clock)
    script.settle()
    # back: the king first, a pause, then the rook (Rh1-f1 on the board meanwhile)
    script.lift("g1").put("e1", "K", after=1.2).lift("f1", after=1.2).put("h1", "R").settle()
    out = run(script.events, settings(clock))
    assert kinds(out) == [("illegal_move", "7.4")]
    assert of_type(out, "irregularity")[0].count == 1
    assert len(of_type(out, "position_restored")) == 1
    assert played(out) == []  # Rh1-f1 half way back is no move


@CLOCKS
def test_after_the_put_back_the_king_touched_first_makes_the_move(clock):
    script = game(clock, IN_CHECK).lift("e1").put("g1", "K").lift("h1").put("f1", "R").done(clock)
    script.settle().lift("g1").put("e1", "K", after=1.2).lift("f1", after=1.2).put("h1", "R")
    script.settle().move("e1", "d1").settle()
    out = run(script.events, settings(clock))
    assert played(out) == ["e1d1"]
    assert kinds(out) == [("illegal_move", "7.4")]  # the king moved: 4.3 is kept
