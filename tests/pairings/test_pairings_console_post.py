"""``POST /control/pairings`` on the real daemon (two emulated boards): the preview
changes nothing; applied, each board's game on disk (its journal and its PGN) names
the file's players and round; a file that is no pairings, or a body the control
does not take, is a 400 naming what is wrong, and never a traceback."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import chess.pgn
import pytest

from daemon.app import Daemon
from daemon.config import load_text
from drivers.simulators.emulator import BoardEmulator

TOKEN = "arbiter-token"
TRF = (Path(__file__).parent / "samples" / "club-round3.trf").read_text(encoding="utf-8")
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _headers_on_disk(pgn: Path) -> dict[str, str]:
    with pgn.open(encoding="utf-8") as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None
    return dict(game.headers)


async def _until(condition, timeout: float = 10.0) -> bool:
    for _ in range(int(timeout / 0.05)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return bool(condition())


@pytest.fixture
async def daemon(tmp_path: Path):
    emulators = []
    lines = []
    for board in ("1", "2"):
        (tmp_path / board).mkdir()
        emulators.append(BoardEmulator(tmp_path / board).start())
        lines.append(f'  - {{id: "{board}", port: "{emulators[-1].port_path}"}}\n')
    settings = load_text(
        f"broadcast:\n  port: 0\n  address: 127.0.0.1\n  token: {TOKEN}\nboards:\n"
        + "".join(lines),
        "hall.yaml",
        environ={},
    )
    hall = Daemon(settings, speech=False, storage_dir=tmp_path / "games", resume=False)
    await hall.start()
    try:  # each board's first picture starts its game (and its file)
        assert await _until(lambda: all(b.journal.pgn_path for b in hall.boards.values()))
        yield hall
    finally:
        hall.stop()
        await hall.close()
        for emulator in emulators:
            emulator.stop()


async def _post(session, url: str, body) -> tuple[int, dict]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with session.post(url, data=data, headers={**AUTH, "Content-Type": "application/json"}
                            ) as response:  # fmt: skip
        text = await response.text()
        assert "Traceback" not in text
        return response.status, json.loads(text)


async def test_a_pairings_file_posted_names_each_boards_game_on_disk(daemon) -> None:
    url = daemon.http_url + "control/pairings"
    journals = {board: unit.journal for board, unit in daemon.boards.items()}
    async with aiohttp.ClientSession() as session:
        status, answer = await _post(session, url, {"file": TRF, "preview": True})
        assert status == 200, answer
        preview = answer["preview"]
        assert preview["round"] == "3" and preview["missing"] == ["3", "4"]
        assert preview["boards"][1] == {"board": "2", "white": "Dreev, Aleksey",
                                        "black": "Hou, Yifan"}  # fmt: skip
        await asyncio.sleep(0.3)
        assert journals["1"].record.headers.white == "?", "the preview changed nothing"

        status, answer = await _post(session, url, {"file": TRF})
        assert status == 202, answer
        assert [b["board"] for b in answer["boards"]] == ["1", "2"]
    assert await _until(lambda: journals["2"].record.headers.black == "Hou, Yifan")
    await asyncio.sleep(0.3)  # the disk writer's turn
    for board, white, black in (("1", "Kramnik, Vladimir", "Anand, Viswanathan"),
                                ("2", "Dreev, Aleksey", "Hou, Yifan")):  # fmt: skip
        on_disk = _headers_on_disk(journals[board].pgn_path)
        assert (on_disk["White"], on_disk["Black"], on_disk["Round"]) == (white, black, "3")
        kept = journals[board].pgn_path.with_suffix(".jsonl").read_text(encoding="utf-8")
        assert '"players"' in kept, "journalled: a restart names them too"


BAD = [
    ({"file": "Dear arbiter,\nround 3 starts at seven."}, 400, "neither a TRF file"),
    ({"file": "Bo.;White;Black\n1;Ann;Bob\n1;C;D\n"}, 400, "line 3: board 1 is given twice"),
    ({"file": TRF, "round": 7}, 400, "round 7"),
    ({"file": "PK\x03\x04\x00\x00"}, 400, "not a text file"),
    ({"file": TRF, "first_board": 30}, 409, "none of the file's boards"),
    ({"file": 12}, 400, "'file' must be the text of a pairings file"),
    ({"file": TRF, "round": "three"}, 400, "'round' must be a round"),
    ({"text": TRF}, 400, "unknown field 'text'"),
    ({}, 400, "'file' is required"),
    (b"Bo.;White;Black", 400, "JSON"),
    ({"file": "x" * 200_001}, 400, "at most 200000 characters"),
]


async def test_a_bad_pairings_post_is_refused_with_its_reason(daemon) -> None:
    async with aiohttp.ClientSession() as session:
        for body, status, message in BAD:
            got, answer = await _post(session, daemon.http_url + "control/pairings", body)
            assert (got, message in answer["error"]) == (status, True), (body, answer)
        # A pairings file's size is for this control only: every other keeps max_body.
        big = {"white": "x" * 100_000}
        got, answer = await _post(session, daemon.http_url + "control/players?board=1", big)
        assert got == 413 and "16384" in answer["error"], answer
        got, answer = await _post(session, daemon.http_url + "control/pairings",
                                  {"file": TRF + "\n" * 700_000})  # fmt: skip
        assert got == 413 and "600000" in answer["error"], answer
    await asyncio.sleep(0.2)
    assert all(unit.journal.record.headers.white == "?" for unit in daemon.boards.values())


async def test_on_a_relay_the_pairings_name_its_boards_display() -> None:
    """A relay has no rules core: its display takes the names, as its "players"."""
    from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings

    relay = Broadcaster(BroadcastSettings(
        address="127.0.0.1", port=0, token=TOKEN, boards=[BoardSettings(id=b) for b in "12"],
    ))  # fmt: skip
    await relay.start()
    try:
        async with aiohttp.ClientSession() as session:
            status, answer = await _post(
                session, f"http://127.0.0.1:{relay.port}/control/pairings", {"file": TRF}
            )
        assert status == 200 and answer["accepted"], answer
        headers = relay.hub.boards["2"].record.headers
        assert (headers.white, headers.black, headers.round) == (
            "Dreev, Aleksey",
            "Hou, Yifan",
            "3",
        )
    finally:
        await relay.stop()
