"""``dgt-bridge say`` asks the running daemon, which answers in the asker's earphone.

Before issue 27 the command played the answer through an ``aplay`` of its own,
beside the daemon's voice (two voices at once, on the default device whatever
``--by`` said), and the page's POST refused ``by``. Here a real daemon (its
composition root, its page on a free port, two earphones) is asked by the
command; the journal's ``speech`` lines say which earphone said what.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import aiohttp
import chess

from daemon.app import Daemon
from daemon.cli import main
from daemon.config import load_text
from drivers.sensors import BoardDump, SquareChange

TOKEN = "arbiter-s3cret"
SETTINGS = f"""
broadcast:
  enabled: true
  address: 127.0.0.1
  port: 0
  token: {TOKEN}
clock:
  device: none
rules:
  settle_time: 0.05
speech:
  engine: text
  outputs:
    - {{player: white, sides: [black]}}
    - {{player: black, sides: [white]}}
"""
WAIT = 10.0


def said(storage: Path) -> list[dict]:
    journal = next(storage.glob("*.jsonl"))
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    return [line for line in lines if line["type"] == "speech"]


async def until(predicate, what: str) -> None:
    for _ in range(int(WAIT / 0.02)):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"never: {what}")


async def started(tmp_path: Path) -> Daemon:
    daemon = Daemon(
        load_text(SETTINGS, "test.yaml", environ={}),
        port=str(tmp_path / "no-board-here"),
        storage_dir=tmp_path / "games",
        resume=False,
        speech_text=io.StringIO(),
    )
    await daemon.start()
    await until(lambda: daemon.http_url is not None, "the page up")
    t = daemon.now()
    daemon.submit(BoardDump(t, chess.Board().board_fen()))
    daemon.submit(SquareChange(t + 0.01, "e2", None))
    daemon.submit(SquareChange(t + 0.02, "e4", "P"))
    await until(lambda: any(s["kind"] == "move" for s in said(tmp_path / "games")), "the move said")
    return daemon


def answers(storage: Path) -> list[tuple[str, str]]:
    return [(s.get("output", ""), s["text"]) for s in said(storage) if s["kind"] == "answer"]


async def test_say_goes_through_the_daemon_into_the_askers_earphone(tmp_path, capsys) -> None:
    daemon = await started(tmp_path)
    storage = tmp_path / "games"
    try:
        url = str(daemon.http_url).rstrip("/")
        code = await asyncio.to_thread(
            main, ["say", "last", "--by", "black", "--url", url, "--token", TOKEN]
        )
        assert code == 0, capsys.readouterr().err
        assert capsys.readouterr().out.strip() == "Letzter Zug: Bauer Eva vier"
        await until(lambda: answers(storage), "the answer said")
        assert answers(storage) == [("black", "Letzter Zug: Bauer Eva vier")]

        code = await asyncio.to_thread(
            main, ["say", "board", "rank", "2", "--by", "white", "--url", url, "--token", TOKEN]
        )
        assert code == 0
        await until(lambda: len(answers(storage)) > 1, "the second answer said")
        outputs = {output for output, _ in answers(storage)[1:]}
        assert outputs == {"white"}  # his own earphone only
        assert "Hector zwei" in " ".join(text for _, text in answers(storage)[1:])
        assert "Eva zwei" not in " ".join(text for _, text in answers(storage)[1:])
    finally:
        daemon.stop()
        await daemon.close()


async def test_the_pages_post_takes_by_and_a_wrong_token_is_told(tmp_path, capsys) -> None:
    daemon = await started(tmp_path)
    storage = tmp_path / "games"
    try:
        url = str(daemon.http_url).rstrip("/")
        async with aiohttp.ClientSession() as session:
            async with session.post(
                url + "/say",
                json={"what": "move_number", "by": "white"},
                headers={"Authorization": f"Bearer {TOKEN}"},
            ) as response:
                assert response.status == 202, await response.text()
            async with session.post(
                url + "/say",
                json={"what": "clock", "by": "green"},
                headers={"Authorization": f"Bearer {TOKEN}"},
            ) as response:
                assert response.status == 400
                assert "'by' must be 'white' or 'black'" in (await response.json())["error"]
        await until(lambda: answers(storage), "the answer said")
        assert [output for output, _ in answers(storage)] == ["white"]

        code = await asyncio.to_thread(main, ["say", "last", "--url", url, "--token", "wrong"])
        assert code == 1
        assert "the daemon refused the question (403)" in capsys.readouterr().err
        tokenless = tmp_path / "tokenless.yaml"
        tokenless.write_text("speech:\n  engine: text\n", encoding="utf-8")
        code = await asyncio.to_thread(
            main, ["say", "last", "--url", url, "--config", str(tokenless)]
        )
        assert code == 2
        assert "the arbiter's token" in capsys.readouterr().err
    finally:
        daemon.stop()
        await daemon.close()
