"""One rule of the Laws per test, on small hand-made sensor sequences."""

from __future__ import annotations

from rules_support import Script, kinds, of_type, played, run

from daemon.rules import RulesSettings
from drivers.sensors import ClockReport

NO_CLOCK = RulesSettings(use_clock=False)


def opening(*, clock: bool = False) -> Script:
    script = Script().dump()
    if clock:
        script.start_clock("white")
    return script.wait(0.5)


# ---------------------------------------------------------------- 4.6 completed moves


def test_article_4_6_move_counts_once_the_piece_stands_for_the_settle_time():
    script = opening().move("e2", "e4")
    early = run(script.events, NO_CLOCK)  # timers run out at the end: the move is made
    assert played(early) == ["e2e4"]
    moves = of_type(early, "move")
    assert moves[0].t >= script.events[-1].t + 0.6 - 1e-9
    assert (moves[0].san, moves[0].by, moves[0].ply) == ("e4", "white", 1)
    assert moves[0].fen == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def test_article_4_6_capture_in_every_order():
    base = opening().move("e2", "e4").settle().move("d7", "d5").settle()
    victim_first = Script().dump().wait(0.5).move("e2", "e4").settle().move("d7", "d5").settle()
    victim_first.lift("d5").lift("e4").put("d5", "P").settle()
    capturer_first = Script().dump().wait(0.5).move("e2", "e4").settle().move("d7", "d5").settle()
    capturer_first.lift("e4").lift("d5").put("d5", "P").settle()
    base.lift("e4").put("d5", "P").settle()  # the victim's code replaced directly
    for script in (victim_first, capturer_first, base):
        out = run(script.events, NO_CLOCK)
        assert played(out) == ["e2e4", "d7d5", "e4d5"]
        assert kinds(out) == []


def test_article_4_6_en_passant_in_both_orders():
    def prefix() -> Script:
        script = opening().move("e2", "e4").settle().move("a7", "a6").settle()
        return script.move("e4", "e5").settle().move("d7", "d5").settle()

    victim_first = prefix().lift("d5").lift("e5").put("d6", "P").settle()
    pawn_first = prefix().lift("e5").put("d6", "P").lift("d5").settle()
    for script in (victim_first, pawn_first):
        out = run(script.events, NO_CLOCK)
        assert played(out)[-1] == "e5d6"
        assert of_type(out, "move")[-1].san == "exd6"
        assert kinds(out) == []


def _ready_to_castle() -> Script:
    script = opening()
    for frm, to in (("e2", "e4"), ("e7", "e5"), ("g1", "f3"), ("b8", "c6"), ("f1", "c4")):
        script.move(frm, to).settle()
    return script.move("g8", "f6").settle()


def test_article_4_6_castling_incomplete_until_rook_released():
    script = _ready_to_castle().move("e1", "g1").wait(5.0)
    out = run(script.events, NO_CLOCK)
    assert len(played(out)) == 6  # the king alone on g1 is no king move, and no alarm
    assert kinds(out) == []
    script.move("h1", "f1").settle()
    out = run(script.events, NO_CLOCK)
    assert played(out)[-1] == "e1g1"
    assert of_type(out, "move")[-1].san == "O-O"
    assert kinds(out) == []


def test_article_4_6_promotion_only_when_the_new_piece_is_released():
    fen = "8/4P3/8/8/8/2k5/8/4K3 w - - 0 1"
    script = Script(fen).request("set_position", fen=fen).dump().wait(0.5)
    script.lift("e7").put("e8", "P").wait(5.0)
    out = run(script.events, NO_CLOCK)
    assert played(out) == [] and kinds(out) == []
    script.lift("e8").put("e8", "N").settle()  # 4.4d: the piece on the square is the choice
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["e7e8n"]
    assert of_type(out, "move")[-1].san == "e8=N"


def test_article_4_4d_promotion_piece_replacing_the_pawn_directly():
    fen = "3r4/4P3/8/8/8/2k5/8/4K3 w - - 0 1"
    script = Script(fen).request("set_position", fen=fen).dump().wait(0.5)
    script.lift("e7").put("d8", "R").settle()  # capture and underpromotion, code replaced
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["e7d8r"]
    assert kinds(out) == []


# ---------------------------------------------------------------- 6.7 the clock press


def test_article_6_7_move_completed_by_the_clock_press():
    script = opening(clock=True).move("e2", "e4").wait(10.0)
    out = run(script.events)
    assert played(out) == []  # on the board, but not complete before the press
    script.press()
    out = run(script.events)
    assert played(out) == ["e2e4"]
    move = of_type(out, "move")[0]
    assert move.t == script.events[-1].t
    assert move.clock == {"white": 298.0, "black": 300.0}


def test_article_6_7_mate_completes_without_a_press():
    script = opening(clock=True)
    for frm, to in (("f2", "f3"), ("e7", "e5"), ("g2", "g4")):
        script.move(frm, to).press()
    script.move("d8", "h4").wait(2.0)
    out = run(script.events)
    assert played(out)[-1] == "d8h4"
    assert [(e.result, e.reason) for e in of_type(out, "game_end")] == [("0-1", "checkmate")]


def test_article_6_7_clock_pressed_without_a_move():
    script = opening(clock=True).wait(2.0).press().settle()
    out = run(script.events)
    assert kinds(out) == [("clock_without_move", "6.7")]
    assert of_type(out, "irregularity")[0].by == "white"
    script.move("d2", "d4").settle()  # the move then made still counts
    assert played(run(script.events)) == ["d2d4"]


def test_article_4_6_clock_pressed_with_castling_incomplete():
    script = Script().dump().start_clock()
    for frm, to in (("e2", "e4"), ("e7", "e5"), ("g1", "f3"), ("b8", "c6"), ("f1", "c4")):
        script.move(frm, to).press()
    script.move("g8", "f6").press()
    script.move("e1", "g1").press().settle()
    out = run(script.events)
    assert kinds(out) == [("incomplete_castling", "4.6")]
    assert len(played(out)) == 6
    script.move("h1", "f1").settle()
    out = run(script.events)
    assert played(out)[-1] == "e1g1"
    assert kinds(out) == [("incomplete_castling", "4.6")]


def test_article_4_6_clock_pressed_with_the_pawn_on_the_last_rank():
    fen = "8/4P3/8/8/8/2k5/8/4K3 w - - 0 1"
    script = Script(fen).request("set_position", fen=fen).dump().start_clock()
    script.lift("e7").put("e8", "P").press().settle()
    out = run(script.events)
    assert kinds(out) == [("incomplete_promotion", "4.6")]
    script.put("e8", "Q").settle()
    assert played(run(script.events)) == ["e7e8q"]


# ---------------------------------------------------------------- 4.3, 4.4 touch-move


def test_article_4_3_first_touched_piece_must_be_moved():
    script = opening().lift("g1").put("g1", "N").move("e2", "e4").settle()
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["e2e4"]  # the move stands; the arbiter decides
    assert kinds(out) == [("touch_move", "4.3")]
    assert of_type(out, "irregularity")[0].squares == ["g1", "e2"]


def test_article_4_3_touching_a_piece_that_cannot_move_is_no_irregularity():
    script = opening().lift("a1").put("a1", "R").move("e2", "e4").settle()
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["e2e4"] and kinds(out) == []


def test_article_4_3b_opposing_piece_touched_must_be_captured():
    script = opening().move("e2", "e4").settle().move("d7", "d5").settle()
    script.lift("d5").put("d5", "p").move("g1", "f3").settle()
    out = run(script.events, NO_CLOCK)
    assert kinds(out) == [("touch_move", "4.3")]
    capture = opening().move("e2", "e4").settle().move("d7", "d5").settle()
    capture.lift("d5").lift("e4").put("d5", "P").settle()
    assert kinds(run(capture.events, NO_CLOCK)) == []


def test_article_4_4_king_then_rook_castles_without_irregularity():
    script = _ready_to_castle().lift("e1").lift("h1").put("g1", "K").put("f1", "R").settle()
    out = run(script.events, NO_CLOCK)
    assert played(out)[-1] == "e1g1" and kinds(out) == []


def test_article_4_4_rook_first_castling_is_reported_and_stands():
    for clock in (False, True):
        script = Script().dump()
        if clock:
            script.start_clock()
        for frm, to in (("e2", "e4"), ("e7", "e5"), ("g1", "f3"), ("b8", "c6"), ("f1", "c4")):
            script.move(frm, to)
            script.press() if clock else script.settle()
        script.move("g8", "f6")
        script.press() if clock else script.settle()
        script.move("h1", "f1").move("e1", "g1")
        script.press() if clock else script.settle()
        out = run(script.events, RulesSettings(use_clock=clock))
        assert played(out)[-1] == "e1g1"
        assert kinds(out) == [("castling_rook_first", "4.4")]


# ---------------------------------------------------------------- 7.4 illegal moves


def test_article_7_4_illegal_move_reported_after_the_settle_time_and_restored():
    script = opening().move("g1", "g3").settle()
    out = run(script.events, NO_CLOCK)
    assert kinds(out) == [("illegal_move", "7.4")]
    irregularity = of_type(out, "irregularity")[0]
    assert (irregularity.by, irregularity.count) == ("white", 1)
    assert irregularity.restore == [{"square": "g1", "piece": "N"}, {"square": "g3", "piece": None}]
    script.move("g3", "g1").settle()
    out = run(script.events, NO_CLOCK)
    assert len(of_type(out, "position_restored")) == 1
    script.move("g1", "f3").settle()  # 4.3: the knight touched must move, and does
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["g1f3"] and kinds(out) == [("illegal_move", "7.4")]


def test_article_7_4_move_leaving_the_king_in_check_is_illegal():
    fen = "3Q4/8/6q1/6k1/8/8/8/6K1 b - - 0 1"  # black is in check from d8
    script = Script(fen).request("set_position", fen=fen).dump().wait(0.5)
    script.move("g6", "e4").settle()  # a queen move that ignores the check
    out = run(script.events, NO_CLOCK)
    assert kinds(out) == [("illegal_move", "7.4")]
    assert played(out) == []


def test_article_7_4a_game_continues_from_a_legal_move_without_restoring_first():
    script = opening().move("g1", "g3").settle().move("g3", "f3").settle()
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["g1f3"]
    assert kinds(out) == [("illegal_move", "7.4")]


def test_article_7_4_illegal_move_with_a_clock_counts_only_at_the_press():
    script = opening(clock=True).move("g1", "g3").wait(5.0)
    assert kinds(run(script.events)) == []
    script.press().settle()
    assert kinds(run(script.events)) == [("illegal_move", "7.4")]


def test_article_7_4_third_illegal_move_reported_as_losing():
    script = opening()
    for _ in range(3):
        script.move("g1", "g3").settle().move("g3", "g1").settle()
    out = run(script.events, NO_CLOCK)
    illegal = of_type(out, "irregularity")
    assert [e.count for e in illegal] == [1, 2, 3]
    assert "two extra minutes" in illegal[1].consequence
    assert "lost" in illegal[2].consequence
    assert len(of_type(out, "position_restored")) == 3


# ---------------------------------------------------------------- 7.3 displaced pieces


def test_article_7_3_knocked_piece_of_the_side_not_on_move_with_restore():
    script = opening().move("e2", "e4").settle()
    script.lift("b1").put("b3", "N").settle()  # black is on move; a white knight knocked
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["e2e4"]
    assert kinds(out) == [("displaced_pieces", "7.3")]
    irregularity = of_type(out, "irregularity")[0]
    assert irregularity.squares == ["b1", "b3"]
    assert irregularity.restore == [{"square": "b1", "piece": "N"}, {"square": "b3", "piece": None}]
    script.move("b3", "b1").settle()
    out = run(script.events, NO_CLOCK)
    assert [e.fen.split()[0] for e in of_type(out, "position_restored")] == [
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"
    ]


def test_article_7_3_passing_states_raise_no_alarm():
    script = opening().move("e2", "e4").settle().move("d7", "d5").settle()
    # the captured pawn set down for a moment on c6 on its way off the board
    script.lift("e4").put("d5", "P").wait(0.05).put("c6", "p").wait(0.3).lift("c6").settle()
    script.lift("d8").put("d7", "q").wait(0.2).lift("d7").put("d6", "q").wait(0.2)
    script.lift("d6").put("d5", "q").settle()  # a slide ending in a capture
    script.put("f3", "N").wait(0.2).lift("g1").settle()  # new square before the old is empty
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["e2e4", "d7d5", "e4d5", "d8d5", "g1f3"]
    assert kinds(out) == []
    assert not [e for e in of_type(out, "move") if e.correction]


def test_board_showing_the_previous_position_is_no_takeback_in_tournament_mode():
    script = opening().move("e2", "e4").settle().move("e7", "e5").settle()
    script.move("e5", "e7").settle()
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["e2e4", "e7e5"] and of_type(out, "takeback") == []
    assert kinds(out) == [("displaced_pieces", "7.3")]


def test_casual_mode_takes_back_when_the_board_shows_an_earlier_position():
    script = opening().move("e2", "e4").settle().move("e7", "e5").settle()
    script.move("e5", "e7").settle()
    out = run(script.events, RulesSettings(use_clock=False, mode="casual"))
    assert played(out) == ["e2e4"]
    assert [e.ply for e in of_type(out, "takeback")] == [2]
    assert kinds(out) == []


# ---------------------------------------------------------------- 7.1 setup


def test_article_7_1_board_turned_round_detected_and_squares_mapped():
    script = Script(flipped=True).dump().wait(0.5).move("e2", "e4").settle()
    assert script.events[0].placement == "RNBKQBNR/PPPPPPPP/8/8/8/8/pppppppp/rnbkqbnr"
    assert script.events[1].square == "d7"  # what a turned board reports for e2
    out = run(script.events, NO_CLOCK)
    assert [e.flipped for e in of_type(out, "game_start")] == [True]
    assert played(out) == ["e2e4"]


def test_article_7_1a_wrong_setup_reported_with_restore():
    fen = "rnbkqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR w - - 0 1"
    script = Script(fen).dump().settle()
    out = run(script.events, NO_CLOCK)
    assert kinds(out) == [("wrong_setup", "7.1")]
    assert of_type(out, "game_start") == []
    script.lift("d1").lift("e1").put("d1", "Q").put("e1", "K")
    script.lift("d8").lift("e8").put("d8", "q").put("e8", "k").settle()
    out = run(script.events, NO_CLOCK)
    assert len(of_type(out, "game_start")) == 1


def test_appendix_f_chess960_start_recognised_only_when_allowed():
    fen = "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1"
    script = Script(fen).dump().settle().move("g1", "h1").settle()  # ...not a legal 960 move
    allowed = run(Script(fen).dump().settle().events, RulesSettings(chess960=True))
    assert [e.chess960 for e in of_type(allowed, "game_start")] == [True]
    refused = run(script.events, RulesSettings(chess960=False))
    assert kinds(refused) == [("wrong_setup", "7.1")]


# ---------------------------------------------------------------- 5, 9 game end and draws


def test_article_5_2_stalemate_and_dead_position_end_the_game():
    fen = "7k/4Q3/6K1/8/8/8/8/8 w - - 0 1"
    script = Script(fen).request("set_position", fen=fen).dump().wait(0.5)
    out = run(script.move("e7", "f7").settle().events, NO_CLOCK)
    assert [(e.result, e.reason) for e in of_type(out, "game_end")] == [("1/2-1/2", "stalemate")]
    fen = "7k/8/6K1/8/8/8/6r1/7B w - - 0 1"
    script = Script(fen).request("set_position", fen=fen).dump().wait(0.5)
    script.lift("g2").lift("h1").put("g2", "B").settle()  # king and bishop against king
    out = run(script.events, NO_CLOCK)
    assert [(e.result, e.reason) for e in of_type(out, "game_end")] == [
        ("1/2-1/2", "insufficient_material")
    ]


def test_article_9_2_threefold_repetition_claimable():
    script = opening()
    for _ in range(2):
        for frm, to in (("g1", "f3"), ("g8", "f6"), ("f3", "g1"), ("f6", "g8")):
            script.move(frm, to).settle()
    out = run(script.events, NO_CLOCK)
    claims = of_type(out, "draw_claimable")
    assert [(e.reason, e.ply) for e in claims] == [("threefold_repetition", 8)]


def test_article_9_3_fifty_moves_claimable():
    fen = "7k/8/8/8/8/8/8/R6K w - - 99 80"
    script = Script(fen).request("set_position", fen=fen).dump().wait(0.5)
    out = run(script.move("a1", "a2").settle().events, NO_CLOCK)
    assert [(e.reason, e.ply) for e in of_type(out, "draw_claimable")] == [("fifty_moves", 1)]


# ---------------------------------------------------------------- timing


def test_fast_reply_inside_one_settle_window_is_two_moves():
    script = opening().move("e2", "e4").wait(0.05).move("e7", "e5").settle()
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["e2e4", "e7e5"]
    assert kinds(out) == []


def test_clock_report_arriving_after_the_reply_began_completes_only_the_movers_move():
    # black's pawn passes d6 (a legal reply) before white's press is reported
    script = opening(clock=True).move("e2", "e4").lift("d7").put("d6", "p").wait(0.1)
    script.events.append(ClockReport(script.t, 298.0, 300.0, "black"))
    white_press = script.t
    script.wait(0.1).lift("d6").put("d5", "p").wait(0.1)
    out = run(script.events)
    assert [(m.uci, m.t) for m in of_type(out, "move")] == [("e2e4", white_press)]
    black_press = script.t
    script.events.append(ClockReport(black_press, 298.0, 298.0, "white"))
    out = run(script.events)
    assert [(m.uci, m.t) for m in of_type(out, "move")] == [
        ("e2e4", white_press),
        ("d7d5", black_press),  # not d6: the reply counts at black's own press
    ]
    assert kinds(out) == []


def test_press_reported_before_the_slide_finished_is_corrected_at_once():
    """The clock report overtakes the board's last squares: the move is corrected."""
    script = opening(clock=True).move("e2", "e4").press().move("e7", "e5").press()
    script.lift("d1").put("e2", "Q").wait(0.1)
    script.events.append(ClockReport(script.t, 296.0, 298.0, "black"))  # press on e2
    script.wait(0.1).lift("e2", 0.1).put("f3", "Q", 0.1).lift("f3", 0.1).put("g4", "Q").settle()
    out = run(script.events)
    assert [(m.ply, m.uci, m.correction) for m in of_type(out, "move")][2:] == [
        (3, "d1e2", False),
        (3, "d1g4", True),
    ]
    assert kinds(out) == []


def test_no_late_correction_long_after_a_press():
    script = opening(clock=True).move("e2", "e4").press().move("e7", "e5").press()
    script.move("d1", "e2").press().wait(2.0).move("e2", "g4").settle()
    out = run(script.events)
    assert played(out) == ["e2e4", "e7e5", "d1e2"]
    assert kinds(out) == [("displaced_pieces", "7.3")]


def test_slow_slide_decided_on_time_is_corrected_with_the_same_ply():
    script = opening().move("e2", "e4").settle().move("e7", "e5").settle()
    script.lift("f1").put("e2", "B").wait(1.0).lift("e2").put("d3", "B").wait(0.1)
    script.lift("d3").put("c4", "B").settle()
    out = run(script.events, NO_CLOCK)
    moves = of_type(out, "move")
    assert [(m.ply, m.uci, m.correction) for m in moves[2:]] == [
        (3, "f1e2", False),
        (3, "f1c4", True),
    ]
    assert played(out) == ["e2e4", "e7e5", "f1c4"]
    assert kinds(out) == []


def test_article_7_3_knocked_piece_long_after_a_move_is_no_correction():
    script = opening().move("b1", "c3").settle().wait(3.0)
    script.lift("c3", 0).put("a3", "N").settle()  # Nb1-a3 would be legal: still a knock
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["b1c3"]
    assert not [e for e in of_type(out, "move") if e.correction]
    assert kinds(out) == [("displaced_pieces", "7.3")]


def test_no_correction_once_the_opponent_has_touched_a_piece():
    script = opening().move("e2", "e4").settle().lift("e7").wait(0.2).put("e7", "p").settle()
    script.lift("e4").put("e3", "P").settle()
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["e2e4"]
    assert not [e for e in of_type(out, "move") if e.correction]
    assert kinds(out) == [("displaced_pieces", "7.3")]
