"""The files an organiser hands in (issue 29): each game's PGN on disk carries the
page's Event, Round and a Board tag; each finished game has a file named by round,
board and players; at the round's end one round PGN holds every game in board order,
written again when a game is corrected; the names are safe and unique."""

from __future__ import annotations

import io
from pathlib import Path

import chess
import chess.pgn
import pytest

from daemon.app import Daemon, broadcast_cards
from daemon.boards.pipeline import SimulatedScheduler
from daemon.broadcast.hub import Hub
from daemon.compose import _fill_broadcast_headers
from daemon.config import ConfigError, load_text
from daemon.storage.handin import HandInGame, game_file_names, player_slug, slug
from drivers.sensors import BoardDump, Request

TAGS = ("Event", "Site", "Date", "Round", "Board", "White", "Black")

HALL = """\
rules:
  settle_time: 0.5
broadcast:
  event: "Hall Club Championship"
  round: "3"
  date: "2026.12.01"
  boards:
    - {id: "2", round: "3.2"}
game:
  site: "Club hall"
boards:
  - {id: "1", port: /dev/null, white: "Carlsen, Magnus", black: "Nepomniachtchi, Ian"}
  - {id: "2", port: /dev/null, white: "Ding Liren", black: "?"}
  - {id: "10", port: /dev/null, white: "Åström, Per", black: "O'Brien/Dublin"}
"""

LINES = {
    "1": ["e2e4", "e7e5", "g1f3"],
    "2": ["d2d4", "d7d5"],
    "10": ["c2c4", "e7e5", "b1c3", "g8f6"],
}


class Hall:
    """A daemon of several boards on simulated time, with the page's hub fed as the
    running daemon feeds it."""

    def __init__(self, text: str, storage: Path, t: float = 0.0, *, to_page: bool = True) -> None:
        self.settings = load_text(text, "hall.yaml", environ={})
        self.scheduler = SimulatedScheduler(t)
        self.daemon = Daemon(
            self.settings,
            events_out=io.StringIO(),
            speech=False,
            storage_dir=storage,
            resume=True,
            scheduler=self.scheduler,
        )
        cards = broadcast_cards(self.settings, self.daemon.entries)
        _fill_broadcast_headers(cards, self.settings.game)
        self.hub = Hub(cards)
        for board in self.daemon.boards.values():  # as Daemon.start does
            board.resume()
            board.keep_known()
        self.t = t
        if to_page:
            self.daemon.hub = self.hub
            for board in self.daemon.boards.values():
                board.hand_to_page(self.hub)

    def at(self, board: str, event_of_t) -> None:
        self.t += 1.0
        self.scheduler.run_before(self.t)
        self.daemon._submit[board](event_of_t(self.t))
        self.t += 1.0
        self.scheduler.run_before(self.t)

    def play(self, board: str, ucis: list[str], result: str | None = None) -> None:
        position = chess.Board()
        self.at(board, lambda t: BoardDump(t, position.board_fen()))
        for uci in ucis:
            position.push_uci(uci)
            placement = position.board_fen()
            self.at(board, lambda t, p=placement: BoardDump(t, p))
        if result:
            self.request(board, "result", {"result": result})

    def request(self, board: str, action: str, args: dict) -> None:
        self.at(board, lambda t: Request(t, action, args))

    def close(self) -> None:
        self.scheduler.run_before(None)
        for board in self.daemon.boards.values():
            board.close_journal()


def headers_of(text: str) -> dict[str, str]:
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    return dict(game.headers)


def test_the_pgn_on_disk_and_the_page_name_the_same_event_round_and_board(
    tmp_path: Path,
) -> None:
    hall = Hall(HALL, tmp_path)
    for board, ucis in LINES.items():
        hall.play(board, ucis)
    hall.close()
    assert hall.settings.warnings == [
        "game.site is deprecated: write the site as broadcast.site ('Club hall'); "
        "read from game.site for now"
    ]
    for board in LINES:
        journal = hall.daemon.boards[board].journal
        assert journal.pgn_path is not None
        on_disk = headers_of(journal.pgn_path.read_text(encoding="utf-8"))
        on_page = headers_of(hall.hub.pgn([board]))
        assert {t: on_disk.get(t) for t in TAGS} == {t: on_page.get(t) for t in TAGS}
        assert on_disk["Board"] == board
        assert on_disk["Event"] == "Hall Club Championship"
        assert on_disk["Site"] == "Club hall"
        assert on_disk["Date"] == "2026.12.01"
        assert on_disk["Round"] == ("3.2" if board == "2" else "3")


def test_game_round_is_refused_when_broadcast_names_another() -> None:
    with pytest.raises(ConfigError) as caught:
        load_text('broadcast:\n  round: "4"\ngame:\n  round: "3"\n', "x.yaml", environ={})
    assert caught.value.key == "game.round" and caught.value.line == 4
    assert "named once, in broadcast.round" in caught.value.message
    same = load_text('broadcast:\n  round: "3"\ngame:\n  round: "3"\n', "x.yaml", environ={})
    assert same.broadcast.round == "3" and same.warnings  # the same: read, and warned


def test_the_round_file_holds_every_game_in_board_order_and_follows_corrections(
    tmp_path: Path,
) -> None:
    one_round = HALL.replace('    - {id: "2", round: "3.2"}\n', '    - {id: "2"}\n')
    hall = Hall(one_round, tmp_path)
    folder = tmp_path / "hand-in" / "Hall-Club-Championship"
    round_file = folder / "round-3.pgn"
    for board in LINES:  # the pieces set up on every board: the games begin
        hall.at(board, lambda t: BoardDump(t, chess.Board().board_fen()))
    hall.play("10", LINES["10"], "1-0")
    hall.play("1", LINES["1"], "1/2-1/2")
    hall.play("2", LINES["2"])  # still being played
    assert sorted(p.name for p in folder.iterdir()) == [
        "round-3-board-01-Carlsen-Nepomniachtchi.pgn",
        "round-3-board-10-Astrom-O-Brien-Dublin.pgn",
    ]
    assert not round_file.exists()  # board 2 still plays
    hall.close()

    # A restart in mid-round: the games ended before it are still the round's.
    hall = Hall(one_round, tmp_path, t=1000.0)
    hall.at("2", lambda t: BoardDump(t, _after(LINES["2"])))  # the board agrees: resumed
    hall.request("2", "result", {"result": "0-1"})
    games = _games(round_file)
    assert [g.headers["Board"] for g in games] == ["1", "2", "10"]
    assert [g.headers["Result"] for g in games] == ["1/2-1/2", "0-1", "1-0"]
    assert [len(list(g.mainline_moves())) for g in games] == [3, 2, 4]
    assert (folder / "round-3-board-02-Ding-Liren-NN.pgn").is_file()

    # The pieces set up again after the round: an empty game holds nothing open.
    hall.at("1", lambda t: BoardDump(t, chess.Board().board_fen()))
    # Corrected after its end: the round file is written again.
    hall.request("2", "correct_move", {"ply": 2, "san": "Nf6"})
    games = _games(round_file)
    assert games[1].end().board().fen().startswith("rnbqkb1r/pppppppp/5n2/8/3P4")
    assert games[1].headers["Result"] == "0-1"
    # A name corrected after the end: the game's file is renamed, the old one gone.
    hall.request("2", "players", {"black": "Gukesh D"})
    names = sorted(p.name for p in folder.iterdir())
    assert "round-3-board-02-Ding-Liren-Gukesh-D.pgn" in names
    assert "round-3-board-02-Ding-Liren-NN.pgn" not in names
    assert _games(round_file)[1].headers["Black"] == "Gukesh D"
    hall.close()


def _after(ucis: list[str]) -> str:
    board = chess.Board()
    for uci in ucis:
        board.push_uci(uci)
    return board.board_fen()


def _games(path: Path) -> list[chess.pgn.Game]:
    games = []
    with path.open(encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append(game)
    return games


def test_file_names_are_safe_and_unique() -> None:
    assert player_slug("Carlsen, Magnus") == "Carlsen"
    assert player_slug("?") == "NN"
    assert player_slug("Ding Liren") == "Ding-Liren"
    assert player_slug('Łasić "Ćiro" <x>/y') == "Lasic-Ciro-x-y"
    assert slug("Иванов", "NN") == "Иванов"  # letters that do not fold stay letters
    assert slug("../..", "NN") == "NN"

    def game(key: str, white: str = "A") -> HandInGame:
        return HandInGame(key, "7", "E", "3", white, "B", "1-0", True, "")

    names = game_file_names([game("/b/2.jsonl"), game("/b/1.jsonl"), game("/b/3.jsonl", "C")])
    assert names == {
        "/b/1.jsonl": "round-3-board-07-A-B.pgn",  # the earlier game first
        "/b/2.jsonl": "round-3-board-07-A-B-2.pgn",
        "/b/3.jsonl": "round-3-board-07-C-B.pgn",
    }


PENALTY_HALL = """\
rules:
  settle_time: 0.5
broadcast:
  round: "1"
boards:
  - {id: "1", bus_port: /dev/null, bus_serial: "01025"}
  - {id: "2", port: /dev/null}
"""


def test_a_penalty_is_a_comment_in_the_pgn_and_a_bus_board_s_clock_is_set_by_hand(
    tmp_path: Path,
) -> None:
    from daemon.broadcast.web import penalty_by_hand

    hall = Hall(PENALTY_HALL, tmp_path)
    hall.play("1", ["e2e4", "e7e5"])
    penalty = {"to": "white", "seconds": 180, "article": "9.5b"}
    hall.request("1", "penalty", penalty)
    journal = hall.daemon.boards["1"].journal
    on_disk = journal.pgn_path.read_text(encoding="utf-8")
    assert "1. e4 e5 { Penalty 9.5b: +3:00 to White } *" in on_disk
    assert "{ Penalty 9.5b: +3:00 to White }" in hall.hub.pgn(["1"])  # the page's, lichess's
    bus = hall.hub.boards["1"].clock_by_hand
    assert penalty_by_hand(bus, penalty) == (
        "Set the clock by hand: +3:00 on White's clock "
        "(this board is on a DGT bus chain: bus mode cannot set the clock)"
    )
    assert "bus" not in hall.hub.boards["2"].clock_by_hand
    hall.close()


def test_a_position_the_arbiter_accepts_reaches_the_page_and_the_pgn_and_a_restart(
    tmp_path: Path,
) -> None:
    """accept_position: the board as it stands (a7 pawn gone after 1. e4 e5) is the
    game's position from here, on the page, in the PGN on disk (a FEN start, the
    moves before it in the first comment) and after a restart; plies go on."""
    hall = Hall(PENALTY_HALL, tmp_path)
    hall.play("2", ["e2e4", "e7e5"])
    position = chess.Board()
    for uci in ("e2e4", "e7e5"):
        position.push_uci(uci)
    position.remove_piece_at(chess.A7)
    hall.at("2", lambda t: BoardDump(t, position.board_fen()))  # a pawn knocked off
    hall.request("2", "accept_position", {})
    accepted = position.fen()
    page = hall.hub.boards["2"].record
    assert page.board().fen() == accepted and page.ply == 2
    position.push_uci("g1f3")
    hall.at("2", lambda t: BoardDump(t, position.board_fen()))
    journal = hall.daemon.boards["2"].journal
    on_disk = journal.pgn_path.read_text(encoding="utf-8")
    game = chess.pgn.read_game(io.StringIO(on_disk))
    assert game is not None and game.headers["FEN"] == accepted
    assert game.comment == "The arbiter accepted the position on the board after: 1. e4 e5 (ply 2)"
    assert [m.uci() for m in game.mainline_moves()] == ["g1f3"]
    assert game.end().board().fen() == position.fen()
    assert hall.hub.pgn(["2"]).split("\n\n", 1)[1] == on_disk.split("\n\n", 1)[1]
    moves = [e for e in hall.hub.history if e[2].get("type") == "move"]
    assert moves[-1][2]["ply"] == 3 and moves[-1][2]["san"] == "Nf3"
    hall.close()

    # A restart: the game goes on from the accepted position, at ply 4.
    hall = Hall(PENALTY_HALL, tmp_path, t=1000.0)
    hall.at("2", lambda t: BoardDump(t, position.board_fen()))
    position.push_uci("b8c6")
    hall.at("2", lambda t: BoardDump(t, position.board_fen()))
    on_disk = hall.daemon.boards["2"].journal.pgn_path.read_text(encoding="utf-8")
    game = chess.pgn.read_game(io.StringIO(on_disk))
    assert game is not None and [m.uci() for m in game.mainline_moves()] == ["g1f3", "b8c6"]
    assert hall.daemon.boards["2"].journal.record.ply == 4
    assert hall.hub.boards["2"].record.board().fen() == position.fen()
    hall.close()


def test_a_hand_in_folder_that_cannot_be_written_is_logged_and_tried_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from daemon.storage.handin import HandIn

    blocked = tmp_path / "hand-in"
    blocked.write_text("not a folder")  # a file where the folder should be
    handin = HandIn(blocked, {"1": tmp_path / "board-1"}, writer=None, fsync=False)
    game = HandInGame(str(tmp_path / "board-1" / "a.jsonl"), "1", "E", "3", "A", "B", "1-0",
                      True, "[Event \"E\"]\n\n1-0\n")  # fmt: skip
    handin.write({game.key: game})  # no exception: the disk writer's thread goes on
    assert "cannot write the hand-in files" in caplog.text
    blocked.unlink()
    handin.write({game.key: game})
    assert (blocked / "E" / "round-3.pgn").read_text() == game.pgn
    assert (blocked / "E" / "round-3-board-01-A-B.pgn").is_file()


def test_the_page_numbers_the_moves_after_an_accepted_position_as_the_pgn_does() -> None:
    from daemon.broadcast.page import PAGE, _move_number
    from daemon.game.record import replay

    record = replay(
        [
            {"t": 0, "type": "game_start", "fen": chess.STARTING_FEN},
            {"t": 1, "type": "move", "ply": 1, "uci": "e2e4", "san": "e4", "by": "white",
             "fen": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"},
            {"t": 2, "type": "move", "ply": 2, "uci": "e7e5", "san": "e5", "by": "black",
             "fen": "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"},
            {"t": 3, "type": "position_restored", "accepted": True,
             "fen": "rnbqkbnr/1ppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"},
            {"t": 4, "type": "move", "ply": 3, "uci": "g1f3", "san": "Nf3", "by": "white",
             "fen": "rnbqkbnr/1ppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"},
        ]
    )  # fmt: skip
    state = record.state()
    assert (state["start_ply"], state["ply"]) == (2, 3)
    assert _move_number(state, 3) == 2  # 2. Nf3, as the PGN writes it
    assert "2. Nf3" in " ".join(record.pgn().split())
    assert "st.start_ply" in PAGE  # the script numbers them as the server's first page


def test_a_day_of_games_keeps_the_finished_ones_not_one_entry_a_game(tmp_path: Path) -> None:
    """A 100-game day held ~0.2 kB more a game (issue 28): the hand-in kept every game
    a board started, also those set up again without a result, never handed in."""
    hall = Hall(HALL, tmp_path)
    hall.play("1", LINES["1"], "1-0")
    for _ in range(12):  # pieces set up again, a few moves, no result: never handed in
        hall.play("1", ["e2e4", "e7e5"])
    hall.play("10", LINES["10"])
    kept = hall.daemon.handin._live.values()
    assert sorted((g.board, g.result or "*") for g in kept) == [
        ("1", "*"),
        ("1", "1-0"),
        ("10", "*"),
    ]
    folder = tmp_path / "hand-in" / "Hall-Club-Championship"
    assert (folder / "round-3-board-01-Carlsen-Nepomniachtchi.pgn").is_file()
    assert [g.headers["Result"] for g in _games(folder / "round-3.pgn")] == ["1-0"]
    hall.close()


def test_a_move_decided_before_its_board_is_handed_to_the_page_reaches_it_in_order(
    tmp_path: Path,
) -> None:
    """After READY the page comes up and the boards are handed to it one by one, the
    boards read in between. A resumed board's move decided after the page was up but
    before its own turn went to the page before the board's game, and the page's
    record lost it: a viewer was short of moves after a hall's daemon restarted
    (``benchmarks.pihall --restart-at``, issue 28)."""
    hall = Hall(HALL, tmp_path)
    hall.play("2", LINES["2"][:1])
    hall.close()
    hall = Hall(HALL, tmp_path, t=1000.0, to_page=False)
    hall.daemon.hub = hall.hub  # the page is up; board 1 is handed to it first
    hall.daemon.boards["1"].hand_to_page(hall.hub)
    position = chess.Board()
    for uci in LINES["2"]:
        position.push_uci(uci)
        placement = position.board_fen()
        hall.at("2", lambda t, p=placement: BoardDump(t, p))
    hall.daemon.boards["2"].hand_to_page(hall.hub)
    record = hall.hub.boards["2"].record
    assert [m.uci for m in record.moves] == LINES["2"]
    shown = [e[2] for e in hall.hub.history if e[1] == "2"]
    kinds = [e["type"] for e in shown if e["type"] in ("game_start", "game_resumed", "move")]
    assert kinds == ["game_start", "move", "game_resumed", "move"]
    hall.close()
