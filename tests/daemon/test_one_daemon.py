"""One daemon for N boards (issue 25): a board of ``boards:`` gets what the single
board of ``board:`` gets, because both are the same ``Daemon`` over a list.

Each test here is a way the hall's daemon had drifted from the single board's: the
speech's journal lines shown on the page after a restart, no battery on the page, no
memory handed back after a game, READY waiting for the page. And the same sensor
log through ``board:`` and through ``boards:`` gives the same journal and feed.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest

from daemon import compose
from daemon.app import Daemon
from daemon.config import load_text
from daemon.service import memory
from daemon.service.notify import Notifier
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.handling import human_sensor_log

HALL = (
    "rules:\n  settle_time: 0.3\n"
    "clock:\n  device: none\n"
    "broadcast:\n  address: 127.0.0.1\n  port: 0\n"
    'boards:\n  - {{id: "5", port: "{port}"{extra}}}\n'
)


def hall(port: str, extra: str = "", more: str = "") -> Any:
    return load_text(HALL.format(port=port, extra=extra) + more, "hall.yaml", environ={})


async def _until(condition, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.05)
    return bool(condition())


async def _state(url: str) -> dict:
    import aiohttp

    async with aiohttp.ClientSession() as session, session.get(url + "state.json") as response:
        return await response.json()


class ReadyNotifier(Notifier):
    def __init__(self) -> None:
        super().__init__(environ={})
        self.ready_seen = False

    def ready(self, status: str = "") -> bool:
        self.ready_seen = True
        return False


async def test_a_hall_sends_ready_before_its_page_is_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """READY once the boards are read, not after the page (the READY speed-up of issue
    19 now reaches the hall, where a Pi Zero needs it)."""
    release = asyncio.Event()
    real = compose.start_broadcast

    async def slow_page(*args: Any, **kwargs: Any) -> Any:
        await release.wait()  # aiohttp on a Pi Zero: seconds
        return await real(*args, **kwargs)

    monkeypatch.setattr(compose, "start_broadcast", slow_page)
    notifier = ReadyNotifier()
    daemon = Daemon(
        hall(str(tmp_path / "no-board")),
        speech=False,
        storage_dir=tmp_path / "games",
        resume=False,
        notifier=notifier,
    )
    starting = asyncio.create_task(daemon.start())
    try:
        assert await _until(lambda: notifier.ready_seen, 10), "READY waited for the page"
        assert daemon.http_url is None
        release.set()
        await asyncio.wait_for(starting, 20)
        assert daemon.http_url
    finally:
        release.set()
        daemon.stop()
        await daemon.close()


async def test_a_bluetooth_board_of_a_hall_shows_its_battery(tmp_path: Path) -> None:
    with BoardEmulator(tmp_path, "rfcomm0") as emulator:
        daemon = Daemon(
            hall(emulator.port_path), speech=False, storage_dir=tmp_path / "games", resume=False
        )
        await daemon.start()
        try:
            status: dict = {}
            for _ in range(100):
                status = (await _state(daemon.http_url))["boards"]["5"]["status"]
                if status.get("battery") is not None:
                    break
                await asyncio.sleep(0.1)
        finally:
            daemon.stop()
            await daemon.close()
    assert status.get("battery") == 87 and status.get("connected") is True


FOOLS_MATE = "1. f3 e5 2. g4 Qh4# 0-1"


def _game(pgn: str) -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    return game


async def test_a_hall_hands_memory_back_once_its_last_game_under_way_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The release (a full collection and malloc_trim) stops every board's reading for
    60-160 ms at a Pi 4's budget: a hall makes it once no game is under way, not at
    each board's game start and end (issue 28: a round's 26 starts were its slowest
    presses). Board 5's game ends while board 6's is under way: nothing yet; board
    6's ends: the memory goes back."""
    trims: list[int] = []
    monkeypatch.setattr(memory, "_malloc_trim", lambda: lambda pad: trims.append(pad) or 1)
    ends: list[str] = []
    moves: dict[str, int] = {}

    def seen(line: dict) -> None:
        if line.get("type") == "game_end":
            ends.append(str(line.get("board")))
        elif line.get("type") == "move":
            moves[str(line.get("board"))] = moves.get(str(line.get("board")), 0) + 1

    with (
        BoardEmulator(tmp_path, link_name="dgt-5") as five,
        BoardEmulator(tmp_path, link_name="dgt-6") as six,
    ):
        more = f'  - {{id: "6", port: "{six.port_path}"}}\n'
        daemon = Daemon(
            hall(five.port_path, more=more),
            speech=False,
            storage_dir=tmp_path / "games",
            resume=False,
            on_event=seen,
        )
        await daemon.start()
        try:
            assert await _until(lambda: all(b.connected for b in daemon.boards.values()))
            six.play_game(_game("1. e4 e5"), speed=8.0)
            assert await _until(lambda: moves.get("6", 0) >= 2), moves
            five.play_game(_game(FOOLS_MATE), speed=8.0)
            assert await _until(lambda: "5" in ends), ends
            await asyncio.sleep(0.3)  # a release would come in the loop's next turns
            assert trims == [], "memory released while board 6's game was under way"
            six.arrange(chess.STARTING_BOARD_FEN)  # board 6 set up again: its game left
            assert await _until(lambda: bool(trims)), "no release once no game was under way"
            assert len(trims) == 1
        finally:
            daemon.stop()
            await daemon.close()


async def test_after_a_restart_the_page_gets_the_games_moves_not_the_speechs_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal keeps what each earphone heard; that is for the arbiter's checks,
    never a feed event for the page and MQTT."""
    from daemon.broadcast.server import Broadcaster

    spoken = io.StringIO()
    games = tmp_path / "games"

    def journal() -> list[dict]:
        lines: list[dict] = []
        for path in sorted(games.glob("board-5/*.jsonl")):
            lines += [json.loads(line) for line in path.read_text().splitlines() if line]
        return lines

    with BoardEmulator(tmp_path) as emulator:
        text = HALL.format(port=emulator.port_path, extra=", speak: true")
        settings = load_text(text + "speech:\n  engine: text\n", "hall.yaml", environ={})
        first = Daemon(settings, storage_dir=games, resume=False, speech_text=spoken)
        await first.start()
        try:
            assert await _until(lambda: any(e["type"] == "game_start" for e in journal()))
            emulator.set_square("e2", None)
            await asyncio.sleep(0.05)
            emulator.set_square("e4", "P")
            assert await _until(lambda: any(e["type"] == "speech" for e in journal()))
        finally:
            first.stop()
            await first.close()

        published: list[dict] = []
        real = Broadcaster.publish

        def publish(self: Broadcaster, board_id: str, event: dict) -> None:
            published.append(event)
            real(self, board_id, event)

        monkeypatch.setattr(Broadcaster, "publish", publish)
        again = Daemon(settings, storage_dir=games, resume=True, speech=False)
        await again.start()
        try:
            assert await _until(lambda: any(e["type"] == "move" for e in published))
            state = await _state(again.http_url)
        finally:
            again.stop()
            await again.close()
    assert [e["type"] for e in published if e["type"] == "speech"] == []
    assert [m["uci"] for m in state["boards"]["5"]["moves"]] == ["e2e4"]


# -- board: and boards: give the same game -------------------------------------------------

ONE = "rules:\n  settle_time: 0.6\nbroadcast:\n  enabled: false\n"


def through(settings: Any, events: list, storage: Path) -> list[dict]:
    """The daemon's pipeline on simulated time, as ``test_compose`` runs it."""
    from tests.daemon.test_compose import settings_feed

    return settings_feed(settings, events, storage)


def journal_lines(directory: Path) -> list[dict]:
    (path,) = sorted(directory.glob("*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def test_the_same_sensor_log_through_board_and_through_boards_is_the_same_game(
    tmp_path: Path, shared: Path
) -> None:
    with (shared / "data" / "games.pgn").open(encoding="utf-8") as handle:
        game = chess.pgn.read_game(handle)
        while game is not None and "FEN" in game.headers:  # a standard game
            game = chess.pgn.read_game(handle)
    assert game is not None
    moves = list(game.mainline_moves())[:30]
    log = human_sensor_log(chess.Board(), moves, seed=3, with_clock=True)

    single = load_text(ONE + "game:\n  white: Ann\n", "one.yaml", environ={})
    listed = load_text(
        ONE + 'game:\n  white: Ann\nboards:\n  - {id: "1", port: /dev/null}\n',
        "many.yaml",
        environ={},
    )
    feed_one = through(single, log, tmp_path / "one")
    feed_many = through(listed, log, tmp_path / "many")

    assert all(line.pop("board") == "1" for line in feed_many), "each line names its board"
    assert feed_many == feed_one
    assert sum(e["type"] == "move" for e in feed_one) == len(moves)
    journal_one = journal_lines(tmp_path / "one")
    assert journal_lines(tmp_path / "many" / "board-1") == journal_one
    assert [e["uci"] for e in journal_one if e["type"] == "move"] == [m.uci() for m in moves]


async def test_a_single_boards_failed_link_is_started_again_and_the_daemon_lives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hall's policy for every board: a bug in the link is logged, shown, and the
    link started again; the single board's daemon no longer exits over it."""
    from daemon import app
    from drivers.dgt.link import BoardLink

    runs: list[int] = []
    real = BoardLink.run

    async def flaky(self: BoardLink) -> None:
        runs.append(len(runs))
        if len(runs) == 1:
            raise RuntimeError("a bug in the link")
        await real(self)

    monkeypatch.setattr(BoardLink, "run", flaky)
    monkeypatch.setattr(app, "RESTART_AFTER", 0.1, raising=False)
    settings = load_text("broadcast:\n  enabled: false\n", "one.yaml", environ={})
    lines: list[str] = []

    class Lines(Notifier):
        def status(self, status: str) -> bool:
            lines.append(status)
            return False

    daemon = Daemon(
        settings,
        port=str(tmp_path / "no-board"),
        speech=False,
        storage_dir=tmp_path / "games",
        resume=False,
        notifier=Lines(environ={}),
    )
    await daemon.start()
    try:
        assert await _until(lambda: len(runs) >= 2), "the link was not started again"
        assert daemon.exit_code == 0 and not daemon._stopped.is_set()
        assert any("a bug in the link" in line for line in lines), lines
    finally:
        daemon.stop()
        await daemon.close()


# -- each board's game is held once ----------------------------------------------------------


async def test_the_journal_speech_page_and_mqtt_read_the_boards_one_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One game record per board, folded once per event: the PGN on the card, the
    speech's answers, the page and MQTT (which reads the hub's record) all read it.
    A second record (the journal's, the announcer's or the page's own fold) would
    fold the same events again and could drift from it."""
    from daemon.game.record import GameRecord

    folded: set[int] = set()
    real_apply = GameRecord.apply

    def apply(self: GameRecord, event: dict) -> None:
        folded.add(id(self))
        real_apply(self, event)

    monkeypatch.setattr(GameRecord, "apply", apply)
    spoken = io.StringIO()
    with BoardEmulator(tmp_path) as emulator:
        text = HALL.format(port=emulator.port_path, extra=", speak: true")
        settings = load_text(text + "speech:\n  engine: text\n", "hall.yaml", environ={})
        daemon = Daemon(settings, storage_dir=tmp_path / "games", resume=False, speech_text=spoken)
        await daemon.start()
        try:
            board = daemon.boards["5"]
            assert await _until(lambda: board.journal.pgn_path is not None)
            for square, piece in (("e2", None), ("e4", "P"), ("e7", None), ("e5", "p")):
                emulator.set_square(square, piece)
                await asyncio.sleep(0.1)
            assert await _until(lambda: len(board.record.moves) == 2)
            page = daemon.hub.hub.boards["5"]
            assert await _until(lambda: page.record is board.record), "the page reads it"
            state = await _state(daemon.http_url)
            assert board.announcer is not None
            record = board.record
            assert daemon.journal.record is record
            assert board.announcer.record is record
            assert folded == {id(record)}, "only the board's record folds the feed"
            assert await _until(lambda: "1. e4 e5" in board.journal.pgn_path.read_text())
            on_card = board.journal.pgn_path.read_text()
        finally:
            daemon.stop()
            await daemon.close()
    assert [m["uci"] for m in state["boards"]["5"]["moves"]] == ["e2e4", "e7e5"]
    assert "1. e4 e5" in on_card
    assert on_card == record.pgn(board.journal.headers)
    assert daemon.hub.hub.pgn() == record.pgn()  # the page's names
