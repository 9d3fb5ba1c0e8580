"""The rest of the event feed: clock, flags, buttons, requests, resume, speech injection."""

from __future__ import annotations

import chess
from rules_support import Script, kinds, of_type, played, run

from daemon.rules import RulesCore, RulesSettings
from drivers.sensors import (
    BoardDump,
    ButtonPress,
    ClockReport,
    ConnectionChange,
    MagicPiece,
    Request,
    SquareChange,
)
from drivers.timecontrol import parse_time_control

START = chess.STARTING_BOARD_FEN
NO_CLOCK = RulesSettings(use_clock=False)


def test_article_6_1_clock_updates_only_when_the_report_changes():
    events = [
        BoardDump(0.0, START),
        ClockReport(0.1, 300, 300, None),
        ClockReport(0.2, 300, 300, None),
        ClockReport(0.3, 300, 300, "white"),
        ClockReport(1.3, 299, 300, "white"),
    ]
    updates = of_type(run(events), "clock")
    assert [(u.white, u.black, u.running) for u in updates] == [
        (300, 300, None),
        (300, 300, "white"),
        (299, 300, "white"),
    ]


def test_article_6_1_flag_fall_reported_once_and_ends_the_game():
    events = [
        BoardDump(0.0, START),
        ClockReport(0.1, 1.0, 300, "white"),
        ClockReport(1.1, 0.0, 300, "white"),
        ClockReport(2.1, 0.0, 300, "white", ("white",)),
    ]
    out = run(events)
    assert [(f.side, f.both, f.draw) for f in of_type(out, "flag")] == [("white", False, False)]
    assert [(e.result, e.reason) for e in of_type(out, "game_end")] == [("0-1", "flag")]


def test_article_6_9_flag_is_a_draw_when_the_opponent_cannot_mate():
    fen = "7k/8/8/8/8/8/8/KQ6 b - - 0 1"  # black flags; white could still mate
    out = run([Request(0, "set_position", {"fen": fen}), ClockReport(0.1, 9, 0.0, "black")])
    assert [(e.result, e.reason) for e in of_type(out, "game_end")] == [("1-0", "flag")]
    fen = "7k/8/8/8/8/8/8/KN6 b - - 0 1"  # a lone knight cannot mate
    out = run([Request(0, "set_position", {"fen": fen}), ClockReport(0.1, 9, 0.0, "black")])
    assert [f.draw for f in of_type(out, "flag")] == [True]
    assert [(e.result, e.reason) for e in of_type(out, "game_end")] == [("1/2-1/2", "flag_draw")]


def test_article_6_11_both_flags_at_once_order_unknown():
    events = [BoardDump(0.0, START), ClockReport(0.1, 0, 0, "white", ("white", "black"))]
    out = run(events)
    assert [(f.side, f.both, f.game_continues) for f in of_type(out, "flag")] == [
        (None, True, None)
    ]
    assert of_type(out, "game_end") == []  # 6.11 without a time control: the arbiter decides


TWO_PERIODS = parse_time_control("40/5400+30:1800+30")
#: Black to move at move 40 (still the first period), and White at move 41 (the last).
MOVE_40 = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 40"
MOVE_41 = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 4 41"


def both_flags_at(fen: str, time_control) -> list:
    settings = RulesSettings(time_control=time_control)
    running = "black" if " b " in fen else "white"
    events = [
        Request(0.0, "set_position", {"fen": fen}),
        ClockReport(0.1, 0, 0, running, ("white", "black")),
    ]
    return run(events, settings)


def test_article_6_11_both_flags_in_the_last_period_draw_the_game():
    out = both_flags_at(MOVE_41, TWO_PERIODS)
    assert [(f.side, f.both, f.game_continues) for f in of_type(out, "flag")] == [
        (None, True, False)
    ]
    assert [(e.result, e.reason) for e in of_type(out, "game_end")] == [("1/2-1/2", "both_flags")]
    sudden_death = both_flags_at(MOVE_40, parse_time_control("5400+30"))
    assert [(e.result, e.reason) for e in of_type(sudden_death, "game_end")] == [
        ("1/2-1/2", "both_flags")
    ]


def test_article_6_11_both_flags_before_the_last_period_the_game_goes_on():
    for fen, tc in ((MOVE_40, TWO_PERIODS), (MOVE_41, parse_time_control("40/7200"))):
        out = both_flags_at(fen, tc)
        assert [(f.both, f.game_continues) for f in of_type(out, "flag")] == [(True, True)]
        assert of_type(out, "game_end") == []
    # the game goes on: the next period's time on the clocks, then a flag may fall again
    settings = RulesSettings(time_control=TWO_PERIODS)
    events = [
        Request(0.0, "set_position", {"fen": MOVE_40}),
        ClockReport(0.1, 0, 0, "black", ("white", "black")),
        ClockReport(1.0, 1800, 1800, "black"),
        ClockReport(2.0, 1800, 0, "black"),
    ]
    out = run(events, settings)
    assert [(f.side, f.both) for f in of_type(out, "flag")] == [(None, True), ("black", False)]
    assert [(e.result, e.reason) for e in of_type(out, "game_end")] == [("1-0", "flag")]


def test_use_clock_false_ignores_clock_reports():
    script = Script().dump().start_clock().wait(0.5).move("e2", "e4").settle()
    out = run(script.events, NO_CLOCK)
    assert of_type(out, "clock") == []
    assert played(out) == ["e2e4"]  # decided by the settle time, no press needed
    assert of_type(out, "move")[0].clock is None


def test_buttons_map_to_info_requests():
    out = run([ButtonPress(1.0, b) for b in ("back", "plus", "minus", "ok", "run")])
    assert [e.what for e in out] == ["last", "clock", "move_number", "board"]
    custom = RulesSettings(button_actions={"run": "square"})
    assert [e.what for e in run([ButtonPress(1.0, "run")], custom)] == ["square"]


def test_the_web_say_control_asks_what_a_clock_button_asks():
    requests = [
        Request(1.0, "say", {"what": "last"}),
        Request(1.1, "say", {"what": "clock"}),
        Request(1.2, "say", {"what": "move_number"}),
        Request(1.3, "say", {"what": "board"}),
        Request(1.4, "say", {"what": "square", "square": "E4"}),
        Request(1.5, "say", {"what": "piece", "piece": "N", "colour": "both"}),
    ]
    out = run([BoardDump(0.0, START), *requests])
    asked = of_type(out, "info_request")
    assert [(e.t, e.what) for e in asked] == [
        (1.0, "last"),
        (1.1, "clock"),
        (1.2, "move_number"),
        (1.3, "board"),
        (1.4, "square"),
        (1.5, "piece"),
    ]
    assert asked[4].args == {"square": "e4"}
    assert asked[5].args == {"piece": "N", "colour": "both"}
    assert asked[5].to_dict()["args"] == {"piece": "N", "colour": "both"}
    assert of_type(out, "notice") == []
    assert core_board_after(requests) == chess.Board().fen()  # asking changes nothing


def core_board_after(events) -> str:
    core = RulesCore()
    core.judge(BoardDump(0.0, START))
    for event in events:
        core.judge(event)
    return core.board.fen()


def test_a_bad_say_request_is_a_clear_notice_not_a_question():
    bad = [
        Request(1.0, "say", {}),
        Request(1.1, "say", {"what": "weather"}),
        Request(1.2, "say", {"what": "square", "square": "z9"}),
        Request(1.3, "say", {"what": "square"}),
        Request(1.4, "say", {"what": "piece", "piece": "X"}),
        Request(1.5, "say", {"what": "clock", "by": "green"}),
    ]
    out = run([BoardDump(0.0, START), *bad])
    assert of_type(out, "info_request") == []
    notices = of_type(out, "notice")
    assert [n.code for n in notices] == ["bad_request"] * 6
    assert "last, moves, clock" in notices[0].message and "square" in notices[2].message
    assert "piece" in notices[4].message and "args.by" in notices[5].message


def test_a_say_request_names_who_asks_and_where():
    out = run([BoardDump(0.0, START), Request(1.0, "say", {"what": "clock", "by": "black"}),
               Request(1.1, "say", {"what": "last", "by": "white", "to": "page"})])  # fmt: skip
    asked = of_type(out, "info_request")
    assert [(a.what, a.by, a.to, a.args) for a in asked] == [
        ("clock", "black", "", {}),
        ("last", "white", "page", {}),
    ]


def test_penalty_and_arbiter_result_requests():
    out = run(
        [
            BoardDump(0.0, START),
            Request(1.0, "penalty", {"to": "black", "seconds": 120, "article": "7.4"}),
            Request(2.0, "result", {"result": "1/2-1/2"}),
            Request(3.0, "penalty", {"to": "nobody"}),
        ]
    )
    penalty = of_type(out, "penalty")[0]
    assert (penalty.to, penalty.seconds, penalty.article) == ("black", 120.0, "7.4")
    assert [(e.result, e.reason) for e in of_type(out, "game_end")] == [("1/2-1/2", "arbiter")]
    assert [n.code for n in of_type(out, "notice")] == ["bad_request"]


def test_new_game_and_set_position_requests_start_games():
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    out = run([Request(0.0, "new_game"), Request(1.0, "set_position", {"fen": fen})])
    assert [e.fen for e in of_type(out, "game_start")] == [chess.STARTING_FEN, fen]
    out = run([Request(0.0, "set_position", {"fen": "not a fen"})])
    assert [n.code for n in of_type(out, "notice")] == ["bad_request"]


def test_explicit_takeback_in_tournament_mode():
    script = Script().dump().wait(0.5).move("e2", "e4").settle().request("takeback").settle()
    out = run(script.events, NO_CLOCK)
    assert [(e.ply, e.fen) for e in of_type(out, "takeback")] == [(1, chess.STARTING_FEN)]
    assert kinds(out) == [("displaced_pieces", "7.3")]  # e4 must go back to e2
    script.move("e4", "e2").settle().move("d2", "d4").settle()
    out = run(script.events, NO_CLOCK)
    assert played(out) == ["d2d4"]
    assert len(of_type(out, "position_restored")) == 1


def test_correct_last_move_request_replaces_the_move():
    script = Script().dump().wait(0.5).move("e2", "e4").settle()
    script.request("correct_last_move", uci="e2e3")
    out = run(script.events, NO_CLOCK)
    assert [(m.ply, m.uci, m.correction) for m in of_type(out, "move")] == [
        (1, "e2e4", False),
        (1, "e2e3", True),
    ]


def test_accept_position_request_takes_the_board_as_it_stands():
    script = Script().dump().wait(0.5).lift("b1").put("c3", "N").lift("g1").settle()
    script.request("accept_position").wait(0.1).move("e2", "e4").settle()
    out = run(script.events, NO_CLOCK)
    restored = of_type(out, "position_restored")
    assert restored[-1].fen.startswith("rnbqkbnr/pppppppp/8/8/8/2N5/PPPPPPPP/R1BQKB1R w")
    assert played(out) == ["e2e4"]  # the side on move stays the same


def test_magic_pieces_and_connection_changes_are_reported():
    out = run([MagicPiece(1.0, "e4", "draw"), ConnectionChange(2.0, "lost", "read error")])
    assert [(e.type, getattr(e, "code", None)) for e in out] == [
        ("notice", "magic_piece"),
        ("connection", None),
    ]


def test_describe_move_is_injected_into_the_speech_field():
    def describe(board: chess.Board, move: chess.Move, san: str) -> str:
        board.push(move)  # a careless describer cannot spoil the game
        return f"<{board.peek().uci()} {san}>"

    settings = RulesSettings(use_clock=False, describe_move=describe)
    script = Script().dump().wait(0.5).move("g1", "f3").settle().move("e7", "e5").settle()
    out = run(script.events, settings)
    # the words take the move's one SAN, the Move's own
    assert [m.speech for m in of_type(out, "move")] == ["<g1f3 Nf3>", "<e7e5 e5>"]
    fallback = run(Script().dump().wait(0.5).move("g1", "f3").settle().events, NO_CLOCK)
    assert "knight" in of_type(fallback, "move")[0].speech


def test_resume_agreeing_board_emits_game_resumed_without_announcing():
    core = RulesCore(NO_CLOCK)
    assert core.resume(0.0, chess.STARTING_FEN, ["e2e4", "e7e5"], {"white": 1}) == []
    board = chess.Board()
    for uci in ("e2e4", "e7e5"):
        board.push_uci(uci)
    out = core.judge(BoardDump(1.0, board.board_fen()))
    assert [(e.type, e.ply, e.fen) for e in out] == [("game_resumed", 2, board.fen())]
    out = core.judge(SquareChange(2.0, "g1", None)) + core.judge(SquareChange(2.2, "f3", "N"))
    out += core.tick(5.0)
    assert [(e.type, e.ply) for e in out if e.type == "move"] == [("move", 3)]
    core.judge(SquareChange(6.0, "g8", None))
    core.judge(SquareChange(6.2, "g6", "n"))
    illegal = [e for e in core.tick(9.0) if e.type == "irregularity"]
    assert [e.count for e in illegal] == [1]  # black's first; white's count came back as 1


def test_resume_disagreeing_board_asks_for_restore_then_resumes():
    core = RulesCore(NO_CLOCK)
    core.resume(0.0, chess.STARTING_FEN, ["e2e4"], {})
    assert core.judge(BoardDump(1.0, START)) == []  # it must stand for the settle time
    out = core.tick(core.next_deadline())
    assert [(e.type, e.kind) for e in out] == [("irregularity", "displaced_pieces")]
    assert out[0].restore == [{"square": "e2", "piece": None}, {"square": "e4", "piece": "P"}]
    out = core.judge(SquareChange(2.0, "e2", None)) + core.judge(SquareChange(2.3, "e4", "P"))
    assert [e.type for e in out] == ["game_resumed"]
    assert (
        core.board.fen()
        == chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").fen()
    )


def test_resume_a_chess960_game():
    start = chess.Board.from_chess960_pos(3)  # bqnnrkrb: king f1, rook g1
    board = start.copy()
    moves = ["f1g1", "g7g6"]  # the first castles (king takes rook, Chess960 UCI)
    for uci in moves:
        board.push_uci(uci)
    assert board.piece_at(chess.F1) == chess.Piece.from_symbol("R")
    assert board.piece_at(chess.G1) == chess.Piece.from_symbol("K")
    core = RulesCore(RulesSettings(use_clock=False, chess960=True))
    core.resume(0.0, start.fen(), moves, {}, chess960=True)
    out = core.judge(BoardDump(1.0, board.board_fen()))
    assert [e.type for e in out] == ["game_resumed"]
    assert core.board.fen() == board.fen()


def test_next_deadline_and_tick_drive_the_settle_timer():
    core = RulesCore(RulesSettings(use_clock=False, settle_time=0.5))
    core.judge(BoardDump(0.0, START))
    assert core.next_deadline() is None
    core.judge(SquareChange(1.0, "e2", None))
    core.judge(SquareChange(1.2, "e4", "P"))
    assert core.next_deadline() == 1.7
    assert core.tick(1.69) == []
    assert [e.type for e in core.tick(1.7)] == ["move"]
    assert core.next_deadline() is None
    assert core.board.fen().startswith("rnbqkbnr/pppppppp/8/8/4P3")
    assert core.board.move_stack == [chess.Move.from_uci("e2e4")]  # for "last move" and PGN
