"""Resume after a restart: the board may have moved on while the daemon was down.

A legal move of the player on move (complete or in progress) is that move, once
it completes by the usual rules; only a board no move explains is displaced
pieces (7.3). One ``game_resumed`` per restart, whatever the board does.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

import chess
import pytest
from rules_support import Script, kinds, lawful_moves, of_type, played, read_games

from daemon.game.events import DomainEvent
from daemon.rules import RulesCore, RulesSettings
from drivers.sensors import BoardDump, ClockReport, SensorEvent, SquareChange
from drivers.simulators.handling import human_sensor_log

NO_CLOCK = RulesSettings(use_clock=False)
OPENING = ["e2e4", "e7e5", "g1f3", "b8c6"]


def position(moves: Sequence[str]) -> chess.Board:
    board = chess.Board()
    for uci in moves:
        board.push_uci(uci)
    return board


def after_restart(
    journal: Sequence[str],
    events: Sequence[SensorEvent],
    settings: RulesSettings = NO_CLOCK,
) -> tuple[RulesCore, list[DomainEvent]]:
    """A core resumed from ``journal`` fed ``events``, every timer run out."""
    core = RulesCore(settings)
    assert core.resume(0.0, chess.STARTING_FEN, journal, {}) == []
    out: list[DomainEvent] = []
    for event in events:
        out += core.judge(event)
    while (deadline := core.next_deadline()) is not None:
        out += core.tick(deadline)
    return core, out


def board_of(moves: Sequence[str], flipped: bool = False) -> Script:
    """The board as the players left it: ``moves`` played, one second after the restart."""
    return Script(position(moves).fen(), flipped=flipped).wait(1.0)


def test_a_move_completed_while_the_daemon_was_down_is_that_move():
    script = board_of([*OPENING, "f1b5"]).dump()
    core, out = after_restart(OPENING, script.events)
    assert [e.type for e in out] == ["game_resumed", "move"]
    assert (out[0].ply, out[0].fen) == (4, position(OPENING).fen())
    assert (out[1].ply, out[1].uci, out[1].by) == (5, "f1b5", "white")
    assert core.board.fen() == position([*OPENING, "f1b5"]).fen()


def test_a_move_in_progress_at_the_restart_completes_by_the_usual_rules():
    script = board_of(OPENING).lift("f1").dump().wait(2.0)  # the bishop in the hand
    script.put("b5", "B").settle()
    _, out = after_restart(OPENING, script.events)
    assert [e.type for e in out] == ["game_resumed", "move"]
    assert played(out) == ["f1b5"]
    assert kinds(out) == []


def test_a_piece_on_two_squares_at_the_restart_is_a_move_under_way():
    """The bishop set down on b5 before f1 reported empty, when the picture was taken."""
    script = board_of(OPENING).put("b5", "B").dump().wait(0.3).lift("f1").settle()
    _, out = after_restart(OPENING, script.events)
    assert [e.type for e in out] == ["game_resumed", "move"]
    assert played(out) == ["f1b5"]


def test_a_reply_under_way_at_the_restart_completes_both_moves():
    """White moved, black is already replying: as with a fast reply in play."""
    script = board_of([*OPENING, "f1c4"]).lift("f8").dump().wait(0.4).put("c5", "b").settle()
    _, out = after_restart(OPENING, script.events)
    assert [e.type for e in out] == ["game_resumed", "move", "move"]
    assert played(out) == ["f1c4", "f8c5"]
    assert kinds(out) == []


def test_a_capture_half_done_at_the_restart_is_no_displaced_piece():
    moves = ["e2e4", "d7d5"]
    script = board_of(moves).lift("d5").dump().wait(1.0)  # the victim off, e4 still home
    script.lift("e4").put("d5", "P").settle()
    _, out = after_restart(moves, script.events)
    assert [e.type for e in out] == ["game_resumed", "move"]
    assert played(out) == ["e4d5"]


def test_with_a_clock_the_move_waits_for_the_press():
    script = board_of([*OPENING, "f1b5"]).dump().start_clock("white").wait(3.0)
    _, waiting = after_restart(OPENING, script.events, RulesSettings())
    assert of_type(waiting, "move") == []  # no press yet: the hand may go on (6.7)
    script.press()
    _, out = after_restart(OPENING, script.events, RulesSettings())
    assert [e.type for e in out if e.type != "clock"] == ["game_resumed", "move"]
    assert played(out) == ["f1b5"]


def test_a_press_made_while_the_daemon_was_down_is_not_waited_for():
    """The opponent's clock already runs: the mover pressed before the restart."""
    script = board_of([*OPENING, "f1b5"]).start_clock("black").dump().settle()
    _, out = after_restart(OPENING, script.events, RulesSettings())
    assert [e.type for e in out if e.type != "clock"] == ["game_resumed", "move"]
    assert played(out) == ["f1b5"]
    assert kinds(out) == []


def test_a_board_turned_round_showing_the_move_is_that_move():
    script = board_of([*OPENING, "f1c4"], flipped=True).dump()
    _, out = after_restart(OPENING, script.events)
    assert [e.type for e in out] == ["game_resumed", "move"]
    assert played(out) == ["f1c4"]


def test_a_board_no_move_explains_is_displaced_then_resumed_once():
    # two of white's pieces moved: no move of white's, nor a reply, explains that
    script = board_of(OPENING).lift("f3").put("g5", "N").lift("f1").put("c4", "B").dump()
    script.wait(2.0).lift("c4").put("f1", "B").lift("g5").put("f3", "N").settle()
    script.move("f1", "b5").settle()
    _, out = after_restart(OPENING, script.events)
    assert [e.type for e in out] == ["irregularity", "game_resumed", "move"]
    assert kinds(out) == [("displaced_pieces", "7.3")]
    restore = {item["square"]: item["piece"] for item in out[0].restore}
    assert restore == {"f3": "N", "g5": None, "f1": "B", "c4": None}
    assert played(out) == ["f1b5"]


def test_the_previous_position_on_the_board_is_displaced_not_a_move():
    """The journal has a move the board no longer shows (taken back while down)."""
    script = board_of(OPENING[:3]).dump()
    _, out = after_restart(OPENING, script.events)
    assert kinds(out) == [("displaced_pieces", "7.3")]
    assert of_type(out, "game_resumed") == []


def test_nothing_is_decided_before_the_first_whole_board_picture():
    """Square reports before the board dump describe an unknown board."""
    early = [SquareChange(0.5, "f1", None)]
    _, silent = after_restart(OPENING, early)
    assert silent == []
    script = board_of(OPENING).dump()
    _, out = after_restart(OPENING, [*early, *script.events])
    assert [e.type for e in out] == ["game_resumed"]


def test_one_game_resumed_per_restart_through_a_whole_game_of_changes():
    script = board_of(OPENING).dump().move("f1", "c4").settle().move("g8", "f6").settle()
    script.move("d2", "d3").settle()
    _, out = after_restart(OPENING, script.events)
    assert len(of_type(out, "game_resumed")) == 1
    assert played(out) == ["f1c4", "g8f6", "d2d3"]


def board_at(log: Sequence[SensorEvent], cut: int) -> str:
    """What the board shows after the first ``cut`` sensor events: the reconnection's dump."""
    squares = chess.BaseBoard.empty()
    for event in log[:cut]:
        if isinstance(event, BoardDump):
            squares = chess.BaseBoard(event.placement)
        elif isinstance(event, SquareChange):
            square = chess.parse_square(event.square)
            piece = chess.Piece.from_symbol(event.piece) if event.piece else None
            squares.set_piece_at(square, piece)
    return squares.board_fen()


@pytest.mark.parametrize("with_clock", [True, False])
def test_killed_anywhere_in_real_games_the_game_goes_on_without_a_false_alarm(
    shared, with_clock: bool
):
    """Restarted at random sensor events of real games: the journal holds the moves
    decided so far, the board is as the hands left it. Every move is recognised once,
    one game_resumed per restart, no irregularity (the players did nothing wrong)."""
    rng = random.Random(8)
    games = read_games(shared / "data" / "games.pgn", limit=60)
    games = [g for g in games if not g.needs_set_position][:30]
    settings = RulesSettings(use_clock=with_clock)
    for game in games:
        log = human_sensor_log(game.start, game.moves, seed=game.index, with_clock=with_clock)
        cut = rng.randrange(2, len(log) - 1)
        before = RulesCore(settings)
        for event in log[:cut]:
            before.judge(event)  # the daemon until the kill; the journal has its moves
        journal = [m.uci() for m in before.moves]
        t = log[cut].t
        restart: list[SensorEvent] = [BoardDump(t, board_at(log, cut))]
        clocks = [e for e in log[:cut] if isinstance(e, ClockReport)]
        if clocks:  # the link asks the clock for its times at start-up
            restart.append(replace(clocks[-1], t=t))
        _, out = after_restart(journal, [*restart, *log[cut:]], settings)
        context = f"game {game.index}, cut {cut}/{len(log)}, journal ply {len(journal)}"
        assert len(of_type(out, "game_resumed")) == 1, context
        assert kinds(out) == [], context
        assert journal + played(out) == lawful_moves(game), context


def test_article_4_4_castling_begun_before_the_restart_is_not_called_rook_first():
    """The king went to g1 before the restart; only the rook's lift is seen after it."""
    moves = [*OPENING, "f1c4", "g8f6"]
    script = board_of(moves).lift("e1").put("g1", "K").dump().wait(1.0)
    script.move("h1", "f1").settle()
    _, out = after_restart(moves, script.events)
    assert [e.type for e in out] == ["game_resumed", "move"]
    assert played(out) == ["e1g1"]
    assert kinds(out) == []


def _history(journal: Sequence[str], made: Sequence[str]) -> tuple[str, ...]:
    """The placements a board's log shows for ``made`` after ``journal``: each lift
    (a victim first), then the piece set down."""
    board, shown = position(journal), []
    for uci in made:
        move = chess.Move.from_uci(uci)
        placement = chess.BaseBoard(board.board_fen())
        if board.is_capture(move) and not board.is_en_passant(move):
            placement.remove_piece_at(move.to_square)
            shown.append(placement.board_fen())
        placement.remove_piece_at(move.from_square)
        shown.append(placement.board_fen())
        board.push(move)
        shown.append(board.board_fen())
    return tuple(shown)


def test_the_next_move_under_way_when_the_restart_is_decided_binds_no_alarm():
    """Four moves were made while the daemon was down, and the board's log gives
    them with its dump; but White's king is already in the hand for 5. O-O, and the
    hand rests longer than the settle time. That picture follows no line: the
    game was alarmed as displaced pieces, asking for the position of four moves
    before (a lost game on a chain of boards after a SIGKILL, issue 29). The moves
    are recovered up to the position the log ends on, and the castling under way
    completes by the usual rules."""
    journal = OPENING
    made = ["f1b5", "a7a6", "b5a4", "g8f6"]
    shown = position([*journal, *made]).board_fen()
    script = Script(position([*journal, *made]).fen()).wait(1.0)
    script.events.append(BoardDump(script.t, shown, _history(journal, made)))
    script.wait(0.2).lift("e1", after=2.0).put("g1", "K").lift("h1").put("f1", "R").settle()
    _, out = after_restart(journal, script.events)
    assert kinds(out) == []
    [recovered] = of_type(out, "moves_recovered")
    assert (recovered.moves, recovered.how) == (made, "eeprom")
    assert played(out) == [*made, "e1g1"]


def test_a_castling_begun_just_before_the_recovery_is_no_rook_first():
    """After a restart the moves made meanwhile are recovered (with the board's dump,
    when its log gives them); the king's lift for the next move, O-O, was made just
    before that, but a bus board's change comes stamped with when it was asked for,
    after the decision. That lift fell before the recovery and only the rook's
    counted: a false castling_rook_first (a 4-board chain after SIGKILL, issue 29).
    The move after a recovery is not judged by touches (4.3), as after an outage."""
    journal, made = OPENING, ["f1c4", "f8c5", "c2c3", "d7d6"]
    shown = position([*journal, *made]).board_fen()
    core = RulesCore(NO_CLOCK)
    core.resume(0.0, chess.STARTING_FEN, journal, {})
    out = core.judge(BoardDump(1.0, shown, _history(journal, made)))
    deadline = 1.0  # the log's line of moves is recovered with the dump
    assert played(out) == made
    late = [SquareChange(deadline - 0.05, "e1", None), SquareChange(deadline + 0.3, "g1", "K")]
    for event in [*late, SquareChange(deadline + 0.5, "h1", None)]:
        out += core.judge(event)
    out += core.judge(SquareChange(deadline + 0.7, "f1", "R"))
    out += core.tick(deadline + 3.0)
    assert played(out) == [*made, "e1g1"]
    assert kinds(out) == []


def test_moves_the_board_s_log_gives_after_a_restart_are_recovered_not_one_move_under_way():
    """4. cxd5 exd5 5. Bg5 Be7 were made while the daemon was down, and the board's
    log gives them with its dump. That picture is also Black's Be7 "under way" after
    4. Bg5 alone, with c4 and e6 "emptied by a hand": taken so, the next press
    decided 4. Bg5 and the game stood on displaced pieces, three moves lost (a
    4-board chain after SIGKILL, issue 28's fault trials, when the presses came to
    be read sooner). The log's line is the moves made; White's next move and its
    press follow as usual."""
    journal = ["d2d4", "g8f6", "c2c4", "e7e6", "b1c3", "d7d5"]
    made = ["c4d5", "e6d5", "c1g5", "f8e7"]
    shown = position([*journal, *made]).board_fen()
    events: list[SensorEvent] = [
        BoardDump(1.0, shown, _history(journal, made)),
        ClockReport(1.01, 5566, 5539, "white"),
        SquareChange(1.02, "e2", None),
        SquareChange(1.02, "e3", "P"),
        ClockReport(1.05, 5565, 5539, "black"),
        SquareChange(1.06, "e8", None),
        SquareChange(1.06, "h8", None),
        SquareChange(1.2, "g8", "k"),
        SquareChange(1.3, "f8", "r"),
        ClockReport(1.4, 5565, 5538, "white"),
    ]
    _, out = after_restart(journal, events, RulesSettings())
    assert kinds(out) == []
    [recovered] = of_type(out, "moves_recovered")
    # Be7, the line's last, waits for the clock to prove it made (its press): the
    # first report after the restart does (White's clock runs)
    assert (recovered.moves, recovered.how) == (made[:-1], "eeprom")
    assert played(out) == [*made, "e2e3", "e8g8"]


def test_a_piece_slid_through_a_square_on_its_way_is_not_taken_as_its_move():
    """Killed with 6. Ng3 Bg4 in the journal; while the daemon is down White castles
    and presses, and Black slides his queen d8-e7-f6: the board's log holds the queen
    set down on e7, a whole "Qe7". The daemon comes back with the queen on e7 and
    Black's clock running: Qe7 is not proven made. Taken as made, the game stood on
    displaced pieces when the queen landed on f6 (``benchmarks.pihall --restart-at``):
    O-O is recovered, and Black's move is decided at his press, where it landed."""
    journal = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "f7f5", "b1c3", "f5e4", "c3e4",
               "d7d5", "e4g3", "c8g4"]  # fmt: skip
    shown = position([*journal, "e1g1", "d8e7"]).board_fen()
    events: list[SensorEvent] = [
        BoardDump(1.0, shown, _history(journal, ["e1g1", "d8e7"])),
        ClockReport(1.01, 5566, 5539, "black"),
        SquareChange(1.3, "e7", None),
        SquareChange(1.6, "f6", "q"),
        ClockReport(2.0, 5566, 5538, "white"),
    ]
    _, out = after_restart(journal, events, RulesSettings())
    assert kinds(out) == []
    [recovered] = of_type(out, "moves_recovered")
    assert (recovered.moves, recovered.how) == (["e1g1"], "eeprom")
    assert played(out) == ["e1g1", "d8f6"]
    assert [e.type for e in out if e.type in ("move", "moves_recovered")][-1] == "move"
