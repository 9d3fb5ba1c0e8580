"""The human-handling model makes every handling variety, reproducibly."""

from __future__ import annotations

import itertools

import chess
from rules_support import kinds, played, run

from daemon.rules import RulesSettings
from drivers.sensors import BoardDump, ClockReport, SquareChange
from drivers.simulators.handling import ALL, IRREGULAR, human_sensor_log

SCHOLAR = ["e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6", "h5f7"]


def _moves(board: chess.Board, ucis: list[str]) -> list[chess.Move]:
    board = board.copy()
    moves = []
    for uci in ucis:
        moves.append(board.parse_uci(uci))
        board.push(moves[-1])
    return moves


def _changes(log) -> list[tuple[str, str | None]]:
    return [(e.square, e.piece) for e in log if isinstance(e, SquareChange)]


def test_same_seed_same_log_other_seed_other_log():
    moves = _moves(chess.Board(), SCHOLAR)
    one = human_sensor_log(chess.Board(), moves, seed=5, with_clock=True)
    assert one == human_sensor_log(chess.Board(), moves, seed=5, with_clock=True)
    assert one != human_sensor_log(chess.Board(), moves, seed=6, with_clock=True)


def test_log_starts_with_the_board_and_times_never_go_back():
    moves = _moves(chess.Board(), SCHOLAR)
    log = human_sensor_log(chess.Board(), moves, seed=1, with_clock=True, start_time=100.0)
    assert log[0] == BoardDump(100.0, chess.STARTING_BOARD_FEN)
    assert all(a.t <= b.t for a, b in itertools.pairwise(log))


def test_clock_is_pressed_after_each_move_and_counts_down():
    moves = _moves(chess.Board(), SCHOLAR)
    log = human_sensor_log(chess.Board(), moves, seed=2, with_clock=True)
    reports = [e for e in log if isinstance(e, ClockReport)]
    switches = [
        (a.running, b.running)
        for a, b in itertools.pairwise(reports)
        if a.running and a.running != b.running
    ]
    assert len(switches) == len(moves)
    assert reports[-1].white < 5400 + 30 * 4 and reports[-1].black < 5400 + 30 * 3
    assert not any(
        isinstance(e, ClockReport)
        for e in human_sensor_log(chess.Board(), moves, seed=2, with_clock=False)
    )


def test_each_capture_order_appears():
    board = chess.Board()
    moves = _moves(board, ["e2e4", "d7d5", "e4d5"])
    seen = set()
    for seed in range(40):
        for style in ("capture_victim_first", "capture_capturer_first", "capture_direct"):
            log = human_sensor_log(board, moves, seed=seed, with_clock=False, styles={style})
            tail = _changes(log)[-3:]
            if tail == [("d5", None), ("e4", None), ("d5", "P")]:
                seen.add("victim_first")
            elif tail == [("e4", None), ("d5", None), ("d5", "P")]:
                seen.add("capturer_first")
            elif _changes(log)[-2:] == [("e4", None), ("d5", "P")]:
                seen.add("direct")
    assert seen == {"victim_first", "capturer_first", "direct"}


def test_captured_piece_parked_on_a_neighbouring_square():
    moves = _moves(chess.Board(), ["e2e4", "d7d5", "e4d5"])
    log = human_sensor_log(chess.Board(), moves, seed=0, with_clock=False, styles={"capture_park"})
    parked = _changes(log)[-2:]
    square = parked[0][0]
    assert parked == [(square, "p"), (square, None)]
    assert chess.square_distance(chess.parse_square(square), chess.D5) == 1


def test_slides_report_the_squares_in_between():
    moves = _moves(chess.Board(), ["e2e4", "e7e5", "d1h5"])
    for seed in range(30):
        log = human_sensor_log(chess.Board(), moves, seed=seed, with_clock=False, styles={"slide"})
        if ("e2", "Q") in _changes(log):
            assert ("f3", "Q") in _changes(log) and ("g4", "Q") in _changes(log)
            return
    raise AssertionError("no slide in 30 seeds")


def test_castling_styles_and_rook_first_only_on_request():
    moves = _moves(chess.Board(), ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1"])
    firsts = set()
    for seed in range(30):
        log = human_sensor_log(chess.Board(), moves, seed=seed, with_clock=False)
        lifts = [sq for sq, piece in _changes(log) if piece is None and sq in ("e1", "h1")]
        firsts.add(lifts[0])
    assert firsts == {"e1"}  # ALL never touches the rook first
    assert "castle_rook_first" in IRREGULAR and "castle_rook_first" not in ALL
    log = human_sensor_log(
        chess.Board(), moves, seed=0, with_clock=False, styles={"castle_rook_first"}
    )
    assert _changes(log)[-4:] == [("h1", None), ("f1", "R"), ("e1", None), ("g1", "K")]


def test_promotion_directly_and_via_the_pawn_with_underpromotion():
    board = chess.Board("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1")
    moves = [chess.Move.from_uci("b7b8n")]
    direct = human_sensor_log(board, moves, seed=1, with_clock=False, styles={"promote_direct"})
    assert _changes(direct) == [("b7", None), ("b8", "N")]
    via = human_sensor_log(board, moves, seed=1, with_clock=False, styles={"promote_via_pawn"})
    assert _changes(via)[:2] == [("b7", None), ("b8", "P")]
    assert _changes(via)[-1] == ("b8", "N")


def test_en_passant_both_orders():
    board = chess.Board("4k3/3p4/8/4P3/8/8/8/4K3 b - - 0 1")
    moves = _moves(board, ["d7d5", "e5d6"])
    victim = human_sensor_log(board, moves, seed=1, with_clock=False, styles={"ep_victim_first"})
    pawn = human_sensor_log(board, moves, seed=1, with_clock=False, styles={"ep_pawn_first"})
    assert _changes(victim)[-3:] == [("d5", None), ("e5", None), ("d6", "P")]
    assert _changes(pawn)[-3:] == [("e5", None), ("d6", "P"), ("d5", None)]


def test_turned_board_reports_mirrored_squares():
    moves = _moves(chess.Board(), ["e2e4"])
    log = human_sensor_log(
        chess.Board(), moves, seed=1, with_clock=False, flipped=True, styles={"plain"}
    )
    assert log[0].placement == "RNBKQBNR/PPPPPPPP/8/8/8/8/pppppppp/rnbkqbnr"
    assert _changes(log) == [("d7", None), ("d5", "P")]


def test_every_style_alone_still_replays_exactly():
    moves = _moves(chess.Board(), SCHOLAR)
    for style in sorted(ALL):
        for with_clock in (True, False):
            log = human_sensor_log(
                chess.Board(), moves, seed=9, with_clock=with_clock, styles={style}
            )
            out = run(log, RulesSettings())
            assert played(out) == SCHOLAR, style
            assert kinds(out) == [], style
