"""The arbiter's corrections, as requests in sensor logs (``daemon/rules/corrections.py``).

Each is a line of the sensor log (``{"request": "enter_moves", "args": {...}}``), so
a replay gives the same feed as the live daemon. Each is all or nothing: a bad one
is a ``bad_request`` notice saying why, and the game goes on as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import chess
import pytest

from daemon.cli import main
from daemon.game.events import DomainEvent
from daemon.rules import RulesCore
from drivers.sensorlog import write_event
from drivers.sensors import BoardDump, ConnectionChange, Request, SensorEvent
from tests.rules.rules_support import Script, game, kinds, of_type, played, run, settings
from tests.rules.test_rules_recovery import ruy_lopez_log, with_outage

OPENING = [("e2", "e4"), ("e7", "e5"), ("g1", "f3"), ("b8", "c6"), ("f1", "b5")]


def opening(moves: list[tuple[str, str]] = OPENING) -> Script:
    script = game(clock=False)
    for frm, to in moves:
        script.move(frm, to).settle()
    return script


def notices(out: list[DomainEvent]) -> list[str]:
    return [e.message for e in of_type(out, "notice") if e.code == "bad_request"]  # type: ignore[attr-defined]


# -- choose one of the offered lines ---------------------------------------------------


def ambiguous_outage() -> tuple[list[chess.Move], list[SensorEvent], float]:
    """Nc6 Bb5 a6 made while a board without an EEPROM log was out of reach: a6 Bb5
    Nc6 leads there too, so the core offers both lines and the arbiter decides."""
    moves, log = ruy_lopez_log()
    cut = with_outage(log, 2, 5, eeprom=False)
    back = next(e.t for e in cut if isinstance(e, ConnectionChange) and e.state == "connected")
    return moves, cut, back


def decided(log: list[SensorEvent], *requests: Request) -> list[SensorEvent]:
    """The arbiter's requests made as soon as the board is back (after its picture
    and the clock's times), before the players go on."""
    index = next(i for i, e in enumerate(log) if isinstance(e, BoardDump) and e.t > 1) + 2
    return [*log[:index], *requests, *log[index:]]


def test_the_line_the_arbiter_chooses_is_played_and_the_game_goes_on() -> None:
    moves, log, back = ambiguous_outage()
    line = "2...Nc6 3. Bb5 a6"
    out = run(decided(log, Request(back, "choose_line", {"line": line})))
    assert played(out) == [m.uci() for m in moves]  # the later moves counted as ever
    offered, chosen = of_type(out, "moves_recovered")
    assert offered.how == "ambiguous" and line in offered.candidates  # type: ignore[attr-defined]
    assert (chosen.how, chosen.san) == ("arbiter", line)  # type: ignore[attr-defined]
    assert chosen.moves == ["b8c6", "f1b5", "a7a6"]  # type: ignore[attr-defined]
    assert kinds(out) == []  # the board showed the line's end: nothing displaced


def test_the_other_line_is_the_arbiters_choice_too() -> None:
    """The transposition: a6 first. The record holds the arbiter's order."""
    moves, log, back = ambiguous_outage()
    line = "2...a6 3. Bb5 Nc6"
    out = run(decided(log, Request(back, "choose_line", {"line": line})))
    assert played(out)[3:6] == ["a7a6", "f1b5", "b8c6"]
    assert played(out)[6:] == [m.uci() for m in moves[6:]]


def test_a_line_that_does_not_lead_to_the_board_is_refused_and_changes_nothing() -> None:
    _, log, back = ambiguous_outage()
    request = Request(back, "choose_line", {"line": "2...Nc6 3. Bc4 a6"})
    out = run(decided(log, request))
    [message] = notices(out)
    assert message.startswith("choose_line: 2...Nc6 3. Bc4 a6 does not lead to the position")
    plain = run(log)
    assert played(out) == played(plain)
    assert [e.to_dict() for e in out if e.type != "notice"] == [
        e.to_dict() for e in plain if e.type != "notice"
    ]


# -- moves from a scoresheet -----------------------------------------------------------


def test_moves_entered_from_a_scoresheet_are_played_and_the_board_then_goes_on() -> None:
    """The board missed three moves (say it was off): the arbiter types them in, the
    players set the board to match, and the next move on the board is ply 6."""
    script = opening(OPENING[:2])
    script.request("enter_moves", san="2. Nf3 Nc6 3. Bb5").wait(0.1)
    for frm, to in OPENING[2:]:  # the pieces set as the scoresheet says, no move of it
        script.move(frm, to).wait(0.1)
    script.settle().move("a7", "a6").settle()
    out = run(script.events, settings(False))
    assert played(out) == ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]
    assert [m.ply for m in of_type(out, "move")] == [1, 2, 3, 4, 5, 6]  # type: ignore[attr-defined]
    assert kinds(out) == []


def test_moves_typed_in_get_the_clock_of_their_own_press_or_none() -> None:
    """[%clk] of a move typed in is the clock when it was played: the presses seen
    since the board's last move, one per ply; past them no time is known, and none is
    written (not the time the arbiter typed it)."""
    from daemon.game.record import replay

    script = game(clock=True)
    for frm, to in OPENING[:2]:
        script.move(frm, to).press()
    script.wait(5).press().wait(7).press()  # Nf3 and Nc6 played, the board missed them
    script.wait(30).request("enter_moves", san="2. Nf3 Nc6 3. Bb5").wait(0.1)
    out = run(script.events, settings(True))
    moves = of_type(out, "move")
    assert [m.uci for m in moves] == ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"]  # type: ignore[attr-defined]
    assert [m.entered for m in moves] == [False, False, True, True, True]  # type: ignore[attr-defined]
    assert [m.clock for m in moves[2:]] == [  # type: ignore[attr-defined]
        {"white": 296.0, "black": 298.0},
        {"white": 296.0, "black": 296.0},
        None,
    ]
    pgn = " ".join(replay([e.to_dict() for e in out]).pgn().split())
    assert "2. Nf3 { [%clk 0:04:56] } 2... Nc6 { [%clk 0:04:56] } 3. Bb5 *" in pgn


def test_a_game_typed_in_has_no_clock() -> None:
    script = game(clock=True)
    script.move("e2", "e4").press().wait(3)
    script.request("add_game", pgn="1. d4 d5 2. c4 1-0").wait(0.1)
    out = run(script.events, settings(True))
    added = of_type(out, "move")[1:]
    assert [m.clock for m in added] == [None, None, None]  # type: ignore[attr-defined]
    from daemon.game.record import replay

    assert "[%clk" not in replay([e.to_dict() for e in out]).pgn()


def test_a_preview_changes_nothing() -> None:
    script = opening()
    script.request("enter_moves", san="3...a6", preview=True).wait(0.1)
    script.request("takeback_to", ply=0, preview=True).wait(0.1)
    script.request("add_game", pgn="1. d4 d5 1-0", preview=True).wait(0.1)
    without = opening()
    assert [e.to_dict() for e in run(script.events)] == [e.to_dict() for e in run(without.events)]


@pytest.mark.parametrize(
    ("san", "reason"),
    [
        ("3...Nf3", "enter_moves: 3...Nf3 is not a legal move in this position (Black to move)"),
        ("3...a6 4. Bxe9", "enter_moves: 4. Bxe9 is not a move in SAN"),
        ("4. a6", "enter_moves: 4. a6: the game is at 3... (Black to move), not at 4."),
        (
            "3...a6 4. Ba4 Nf6 5. d3 d6 6. Nd2",
            "6. Nd2 is ambiguous: say which piece (Nbd2 or Nfd2)",
        ),
    ],
)
def test_a_move_that_does_not_read_is_refused_with_its_reason(san: str, reason: str) -> None:
    script = opening()
    script.request("enter_moves", san=san).wait(0.1)
    script.move("a7", "a6").settle()
    out = run(script.events, settings(False))
    [message] = notices(out)
    assert reason in message
    assert played(out) == ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]  # nothing changed


# -- take back to any ply --------------------------------------------------------------


def test_takeback_to_a_ply_and_replay_from_there() -> None:
    """Back to the position after 2...Nc6 (ply 4): one takeback; while the board
    still shows 3. Bb5 a6 nothing of them is counted again (displaced pieces, with
    what to put back); restored, the game goes on with another move at ply 5."""
    script = opening()
    script.move("a7", "a6").settle()
    script.request("takeback_to", ply=4).settle()
    script.move("a6", "a7").move("b5", "f1").settle()
    script.move("f1", "c4").settle()
    out = run(script.events, settings(False))
    [takeback] = of_type(out, "takeback")
    assert takeback.ply == 5  # type: ignore[attr-defined]
    assert takeback.fen.startswith("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w")  # type: ignore[attr-defined]
    assert played(out) == ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]
    [alarm] = of_type(out, "irregularity")
    assert alarm.kind == "displaced_pieces"  # type: ignore[attr-defined]
    assert {r["square"] for r in alarm.restore} == {"a6", "a7", "b5", "f1"}  # type: ignore[attr-defined]
    assert len(of_type(out, "position_restored")) == 1


@pytest.mark.parametrize("ply", [6, -1, 99])
def test_a_ply_out_of_range_is_refused(ply: int) -> None:
    script = opening()
    script.request("takeback_to", ply=ply).wait(0.1)
    out = run(script.events, settings(False))
    [message] = notices(out)
    assert message == (
        f"takeback_to: ply {ply} is out of range: the game goes back to a ply from 0 "
        "(its start) to 4"
    )
    assert played(out) == ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"]


# -- correct a past move ---------------------------------------------------------------


def test_a_past_move_corrected_and_the_later_moves_replayed_on_it() -> None:
    """2. Nf3 was 2. Nc3 (the board misread it): ply 3 replaced, plies 4 and 5
    replayed on it as they were written, each a correction of its ply."""
    script = opening()
    script.request("correct_move", ply=3, san="Nc3").wait(0.1)
    out = run(script.events, settings(False))
    corrected = [m for m in of_type(out, "move") if m.correction]  # type: ignore[attr-defined]
    assert [(m.ply, m.san) for m in corrected] == [(3, "Nc3"), (4, "Nc6"), (5, "Bb5")]  # type: ignore[attr-defined]
    assert played(out) == ["e2e4", "e7e5", "b1c3", "b8c6", "f1b5"]
    assert corrected[-1].fen.startswith("r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/2N5/PPPP1PPP/R1BQK1NR b")  # type: ignore[attr-defined]


def test_a_correction_the_later_moves_do_not_replay_on_is_refused() -> None:
    script = opening()
    script.request("correct_move", ply=1, san="d4").wait(0.1)
    out = run(script.events, settings(False))
    [message] = notices(out)
    assert message == (
        "correct_move: with 1. d4 at ply 1, the later move 3. Bb5 is not a legal move in "
        "this position (White to move); nothing is changed (take back to ply 0 and enter "
        "the moves from there)"
    )
    assert played(out) == ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"]
    assert not any(m.correction for m in of_type(out, "move"))  # type: ignore[attr-defined]


def test_a_game_corrected_after_its_end_stays_ended() -> None:
    """Fool's mate played, then the arbiter corrects 1. f3 to 1. f4: the mate still
    stands (the later moves replay, and their end is decided again), the game stays
    over, and clearing the board raises nothing."""
    script = opening([("f2", "f3"), ("e7", "e5"), ("g2", "g4"), ("d8", "h4")])
    script.request("correct_move", ply=1, uci="f2f4").settle()
    for square in ("h4", "g4", "e5"):
        script.lift(square)
    script.settle()
    out = run(script.events, settings(False))
    assert {e.result for e in of_type(out, "game_end")} == {"0-1"}  # type: ignore[attr-defined]
    assert played(out)[0] == "f2f4"
    assert kinds(out) == []


# -- the position: from the board, from a FEN ------------------------------------------


def test_the_position_the_board_shows_becomes_the_game() -> None:
    """The game cannot be told (pieces knocked, moves lost): the arbiter takes the
    board as it stands, Black to move; Black's next move is its first move."""
    script = opening()
    script.move("a2", "a3").settle()  # White's pawn, Black to move: knocked (7.3)
    script.request("position_from_board").wait(0.1)  # Black to move, as in the game
    script.move("g8", "f6").settle()
    out = run(script.events, settings(False))
    assert kinds(out) == [("displaced_pieces", "7.3")]
    start = of_type(out, "game_start")[-1]
    assert start.fen == "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/P4N2/1PPP1PPP/RNBQK2R b KQkq - 0 3"  # type: ignore[attr-defined]
    assert played(out[out.index(start) :]) == ["g8f6"]


def test_a_board_showing_no_possible_position_is_refused() -> None:
    script = opening()
    script.lift("e8").settle()
    script.request("position_from_board").wait(0.1)
    out = run(script.events, settings(False))
    assert notices(out) == [
        "position_from_board: the board shows no position a game can have: there is no black king"
    ]
    assert len(of_type(out, "game_start")) == 1


# -- a complete game -------------------------------------------------------------------

PGN = """[Event "Club"]
[White "Anna"]
[Black "Bert"]
[Round "3"]
[Result "1-0"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 {the Ruy Lopez} a6 4. Ba4 Nf6 1-0
"""


def test_a_complete_game_is_started_named_played_and_ended() -> None:
    script = game(clock=False)
    script.request("add_game", pgn=PGN).settle()
    out = run(script.events, settings(False))
    types = [e.type for e in out]
    assert types == ["game_start", "game_start", "players", *["move"] * 8, "game_end"]
    [names] = of_type(out, "players")
    assert (names.white, names.black, names.round) == ("Anna", "Bert", "3")  # type: ignore[attr-defined]
    assert played(out) == ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6"]
    assert (out[-1].result, out[-1].reason) == ("1-0", "arbiter")  # type: ignore[attr-defined]
    assert kinds(out) == []  # the board (the start position) is no alarm after the end


def test_a_game_with_an_illegal_move_is_refused_naming_it() -> None:
    script = game(clock=False)
    script.request("add_game", pgn="1. e4 e5 2. Nf3 Nc6 3. Bb6 a6 1-0").settle()
    out = run(script.events, settings(False))
    assert notices(out) == ["add_game: 3. Bb6 is not a legal move in this position (White to move)"]
    assert [e.type for e in out] == ["game_start", "notice"]


# -- replay ----------------------------------------------------------------------------


def test_replay_of_a_sensor_log_with_corrections_gives_the_same_feed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The log as the daemon would record it, requests included: ``dgt-bridge replay``
    prints the feed the core gave."""
    script = opening()
    script.request("correct_move", ply=3, san="Nc3").wait(0.1)
    script.request("takeback_to", ply=4).wait(0.1)
    script.request("enter_moves", san="3. Bc4 Nf6").wait(0.1)
    script.request("enter_moves", san="4. Ke9").wait(0.1)
    script.move("b5", "c4").move("f3", "c3").move("g8", "f6").settle()
    log = script.events
    path = tmp_path / "mended.jsonl"
    with path.open("w") as stream:
        for event in log:
            write_event(stream, event)
    assert main(["replay", "--fast", str(path)]) == 0
    feed = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    expected = [e.to_dict() for e in run(log)]

    def plain(events: list[dict]) -> list[dict]:  # the spoken words are the replay's own
        return [{**e, "speech": None} for e in events if e["type"] != "clock"]

    assert plain(feed) == plain(expected)
    refused = [e["message"] for e in feed if e["type"] == "notice"]
    assert [m.split(" (")[0] for m in refused] == ["enter_moves: 4. Ke9 is not a move in SAN"]
    assert played(run(log)) == ["e2e4", "e7e5", "b1c3", "b8c6", "f1c4", "g8f6"]


def test_after_a_restart_the_line_chosen_resumes_the_game() -> None:
    """The daemon restarted (journal: 1. e4 e5 2. Nf3) while Nc6 Bb5 a6 were made;
    the board has no log, so two lines lead to its position. The arbiter's choice
    resumes the game at the journal's ply, then plays the line."""
    core = RulesCore(settings(False))
    core.resume(0.0, chess.STARTING_FEN, ["e2e4", "e7e5", "g1f3"])
    board = chess.Board()
    for san in ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]:
        board.push_san(san)
    out = core.judge(BoardDump(1.0, board.board_fen()))
    out += core.tick(5.0)
    [offered] = of_type(out, "moves_recovered")
    assert offered.how == "ambiguous"  # type: ignore[attr-defined]
    out = core.judge(Request(6.0, "choose_line", {"line": "2...a6 3. Bb5 Nc6"}))
    assert [e.type for e in out] == ["game_resumed", "move", "move", "move", "moves_recovered"]
    assert out[0].ply == 3  # type: ignore[attr-defined]
    assert [m.uci() for m in core.moves][3:] == ["a7a6", "f1b5", "b8c6"]
    assert not core.resuming
