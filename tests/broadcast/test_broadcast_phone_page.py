"""The blind player's phone page in a real headless Chromium, against the daemon.

Two phones, White's and Black's, each on its own page of the same board, reached by
its code (Black's through the code field of ``/l``). The phone's speech engine is
stubbed in the page (``window.speechSynthesis.speak`` records each call, and ends
each phrase after 30 ms, as a voice would end it): each move's phrase arrives as
a speech call on both, a question asked on Black's page is answered there and
not on White's, and Chromium's accessibility tree names every control.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import shutil
import tempfile
from pathlib import Path

import aiohttp
import chess
import pytest
from chromium import CHROMIUM, DevTools, close_chromium, open_chromium

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

#: The phone's speech engine, stubbed before the page's own script runs.
STUB = """(() => {
  const calls = []; window.__spoken = calls;
  class Utterance { constructor(text) { this.text = text; this.lang = ""; this.rate = 1;
    this.onend = null; this.onerror = null; } }
  const synth = { speaking: false, pending: false, getVoices() { return []; },
    speak(u) { calls.push({text: u.text, lang: u.lang, rate: u.rate, at: Date.now()});
      setTimeout(() => { if (u.onend) u.onend({}); }, 30); },
    cancel() { calls.push({cancel: true, at: Date.now()}); } };
  Object.defineProperty(window, "speechSynthesis", {value: synth, configurable: true});
  window.SpeechSynthesisUtterance = Utterance;
})();"""

PROBE = """(() => JSON.stringify({
  href: location.href,
  status: (document.getElementById("status") || {}).textContent || "",
  said: (document.getElementById("said") || {}).textContent || "",
  spoken: (window.__spoken || []).map(c => c.text || "cancel"),
}))()"""


async def _tab(port: int, url: str) -> DevTools:
    """A second page in the same browser, stubbed, then opened on ``url``."""
    new_tab = f"http://127.0.0.1:{port}/json/new?about:blank"
    async with aiohttp.ClientSession() as session, session.put(new_tab) as response:
        target = await response.json(content_type=None)
    session = aiohttp.ClientSession()
    ws = await session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0)
    tools = DevTools(ws, PROBE)
    tools.session = session  # type: ignore[attr-defined]
    await _open(tools, url)
    return tools


async def _open(tools: DevTools, url: str) -> None:
    await tools.call("Page.enable")
    await tools.call("Page.addScriptToEvaluateOnNewDocument", source=STUB)
    await tools.call("Page.navigate", url=url)


async def _click(tools: DevTools, selector: str) -> None:
    await tools.evaluate(f"JSON.stringify(document.querySelector({json.dumps(selector)}).click())")


async def _unnamed_controls(tools: DevTools, at_least: int = 9) -> list[str]:
    """Every focusable control (buttons, fields) of the accessibility tree without a name."""
    tree = await tools.call("Accessibility.getFullAXTree")
    controls = [
        node
        for node in tree["nodes"]
        if not node.get("ignored")
        and node.get("role", {}).get("value")
        in ("button", "textbox", "checkbox", "combobox", "link")
    ]
    assert len(controls) >= at_least, [n.get("role") for n in controls]
    return [
        json.dumps(node.get("role")) for node in controls if not node.get("name", {}).get("value")
    ]


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
async def test_each_phone_says_the_moves_and_only_its_own_answers(tmp_path) -> None:
    daemon = Daemon(
        load_text(SETTINGS, "test.yaml", environ={}),
        port=str(tmp_path / "no-board-here"),
        storage_dir=tmp_path / "games",
        resume=False,
        speech_text=io.StringIO(),
    )
    await daemon.start()
    profile = Path(tempfile.mkdtemp(prefix="dgt-bridge-chromium-"))
    process = black = white = None
    try:
        for _ in range(500):
            if daemon.http_url is not None and daemon.board.announcer is not None:
                break
            await asyncio.sleep(0.02)
        url = str(daemon.http_url).rstrip("/")
        codes = daemon.hub.phones.codes.of("1")
        daemon.submit(BoardDump(daemon.now(), chess.Board().board_fen()))

        process, black = await open_chromium("about:blank", profile)
        black.probe = PROBE
        await _open(black, url + "/l")  # the code field, as the player types it
        await black.until(lambda d: d["href"].endswith("/l"), "the code page")
        assert await _unnamed_controls(black, at_least=2) == []  # the field and its button
        await black.evaluate(
            f'JSON.stringify((document.getElementById("code").value = "{codes["black"]}",'
            ' document.querySelector("form").requestSubmit()))'
        )
        await black.until(lambda d: "side=black" in d["href"] and d["status"], "Black's page")
        port = int((profile / "DevToolsActivePort").read_text().split()[0])
        white = await _tab(port, f"{url}/l/{codes['white']}")
        await white.until(lambda d: "side=white" in d["href"] and d["status"], "White's page")
        for phone in (black, white):
            await _click(phone, "#start")
            await phone.until(lambda d: d["status"] == "Verbunden", "connected")
        await asyncio.sleep(0.1)

        moves = [("e2", "e4", "P"), ("e7", "e5", "p")]
        for origin, target, piece in moves:
            t = daemon.now()
            daemon.submit(SquareChange(t, origin, None))
            daemon.submit(SquareChange(t + 0.01, target, piece))
            await asyncio.sleep(0.3)
        for phone in (black, white):
            seen = await phone.until(
                lambda d: "Bauer Eva fünf" in d["spoken"], "both moves said (fuenf as fünf)"
            )
            assert seen["spoken"][:3] == ["Ansagen gestartet", "Bauer Eva vier", "Bauer Eva fünf"]

        await _click(black, 'button[data-what="last"]')
        seen = await black.until(
            lambda d: any(s.startswith("Letzter Zug") for s in d["spoken"]), "the answer"
        )
        assert "Letzter Zug: Bauer Eva fünf" in seen["spoken"]
        assert seen["said"] == "Letzter Zug: Bauer Eva fünf"  # shown, and in its region
        await asyncio.sleep(0.3)
        other = await white.dom()
        assert not [s for s in other["spoken"] if s.startswith("Letzter Zug")], other

        assert await _unnamed_controls(black) == []
        status = await black.evaluate(
            'JSON.stringify([document.getElementById("status").getAttribute("role"),'
            ' document.getElementById("status").getAttribute("aria-live")])'
        )
        assert status == ["status", "polite"]
    finally:
        for tab in (white,):
            if tab is not None:
                with contextlib.suppress(Exception):
                    await tab.ws.close()
                    await tab.session.close()  # type: ignore[attr-defined]
        if process is not None and black is not None:
            await close_chromium(process, black, profile)
        shutil.rmtree(profile, ignore_errors=True)
        daemon.stop()
        await daemon.close()
