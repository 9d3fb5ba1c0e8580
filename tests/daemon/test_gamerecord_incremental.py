"""The game record's PGN and board, kept up to date a move at a time, are what a
replay of the whole game from the start gives: after every event of real games, a
takeback, a correction, a start position with Black to move and a move that does
not replay."""

from __future__ import annotations

import io
import itertools
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from daemon.game import events
from daemon.game.record import GameHeaders, GameRecord, format_clock


def _whole_game_pgn(record: GameRecord) -> str:
    """The PGN as python-chess writes the whole game at once (the record's moves
    replayed from the start, up to the first that is not legal)."""
    board = chess.Board(record.start_fen, chess960=record.chess960)
    game = chess.pgn.Game()
    game.setup(board)
    node: chess.pgn.GameNode = game
    for move in record.moves:
        parsed = chess.Move.from_uci(move.uci)
        if not board.is_legal(parsed):
            break
        board.push(parsed)
        node = node.add_variation(parsed)
        if move.clock and move.by in move.clock:
            node.comment = f"[%clk {format_clock(move.clock[move.by])}]"
    headers = record.pgn_headers()
    game.headers["Result"] = headers["Result"]
    exporter = chess.pgn.StringExporter(headers=False, variations=False, comments=True)
    return game.accept(exporter)


def _moves_of(board: chess.Board, moves: list[chess.Move], t0: float) -> list[dict[str, Any]]:
    feed = []
    for i, move in enumerate(moves):
        by = "white" if board.turn == chess.WHITE else "black"
        san = board.san(move)
        board.push(move)
        clock = {"white": 180.0 - i, "black": 179.5 - i}
        ply = len(board.move_stack)
        feed.append(
            events.Move(
                t=t0 + i, ply=ply, uci=move.uci(), san=san, fen=board.fen(), by=by,
                speech=san, clock=clock,
            ).to_dict()
        )  # fmt: skip
    return feed


def _check_after_each(record: GameRecord, feed: list[dict[str, Any]]) -> None:
    for event in feed:
        record.apply(event)
        movetext = record.pgn().split("\n\n", 1)[1].rstrip("\n")
        assert movetext == _whole_game_pgn(record), f"after {event}"
        board = chess.Board(record.start_fen, chess960=record.chess960)
        for move in record.moves:
            board.push_uci(move.uci)
        assert record.board().fen() == board.fen()
        assert record.board().move_stack == board.move_stack
        _check_state(record, board)
        # a clock report between moves (the most frequent event) leaves the position
        tick = events.ClockUpdate(t=event.get("t", 0.0), white=60.0, black=50.0, running="white")
        record.apply(tick.to_dict())
        _check_state(record, board)


def _check_state(record: GameRecord, board: chess.Board) -> None:
    """``state()``'s position (kept from one event to the next) is the game's."""
    state = record.state()
    assert state["fen"] == board.fen()
    king = board.king(board.turn)
    assert state["check"] == (chess.square_name(king) if board.is_check() and king else None)
    assert state["turn"] == ("white" if board.turn == chess.WHITE else "black")


def _real_games(shared: Path, count: int) -> list[chess.pgn.Game]:
    games = []
    with open(shared / "data" / "games.pgn", encoding="utf-8") as handle:
        while len(games) < count:
            game = chess.pgn.read_game(handle)
            assert game is not None
            if len(list(game.mainline_moves())) >= 60:
                games.append(game)
    return games


def test_pgn_and_board_after_every_move_of_real_games(shared: Path) -> None:
    for game in _real_games(shared, 3):
        record = GameRecord(GameHeaders(white="A", black="B"))
        start = events.GameStart(t=0.0, fen=game.board().fen()).to_dict()
        moves = list(game.mainline_moves())
        feed = [start, *_moves_of(game.board(), moves, 1.0)]
        feed.append(events.GameEnd(t=999.0, result="1-0", reason="resignation").to_dict())
        _check_after_each(record, feed)
        assert record.pgn().rstrip().endswith("1-0")


def test_takeback_correction_and_a_new_game_replay_afresh() -> None:
    board = chess.Board()
    moves = [chess.Move.from_uci(u) for u in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5")]
    feed = [events.GameStart(t=0.0, fen=board.fen()).to_dict(), *_moves_of(board, moves, 1.0)]
    after_three = chess.Board()
    for move in moves[:3]:
        after_three.push(move)
    feed.append(events.Takeback(t=7.0, ply=4, fen=after_three.fen()).to_dict())
    corrected = chess.Board()
    for move in moves[:2]:
        corrected.push(move)
    # ply 3 again, another move (a correction), and the game going on from it
    later = [chess.Move.from_uci(u) for u in ("f1c4", "g8f6", "d2d3")]
    feed += _moves_of(corrected, later, 8.0)
    feed.append(events.GameStart(t=20.0, fen=chess.STARTING_FEN).to_dict())
    feed += _moves_of(chess.Board(), moves[:3], 21.0)
    _check_after_each(GameRecord(), feed)


def test_a_start_with_black_to_move_and_a_move_that_does_not_replay() -> None:
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3"
    board = chess.Board(fen)
    moves = [chess.Move.from_uci(u) for u in ("g8f6", "b1c3", "f8b4")]
    feed = [events.GameStart(t=0.0, fen=fen).to_dict(), *_moves_of(board, moves, 1.0)]
    bad = dict(feed[-1], ply=4, uci="a1a8")  # not legal there: the replay stops before it
    then = dict(feed[-1], ply=5, uci="a2a3")
    record = GameRecord()
    _check_after_each_until_illegal(record, [*feed, bad, then])
    assert record.pgn().split("\n\n", 1)[1].startswith("3... Nf6")


def _check_after_each_until_illegal(record: GameRecord, feed: list[dict[str, Any]]) -> None:
    for event in feed:
        record.apply(event)
        movetext = record.pgn().split("\n\n", 1)[1].rstrip("\n")
        assert movetext == _whole_game_pgn(record)
    pushed = record.board().move_stack
    assert [m.uci() for m in pushed] == [m.uci for m in itertools.islice(record.moves, 3)]


def test_movetext_read_back_is_the_game(shared: Path) -> None:
    game = _real_games(shared, 1)[0]
    record = GameRecord()
    record.apply(events.GameStart(t=0.0, fen=game.board().fen()).to_dict())
    moves = list(game.mainline_moves())
    for event in _moves_of(game.board(), moves, 1.0):
        record.apply(event)
        record.pgn()
    read = chess.pgn.read_game(io.StringIO(record.pgn()))
    assert read is not None and list(read.mainline_moves()) == moves


def test_a_feed_that_skipped_a_move_shows_the_position_it_stated() -> None:
    """A move that does not follow the replay (the feed skipped one): the page shows
    the position the feed stated, not the replay's, and the record's board is that
    position without a move stack; the next move that replays shows the replay again."""
    board = chess.Board()
    moves = [chess.Move.from_uci(u) for u in ("e2e4", "e7e5")]
    feed = [events.GameStart(t=0.0, fen=board.fen()).to_dict(), *_moves_of(board, moves, 1.0)]
    skipped = board.copy()
    skipped.push_uci("g1f3")  # never sent
    feed += _moves_of(skipped, [chess.Move.from_uci("b8c6")], 3.0)  # its ply is 4
    record = GameRecord()
    for event in feed:
        record.apply(event)
    assert record.state()["fen"] == skipped.fen()
    assert record.position().fen() == skipped.fen()
    assert record.board().fen() == skipped.fen() and not record.board().move_stack
    assert record.replayed_board().fen() == board.fen()  # e4 e5: where the replay stops


def test_a_snapshot_s_board_has_the_moves_it_holds_after_the_record_went_on(
    shared: Path,
) -> None:
    """A snapshot taken at every move of a real game, read after the game went on
    30 more moves: its board, FEN and move stack are the game's at that move."""
    game = _real_games(shared, 1)[0]
    moves = list(game.mainline_moves())[:60]
    feed = _moves_of(game.board(), moves, 1.0)
    record = GameRecord()
    record.apply(events.GameStart(t=0.0, fen=game.board().fen()).to_dict())
    snapshots = []
    for event in feed:
        record.apply(event)
        snapshots.append(record.snapshot())
    board = chess.Board(record.start_fen, chess960=record.chess960)
    for ply, snapshot in enumerate(snapshots[:30], start=1):
        board.push(moves[ply - 1])
        assert snapshot.state()["fen"] == board.fen(), f"ply {ply}"
        assert snapshot.board().move_stack == board.move_stack, f"ply {ply}"
        assert snapshot._replayed is None, "the snapshot replayed nothing of its own"


def _clock(t: float, white: float, black: float, running: str | None) -> dict[str, Any]:
    return events.ClockUpdate(t=t, white=white, black=black, running=running).to_dict()


def _move(board: chess.Board, ply: int, uci: str, t: float, white: float, black: float):
    by = "white" if board.turn == chess.WHITE else "black"
    san = board.san(chess.Move.from_uci(uci))
    board.push_uci(uci)
    return events.Move(t=t, ply=ply, uci=uci, san=san, fen=board.fen(), by=by, speech=san,
                       clock={"white": white, "black": black}).to_dict()  # fmt: skip


def test_a_move_decided_before_its_press_keeps_the_clock_of_that_press() -> None:
    """The feed of a hall demo's board: White's first move decided on the settle time
    (the clock's sides not yet learnt, so it counted as stopped), his press read
    16 ms later. The move's ``[%clk]`` is his time after that press (1:30:27, the
    increment added), not the 1:30:00 the move was decided with; the move decided
    by Black's own press keeps its clock while her opponent's time runs on."""
    board = chess.Board()
    feed = [
        events.GameStart(t=1.3, fen=chess.STARTING_FEN).to_dict(),
        _clock(1.7, 5400.0, 5400.0, None),
        _move(board, 1, "e2e4", 4.289, 5400.0, 5400.0),
        _clock(4.305, 5400.0, 5400.0, "white"),  # the clock as it stood, under the sides
        _clock(4.305, 5427.0, 5400.0, "black"),  # White's press
        _clock(7.99, 5427.0, 5426.0, "white"),  # Black's press, then her move
        _move(board, 2, "c7c5", 7.99, 5427.0, 5426.0),
        _clock(9.0, 5426.0, 5426.0, "white"),
    ]
    record = GameRecord()
    before_the_press = None
    for event in feed:
        record.apply(event)
        if event is feed[3]:
            before_the_press = record.snapshot()
        movetext = record.pgn().split("\n\n", 1)[1].rstrip("\n")
        assert movetext == _whole_game_pgn(record), f"after {event}"
    assert record.clock_at(1) == {"white": 5427.0, "black": 5400.0}
    assert record.clock_at(2) == {"white": 5427.0, "black": 5426.0}
    assert "1. e4 { [%clk 1:30:27] } 1... c5 { [%clk 1:30:26] }" in record.pgn()
    assert before_the_press is not None and "[%clk 1:30:00]" in before_the_press.pgn()


def test_only_the_press_that_completes_the_last_move_changes_its_clock() -> None:
    """A move decided before its press and then taken back owes no clock; a move
    decided by its own press keeps its clock, even when the opponent's clock is
    then pressed without a move."""
    board = chess.Board()
    record = GameRecord()
    for event in (
        events.GameStart(t=0.0, fen=board.fen()).to_dict(),
        _clock(0.5, 300.0, 300.0, None),
        _move(board, 1, "e2e4", 1.0, 300.0, 300.0),  # decided on the settle time
        events.Takeback(t=2.0, ply=1, fen=chess.STARTING_FEN).to_dict(),
        _clock(3.0, 290.0, 300.0, "black"),
    ):
        record.apply(event)
    assert record.moves == []
    board = chess.Board()
    for event in (
        _move(board, 1, "d2d4", 3.0, 290.0, 300.0),  # after the press above
        _clock(5.0, 290.0, 298.0, "black"),
        _clock(6.0, 290.0, 297.0, "white"),  # Black pressed with no move
    ):
        record.apply(event)
    assert record.clock_at(1) == {"white": 290.0, "black": 300.0}
