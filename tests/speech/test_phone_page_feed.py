"""The phone page's line, without a browser: the daemon (its composition root, its
page on a free port) sends each phrase to the player's page stream, waits for the
page to have said it, and answers a page's question on that page alone.

The browser itself (speechSynthesis, the accessibility tree): tests/broadcast/
test_broadcast_phone_page.py.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
from pathlib import Path

import aiohttp
import chess

from daemon.app import Daemon
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
"""
WAIT = 10.0


class PageStream:
    """One page's event stream, read as the browser's EventSource reads it."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response
        self.messages: list[dict] = []
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.response.content:
            line = raw.decode().strip()
            if line.startswith("data: "):
                self.messages.append(json.loads(line[6:]))

    def said(self) -> list[str]:
        return [m["text"] for m in self.messages if m["type"] == "say"]

    async def until(self, predicate, what: str) -> dict:
        for _ in range(int(WAIT / 0.02)):
            for message in self.messages:
                if predicate(message):
                    return message
            await asyncio.sleep(0.02)
        raise AssertionError(f"the page never had {what}; it had {self.messages}")


async def daemon_up(tmp_path: Path) -> Daemon:
    daemon = Daemon(
        load_text(SETTINGS, "test.yaml", environ={}),
        port=str(tmp_path / "no-board-here"),
        storage_dir=tmp_path / "games",
        resume=False,
        speech_text=io.StringIO(),
    )
    await daemon.start()
    for _ in range(int(WAIT / 0.02)):
        if daemon.http_url is not None and daemon.board.announcer is not None:
            break
        await asyncio.sleep(0.02)
    return daemon


def codes(daemon: Daemon) -> dict[str, str]:
    return daemon.hub.phones.codes.of("1")


async def test_phrases_reach_the_players_page_and_his_answers_only_his(tmp_path) -> None:
    daemon = await daemon_up(tmp_path)
    url = str(daemon.http_url).rstrip("/")
    code = codes(daemon)
    assert code["white"] != code["black"] and re.fullmatch(r"\d{4}", code["black"])
    t = daemon.now()
    daemon.submit(BoardDump(t, chess.Board().board_fen()))
    try:
        async with aiohttp.ClientSession() as session:
            # the short code leads to the page
            async with session.get(f"{url}/l/{code['black']}", allow_redirects=False) as r:
                assert r.status == 303
                assert r.headers["Location"] == f"/listen?board=1&side=black&code={code['black']}"
            async with session.get(
                f"{url}/l/0000" if code["black"] != "0000" else f"{url}/l/1"
            ) as r:
                assert r.status == 404 and "ask the arbiter" in await r.text()
            async with session.post(  # the arbiter's console shows the codes
                f"{url}/control/check", json={}, headers={"Authorization": f"Bearer {TOKEN}"}
            ) as r:
                assert (await r.json())["phones"] == {"1": code}
            page_url = f"{url}/listen?board=1&side=black&code={code['black']}"
            async with session.get(page_url) as r:  # offline in the hall: nothing from elsewhere
                html = await r.text()
                assert (
                    r.status == 200 and "default-src 'none'" in r.headers["Content-Security-Policy"]
                )
            assert "http" not in html and " src=" not in html and "<link" not in html
            pages = {}
            for side in ("white", "black"):
                query = f"?board=1&side={side}&code={code[side]}"
                response = await session.get(f"{url}/listen/events{query}")
                assert response.status == 200
                pages[side] = (PageStream(response), query)
            black, black_query = pages["black"]
            white, white_query = pages["white"]
            await black.until(lambda m: m["type"] == "hello", "its greeting")
            await asyncio.sleep(0.05)
            t = daemon.now()
            daemon.submit(SquareChange(t, "e2", None))
            daemon.submit(SquareChange(t + 0.01, "e4", "P"))
            move = await black.until(
                lambda m: m.get("text") == "Bauer Eva vier", "the move's phrase"
            )
            assert move["lang"] == "de" and move["rate"] == 1.0
            # the next phrase waits for the page to have said this one
            async with session.post(
                f"{url}/listen/spoken{black_query}", json={"id": move["id"]}
            ) as r:
                assert (await r.json()) == {"waited": True}
            heard = await white.until(lambda m: m.get("text") == "Bauer Eva vier", "the move")
            async with session.post(f"{url}/listen/spoken{white_query}", json={"id": heard["id"]}):
                pass

            async with session.post(f"{url}/listen/ask{black_query}", json={"what": "last"}) as r:
                assert r.status == 202, await r.text()
            answer = await black.until(
                lambda m: str(m.get("text", "")).startswith("Letzter Zug"), "the answer"
            )
            assert answer["text"] == "Letzter Zug: Bauer Eva vier"
            async with session.post(f"{url}/listen/spoken{black_query}", json={"id": answer["id"]}):
                pass
            await asyncio.sleep(0.3)
            assert not [t for t in white.said() if t.startswith("Letzter Zug")]

            # a wrong code, and a page that tries to speak for the other side
            async with session.post(
                f"{url}/listen/ask?board=1&side=white&code={code['black']}", json={"what": "last"}
            ) as r:
                assert r.status == 403 and "code" in (await r.json())["error"]
            async with session.post(
                f"{url}/listen/ask{black_query}", json={"what": "last", "by": "white"}
            ) as r:
                assert r.status == 400 and "unknown field 'by'" in (await r.json())["error"]
            for stream, _ in pages.values():
                stream.task.cancel()
                stream.response.close()
    finally:
        daemon.stop()
        await daemon.close()
    journal = next((tmp_path / "games").glob("*.jsonl"))
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    asked = [line for line in lines if line["type"] == "info_request"]
    assert [(a["what"], a["by"], a["to"]) for a in asked] == [("last", "black", "page")]
    heard = [
        (s["output"], s["text"]) for s in lines if s["type"] == "speech" and s["kind"] == "answer"
    ]
    assert heard == [("phone black", "Letzter Zug: Bauer Eva vier")]  # not the earphone


async def test_without_a_page_nothing_is_said_to_the_phone(tmp_path) -> None:
    daemon = await daemon_up(tmp_path)
    try:
        t = daemon.now()
        daemon.submit(BoardDump(t, chess.Board().board_fen()))
        daemon.submit(SquareChange(t + 0.01, "d2", None))
        daemon.submit(SquareChange(t + 0.02, "d4", "P"))
        await asyncio.sleep(0.4)
    finally:
        daemon.stop()
        await daemon.close()
    journal = next((tmp_path / "games").glob("*.jsonl"))
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    outputs = {line.get("output", "") for line in lines if line["type"] == "speech"}
    assert outputs == {""}  # the earphone said it; no phone line was journalled
