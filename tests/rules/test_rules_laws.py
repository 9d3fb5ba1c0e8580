"""rules.laws: the 2009 Laws (default) or the Laws in force today (issue 13)."""

from __future__ import annotations

import pytest
from rules_support import game, kinds, of_type, played, run, settings

from daemon.rules import RulesSettings

CLOCKS = pytest.mark.parametrize("clock", [False, True], ids=["no clock", "clock"])


def current(clock: bool) -> RulesSettings:
    return settings(clock, laws="current")


@CLOCKS
def test_today_an_illegal_move_is_7_5_and_the_second_one_loses(clock):
    script = game(clock)
    for _ in range(2):
        script.move("g1", "g3").done(clock).settle().move("g3", "g1").settle()
        if clock:  # the arbiter sets the clock back (6.13 then, 7.5.1 today)
            script.running = "white"
            script.report()
    out = run(script.events, current(clock))
    first, second = of_type(out, "irregularity")
    assert (first.kind, first.article, first.count) == ("illegal_move", "7.5", 1)
    assert "two extra minutes" in first.consequence
    assert second.count == 2 and "second illegal move: the game is lost" in second.consequence
    old = run(script.events, settings(clock))
    assert [e.article for e in of_type(old, "irregularity")] == ["7.4", "7.4"]
    assert "two extra minutes" in of_type(old, "irregularity")[1].consequence  # 2009: the third


def test_today_a_press_without_a_move_counts_as_an_illegal_move():
    script = game(True).press().settle()
    [event] = of_type(run(script.events, current(True)), "irregularity")
    assert (event.kind, event.article, event.count) == ("clock_without_move", "7.5.3", 1)
    assert "two extra minutes" in event.consequence
    [old] = of_type(run(script.events, settings(True)), "irregularity")
    assert (old.article, old.count) == ("6.7", None)


def test_today_a_pawn_left_on_the_last_rank_is_replaced_by_a_queen():
    fen = "8/4P3/8/8/8/2k5/8/4K3 w - - 0 1"
    script = game(True, fen).lift("e7").put("e8", "P").press().settle()
    out = run(script.events, current(True))
    assert played(out) == ["e7e8q"]  # 7.5.2: the move stands with a queen
    [event] = of_type(out, "irregularity")
    assert (event.kind, event.article, event.count) == ("incomplete_promotion", "7.5.2", 1)
    assert event.restore == [{"square": "e8", "piece": "Q"}]
    assert "replaced by a queen" in event.consequence
    script.lift("e8").put("e8", "Q").settle()
    out = run(script.events, current(True))
    assert len(of_type(out, "position_restored")) == 1
    old = run(script.events, settings(True))
    assert kinds(old) == [("incomplete_promotion", "4.6")] and played(old) == ["e7e8q"]


@CLOCKS
def test_today_displaced_pieces_are_7_4_and_touch_move_names_4_3_1(clock):
    script = game(clock).move("e2", "e4").done(clock).wait(2.0)
    script.lift("h2").put("h3", "P").settle().lift("h3").put("h2", "P").settle()  # knocked
    out = run(script.events, current(clock))
    assert kinds(out) == [("displaced_pieces", "7.4")]
    touch = game(clock).lift("g1").put("g1", "N").move("e2", "e4").done(clock)
    [event] = of_type(run(touch.events, current(clock)), "irregularity")
    assert event.article == "4.3" and event.detail.startswith("4.3.1:")


def test_the_key_reads_2009_as_written_in_yaml_and_refuses_anything_else():
    assert RulesSettings(laws=2009).laws == "2009"  # type: ignore[arg-type]
    assert RulesSettings().laws == "2009"
    with pytest.raises(ValueError, match="laws"):
        RulesSettings(laws="2017")  # type: ignore[arg-type]


def test_a_penalty_without_an_article_cites_the_editions_penalty_rule():
    script = game(False).request("penalty", to="black")
    [old] = of_type(run(script.events, settings(False)), "penalty")
    [new] = of_type(run(script.events, current(False)), "penalty")
    assert (old.article, new.article) == ("7.4b", "7.5.5")
