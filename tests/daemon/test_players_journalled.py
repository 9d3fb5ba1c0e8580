"""The arbiter's names reach the PGN on disk: the console's "players" goes through
the rules core as a ``players`` event, which the journal keeps like any other, so
the game's file, a restart and a replay name the same players as the page."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import chess.pgn

from daemon.app import Daemon
from daemon.config import load_text
from daemon.game.record import GameHeaders
from daemon.rules.core import RulesCore
from daemon.storage.journal import Journal, find_unfinished
from drivers.sensors import BoardDump, Request
from drivers.simulators.emulator import BoardEmulator

TOKEN = "arbiter-token"
START = chess.Board().board_fen()


def _headers_on_disk(pgn: Path) -> dict[str, str]:
    with pgn.open(encoding="utf-8") as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None
    return dict(game.headers)


def test_the_core_passes_the_names_on_and_refuses_what_is_not_a_name() -> None:
    core = RulesCore()
    named = core.judge(Request(1.0, "players", {"white": " Anna Muzychuk ", "round": "5"}))
    assert [e.to_dict() for e in named] == [
        {"t": 1.0, "type": "players", "white": "Anna Muzychuk", "black": None, "round": "5"}
    ]
    for bad in ({}, {"white": 7}, {"colour": "x"}):
        (notice,) = core.judge(Request(2.0, "players", bad))
        assert notice.to_dict()["code"] == "bad_request", bad


def test_the_journal_writes_the_names_into_the_pgn_and_keeps_them(tmp_path: Path) -> None:
    core = RulesCore()
    journal = Journal(tmp_path, headers=GameHeaders(white="Morphy", black="Duke"), fsync=False)

    def judge(event) -> None:
        for out in core.judge(event):
            journal.record_event(out.to_dict())

    judge(Request(0.5, "players", {"round": "3"}))  # before the game: its PGN has it
    judge(BoardDump(1.0, START))
    judge(Request(2.0, "players", {"black": "Isouard"}))
    assert journal.pgn_path is not None
    on_disk = _headers_on_disk(journal.pgn_path)
    assert (on_disk["White"], on_disk["Black"], on_disk["Round"]) == ("Morphy", "Isouard", "3")

    # A restart reopens the game: the names stand, also for the next game.
    again = Journal(tmp_path, headers=GameHeaders(white="Morphy", black="Duke"), fsync=False)
    point = find_unfinished(tmp_path)
    assert point is not None
    again.reopen(point)
    assert (again.headers.black, again.headers.round) == ("Isouard", "3")
    again.record_event({"t": 9.0, "type": "game_start", "fen": chess.STARTING_FEN})
    assert again.pgn_path is not None and again.pgn_path != journal.pgn_path
    on_disk = _headers_on_disk(again.pgn_path)
    assert (on_disk["White"], on_disk["Black"], on_disk["Round"]) == ("Morphy", "Isouard", "3")
    # ... and that game's own journal names them, for a restart during it.
    assert find_unfinished(tmp_path) is not None
    third = Journal(tmp_path, headers=GameHeaders(white="Morphy", black="Duke"), fsync=False)
    third.reopen(find_unfinished(tmp_path))  # type: ignore[arg-type]
    assert (third.headers.black, third.headers.round) == ("Isouard", "3")


async def test_a_players_post_to_the_daemon_names_the_game_in_its_journal(
    tmp_path: Path,
) -> None:
    settings = load_text(
        f"broadcast:\n  port: 0\n  address: 127.0.0.1\n  token: {TOKEN}\n"
        "game:\n  white: Morphy\n  black: Duke\n",
        "test.yaml",
        environ={},
    )
    storage = tmp_path / "games"
    with BoardEmulator(tmp_path) as emulator:
        daemon = Daemon(
            settings, port=emulator.port_path, speech=False, storage_dir=storage, resume=False
        )
        await daemon.start()
        try:
            async with aiohttp.ClientSession() as session:
                for _ in range(200):  # the board's first picture starts the game
                    if daemon.journal.pgn_path is not None:
                        break
                    await asyncio.sleep(0.05)
                async with session.post(
                    daemon.http_url + "control/players",
                    json={"white": "Paul Morphy", "round": "2.1"},
                    headers={"Authorization": f"Bearer {TOKEN}"},
                ) as response:
                    assert response.status == 202, await response.text()
                for _ in range(200):
                    record = daemon.journal.record
                    if record is not None and record.headers.white == "Paul Morphy":
                        break
                    await asyncio.sleep(0.05)
        finally:
            daemon.stop()
            await daemon.close()
    assert daemon.journal.pgn_path is not None
    on_disk = _headers_on_disk(daemon.journal.pgn_path)
    assert (on_disk["White"], on_disk["Black"], on_disk["Round"]) == ("Paul Morphy", "Duke", "2.1")
    journal_lines = daemon.journal.pgn_path.with_suffix(".jsonl").read_text(encoding="utf-8")
    assert '"type": "players"' in journal_lines or '"type":"players"' in journal_lines
