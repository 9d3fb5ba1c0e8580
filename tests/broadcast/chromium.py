"""Headless Chromium driven over the DevTools protocol, for the page tests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WAIT = 15.0
# What Chromium answers to an evaluation that a navigation cut short: the page is
# between two documents, as good as still loading.
NAVIGATING = ("Inspected target navigated or closed", "Execution context was destroyed")


class DevTools:
    """Just enough of the Chrome DevTools protocol: evaluate and screenshot."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, probe: str = "null") -> None:
        self.ws = ws
        self.next_id = 0
        self.probe = probe  # what ``dom`` evaluates

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        await self.ws.send_json({"id": self.next_id, "method": method, "params": params})
        while True:
            reply = json.loads(await self.ws.receive_str(timeout=WAIT))
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(reply["error"])
                return reply["result"]

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression that returns JSON text (None while
        the page is still loading, is navigating, or the expression fails)."""
        try:
            result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        except RuntimeError as error:
            if any(reason in str(error) for reason in NAVIGATING):
                return None
            raise
        if "value" not in result.get("result", {}):
            return None
        return json.loads(result["result"]["value"])

    async def dom(self) -> dict[str, Any]:
        return await self.evaluate(self.probe) or {}

    async def until(self, predicate, what: str, timeout: float = WAIT,
                    probe: str | None = None) -> dict[str, Any]:  # fmt: skip
        deadline = asyncio.get_running_loop().time() + timeout
        seen: dict[str, Any] = {}
        while asyncio.get_running_loop().time() < deadline:
            seen = (await self.evaluate(probe) if probe else await self.dom()) or {}
            if seen and predicate(seen):
                return seen
            await asyncio.sleep(0.1)
        raise AssertionError(f"the page never showed {what}; it shows {seen}")


async def open_chromium(url: str, profile: Path) -> tuple[subprocess.Popen[bytes], DevTools]:
    assert CHROMIUM is not None
    process = subprocess.Popen(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={profile}", "--remote-debugging-port=0",
            "--remote-allow-origins=*", "--window-size=1920,1080", url,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    port_file = profile / "DevToolsActivePort"
    for _ in range(int(WAIT * 10)):
        if port_file.exists() and port_file.read_text().strip():
            break
        await asyncio.sleep(0.1)
    else:
        process.kill()
        raise AssertionError("chromium did not open its DevTools port")
    port = int(port_file.read_text().split()[0])
    async with aiohttp.ClientSession() as session:
        for _ in range(int(WAIT * 10)):
            async with session.get(f"http://127.0.0.1:{port}/json/list") as response:
                targets = [t for t in await response.json() if t.get("type") == "page"]
            if targets:
                break
            await asyncio.sleep(0.1)
    session = aiohttp.ClientSession()
    ws = await session.ws_connect(targets[0]["webSocketDebuggerUrl"], max_msg_size=0)
    tools = DevTools(ws)
    tools.session = session  # type: ignore[attr-defined]
    return process, tools


async def close_chromium(process: subprocess.Popen[bytes], tools: DevTools, profile: Path) -> None:
    """Close the DevTools connection, end the browser, remove its profile."""
    await tools.ws.close()
    await tools.session.close()  # type: ignore[attr-defined]
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
    shutil.rmtree(profile, ignore_errors=True)


@contextlib.asynccontextmanager
async def chromium(url: str = "about:blank", probe: str = "null") -> AsyncIterator[DevTools]:
    """A headless Chromium of its own (profile removed after), on ``url``."""
    profile = Path(tempfile.mkdtemp(prefix="dgt-bridge-chromium-"))
    process, tools = await open_chromium(url, profile)
    tools.probe = probe
    try:
        yield tools
    finally:
        await close_chromium(process, tools, profile)
