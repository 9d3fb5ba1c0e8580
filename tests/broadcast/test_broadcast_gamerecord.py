"""The fold every display shares: what a viewer sees after each event."""

from __future__ import annotations

import io
import math

import chess
import chess.pgn
from broadcast_feed import OPERA_GAME, game_feed, moves_only
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.game import events
from daemon.game.record import GameHeaders, GameRecord, format_clock, pgn_of_games, replay


def _read(pgn: str) -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None, pgn
    return game


def test_whole_game_gives_the_position_and_pgn_with_clocks():
    feed = game_feed(result="1-0")
    headers = GameHeaders(event="Paris", site="Opera", round="1", white="Morphy", black="Duke")
    record = replay(feed, headers)

    expected = chess.Board()
    for uci in OPERA_GAME:
        expected.push_uci(uci)
    assert record.board().fen() == expected.fen()
    assert record.board().is_checkmate()
    assert record.last_move is not None and record.last_move.san == "Rd8#"

    game = _read(record.pgn())
    assert list(game.headers.keys())[:7] == [
        "Event", "Site", "Date", "Round", "White", "Black", "Result",
    ]  # fmt: skip
    assert game.headers["White"] == "Morphy" and game.headers["Result"] == "1-0"
    assert [m.uci() for m in game.mainline_moves()] == OPERA_GAME
    for node, move_event in zip(game.mainline(), moves_only(feed), strict=True):
        mover_clock = move_event["clock"][move_event["by"]]
        assert node.clock() == math.floor(mover_clock)


def test_pgn_grows_move_by_move_and_is_unfinished_until_the_result():
    record = GameRecord()
    feed = game_feed(OPERA_GAME[:6])
    for event in feed:
        record.apply(event)
        game = _read(record.pgn())
        assert [m.uci() for m in game.mainline_moves()] == [m.uci for m in record.moves]
        assert game.headers["Result"] == "*"
    assert len(record.moves) == 6


def test_a_correction_replaces_the_move_and_drops_later_ones():
    record = replay(game_feed(OPERA_GAME[:4]))
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    corrected = chess.Move.from_uci("b1c3")
    san = board.san(corrected)
    board.push(corrected)
    record.apply(
        events.Move(
            t=99, ply=3, uci="b1c3", san=san, fen=board.fen(), by="white", speech="",
            correction=True,
        ).to_dict()
    )  # fmt: skip
    assert [m.uci for m in record.moves] == ["e2e4", "e7e5", "b1c3"]
    assert record.board().fen() == board.fen()
    assert "Nc3" in record.pgn() and "Nf3" not in record.pgn()


def test_takeback_removes_the_move_and_later_ones():
    record = replay(game_feed(OPERA_GAME[:4]))
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    record.apply(events.Takeback(t=50, ply=3, fen=board.fen()).to_dict())
    assert [m.uci for m in record.moves] == ["e2e4", "e7e5"]
    assert record.board().fen() == board.fen()
    assert record.state()["turn"] == "white"


def test_irregularity_stays_open_until_restored_or_the_next_move():
    feed = game_feed(OPERA_GAME[:3])
    record = replay(feed[:-2])  # two moves played
    irregular = events.Irregularity(
        t=30, kind="illegal_move", article="7.4", by="white", squares=["f1", "f3"], count=1
    ).to_dict()
    record.apply(irregular)
    assert record.state()["irregularity"]["kind"] == "illegal_move"
    record.apply(events.ClockUpdate(t=31, white=200, black=200, running="white").to_dict())
    assert record.irregularity is not None, "a clock tick does not put the board right"
    record.apply(events.PositionRestored(t=32, fen=record.board().fen()).to_dict())
    assert record.state()["irregularity"] is None

    record.apply(irregular)
    record.apply(feed[-2])  # the game goes on: white's third move
    assert record.irregularity is None


def test_clocks_latest_and_at_each_move():
    feed = game_feed(OPERA_GAME[:4])
    record = replay(feed)
    last_clock = feed[-1]
    assert record.clock is not None
    assert (record.clock["white"], record.clock["black"]) == (
        last_clock["white"],
        last_clock["black"],
    )
    assert record.clock["running"] == "white"
    second = moves_only(feed)[1]
    assert record.clock_at(2) == second["clock"]


def test_move_without_clock_takes_the_latest_clock_seen():
    record = GameRecord()
    record.apply(events.GameStart(t=0, fen=chess.STARTING_FEN).to_dict())
    record.apply(events.ClockUpdate(t=1, white=61.5, black=60, running="white").to_dict())
    board = chess.Board()
    board.push_uci("d2d4")
    record.apply(
        events.Move(t=2, ply=1, uci="d2d4", san="d4", fen=board.fen(), by="white", speech="")
        .to_dict()
    )  # fmt: skip
    assert "[%clk 0:01:01]" in record.pgn()


def test_non_standard_start_gets_setup_and_fen():
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 40"
    record = GameRecord()
    record.apply(events.GameStart(t=0, fen=fen).to_dict())
    board = chess.Board(fen)
    board.push_uci("e2e4")
    record.apply(
        events.Move(t=1, ply=1, uci="e2e4", san="e4", fen=board.fen(), by="white", speech="")
        .to_dict()
    )  # fmt: skip
    game = _read(record.pgn())
    assert game.headers["SetUp"] == "1" and game.headers["FEN"] == fen
    assert game.end().board().fen() == board.fen()
    assert "40. e4" in record.pgn()


def test_new_game_clears_result_moves_and_irregularity_but_keeps_headers():
    record = replay(game_feed(result="1-0"), GameHeaders(white="A", black="B"))
    record.apply(events.Irregularity(t=500, kind="displaced_pieces", article="7.3", by=None)
                 .to_dict())  # fmt: skip
    record.apply(events.GameStart(t=600, fen=chess.STARTING_FEN).to_dict())
    assert record.moves == [] and record.result is None and record.irregularity is None
    assert _read(record.pgn()).headers["White"] == "A"
    assert _read(record.pgn()).headers["Result"] == "*"


def test_malformed_and_unknown_events_change_nothing():
    record = replay(game_feed(OPERA_GAME[:2]))
    before = record.state()
    for junk in (
        {"type": "move", "t": 5},
        {"type": "move", "ply": "x", "uci": "e2e4", "fen": "", "t": 1},
        {"type": "clock", "white": "soon"},
        {"type": "game_start", "fen": "not a fen"},
        {"type": "telepathy", "t": 3},
        {"no": "type"},
        "not a dict",
    ):
        record.apply(junk)  # type: ignore[arg-type]
    assert record.state() == before


def test_resumed_game_on_a_late_display_starts_from_the_resumed_position():
    board = chess.Board()
    for uci in OPERA_GAME[:10]:
        board.push_uci(uci)
    record = GameRecord()
    record.apply(events.GameResumed(t=0, ply=10, fen=board.fen()).to_dict())
    assert record.board().fen() == board.fen()
    assert _read(record.pgn()).headers["FEN"] == board.fen()


def test_several_boards_in_one_file():
    one = replay(game_feed(OPERA_GAME[:3]), GameHeaders(white="One"))
    two = replay(game_feed(OPERA_GAME[:5]), GameHeaders(white="Two"))
    text = pgn_of_games([one, two])
    stream = io.StringIO(text)
    games = [chess.pgn.read_game(stream), chess.pgn.read_game(stream)]
    assert [g.headers["White"] for g in games if g] == ["One", "Two"]
    assert [len(list(g.mainline_moves())) for g in games if g] == [3, 5]


def test_clock_format():
    assert format_clock(5400) == "1:30:00"
    assert format_clock(59.9) == "0:00:59"
    assert format_clock(-3) == "0:00:00"


def test_state_round_trips_for_a_display_joining_late():
    feed = game_feed(OPERA_GAME[:9])
    record = replay(feed, GameHeaders(white="Morphy", extra={"Board": "2"}))
    record.apply(events.Irregularity(t=999, kind="displaced_pieces", article="7.3", by=None)
                 .to_dict())  # fmt: skip
    again = GameRecord.from_state(record.state())
    assert again.state() == record.state()
    assert again.pgn() == record.pgn()
    again.apply(feed[-1])
    assert again.board().fen() == record.board().fen()


@given(st.lists(st.tuples(st.sampled_from(["play", "takeback", "correct"]),
                          st.integers(0, 10_000)), max_size=40))  # fmt: skip
@settings(max_examples=60, deadline=None)
def test_any_mix_of_moves_corrections_and_takebacks_folds_to_the_true_game(steps):
    record = GameRecord()
    record.apply(events.GameStart(t=0, fen=chess.STARTING_FEN).to_dict())
    model = chess.Board()
    for t, (action, pick) in enumerate(steps, start=1):
        if action == "takeback" and model.move_stack:
            ply = len(model.move_stack)
            model.pop()
            record.apply(events.Takeback(t=t, ply=ply, fen=model.fen()).to_dict())
            continue
        correction = action == "correct" and bool(model.move_stack)
        if correction:
            model.pop()
        legal = sorted(model.legal_moves, key=lambda m: m.uci())
        if not legal:
            continue
        move = legal[pick % len(legal)]
        san, by = model.san(move), "white" if model.turn == chess.WHITE else "black"
        model.push(move)
        record.apply(
            events.Move(t=t, ply=len(model.move_stack), uci=move.uci(), san=san,
                        fen=model.fen(), by=by, speech=san, correction=correction).to_dict()
        )  # fmt: skip
    assert [m.uci for m in record.moves] == [m.uci() for m in model.move_stack]
    assert record.board().fen() == model.fen()
    game = _read(record.pgn())
    assert list(game.mainline_moves()) == model.move_stack


#: What the arbiter and the board add between a game's moves, PGN or not.
_ASIDES = [
    {"type": "clock", "white": 250.0, "black": 240.0, "running": "white"},
    {"type": "penalty", "to": "black", "seconds": 120.0, "article": "7.4b"},
    {"type": "players", "white": "Anderssen", "round": "4"},
    {"type": "connection", "state": "lost"},
    {"type": "irregularity", "kind": "illegal_position", "article": "7.4", "detail": "x"},
    {"type": "draw_claimable", "reason": "fifty_moves", "ply": 3},
    {"type": "takeback", "ply": 2},
    {"type": "game_end", "result": "1/2-1/2", "reason": "agreed"},
    {"type": "moves_recovered", "how": "ambiguous", "candidates": ["e4 e5"]},
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.sampled_from(_ASIDES)), max_size=8))
def test_the_pgn_never_changes_while_its_key_stays(asides):
    """MQTT's retained PGN and the lichess push are made again only when
    ``pgn_key`` changes: a changed PGN (a penalty, names, a takeback, a move) must
    change the key. (A clock report changes neither.)"""
    feed = game_feed(OPERA_GAME[:6])
    for at, aside in sorted(asides, key=lambda pair: -pair[0]):
        feed.insert(min(at, len(feed) - 1) + 1, {**aside, "t": feed[min(at, len(feed) - 1)]["t"]})
    record = GameRecord(GameHeaders(event="Paris", white="Morphy", black="Duke"))
    key, pgn = record.pgn_key(), record.pgn()
    for event in feed:
        record.apply(event)
        new_key, new_pgn = record.pgn_key(), record.pgn()
        assert new_key != key or new_pgn == pgn, (event, pgn, new_pgn)
        key, pgn = new_key, new_pgn
