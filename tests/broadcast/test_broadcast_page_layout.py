"""The page on a phone, a tablet and a wall screen, after a long game, in a real
headless Chromium: board and both clocks always inside the viewport, the page
itself never scrolls, the move list scrolls in its own box with the last move in
view; and the first response already shows the board."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import chess
import pytest
from broadcast_feed import game_feed
from chromium import CHROMIUM, chromium

from benchmarks.relay_checks import long_game
from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SIZES = [(390, 844), (768, 1024), (1920, 1080)]


LAYOUT_PROBE = """(() => {
  const box = el => { if (!el) return null; const r = el.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom,
            width: r.width, height: r.height}; };
  const moves = document.getElementById("moves");
  const img = document.getElementById("board");
  window.scrollTo(0, 100000);  // try to scroll the page: it must not move
  const scrolled = window.scrollY;
  window.scrollTo(0, 0);
  return JSON.stringify({
    live: document.getElementById("status-line").textContent.startsWith("live"),
    view: {width: window.innerWidth, height: window.innerHeight},
    page: {height: document.documentElement.scrollHeight,
           width: document.documentElement.scrollWidth, scrolled: scrolled},
    board: box(img), loaded: !!img && img.complete && img.naturalWidth > 0,
    fen: img ? img.dataset.fen : null,
    top: box(document.querySelector(".player.top")),
    bottom: box(document.querySelector(".player.bottom")),
    clocks: [...document.querySelectorAll(".player .clock")].map(box),
    clockTexts: [...document.querySelectorAll(".player .clock")].map(e => e.textContent),
    moves: box(moves), count: document.querySelectorAll("#moves .mv").length,
    inner: moves ? {scroll: moves.scrollHeight, client: moves.clientHeight} : null,
    last: box(document.querySelector("#moves .last")),
  });
})()"""


def _inside(inner: dict[str, float], outer: dict[str, float], what: str) -> None:
    tol = 0.5
    assert inner is not None, f"{what} is missing"
    assert (
        inner["left"] >= outer["left"] - tol
        and inner["top"] >= outer["top"] - tol
        and inner["right"] <= outer["right"] + tol
        and inner["bottom"] <= outer["bottom"] + tol
    ), f"{what} {inner} is not inside {outer}"


def _apart(a: dict[str, float], b: dict[str, float], what: str) -> None:
    overlap_x = min(a["right"], b["right"]) - max(a["left"], b["left"])
    overlap_y = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
    assert overlap_x <= 0.5 or overlap_y <= 0.5, f"{what} overlap: {a} {b}"


def check_layout(seen: dict[str, Any], width: int, height: int, plies: int) -> None:
    view = {"left": 0, "top": 0, "right": width, "bottom": height}
    assert seen["view"] == {"width": width, "height": height}
    assert seen["page"]["scrolled"] == 0, "the page itself scrolls"
    assert seen["page"]["height"] <= height and seen["page"]["width"] <= width, seen["page"]
    board = seen["board"]
    _inside(board, view, "the board")
    assert abs(board["width"] - board["height"]) < 1, "the board is square"
    assert board["width"] >= 0.45 * min(width, height), f"the board is too small: {board}"
    for name in ("top", "bottom"):
        _inside(seen[name], view, f"the {name} player's clock")
        _apart(seen[name], board, f"the {name} clock and the board")
    for clock in seen["clocks"]:
        _inside(clock, view, "a clock's time")
    _apart(seen["top"], seen["bottom"], "the two clocks")
    _inside(seen["moves"], view, "the move list")
    assert seen["moves"]["height"] >= 60, f"the move list is squeezed: {seen['moves']}"
    assert seen["count"] == plies
    assert seen["inner"]["scroll"] > seen["inner"]["client"], "a long game's list scrolls"
    _inside(seen["last"], seen["moves"], "the last move (in its box)")
    _apart(seen["moves"], board, "the move list and the board")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
async def test_board_and_clocks_stay_in_view_on_a_phone_a_tablet_and_a_wall_screen():
    ucis = long_game(124)
    feed = game_feed(ucis, step=20.0, base=5400.0)
    moves = [e for e in feed if e["type"] == "move"]
    settings = BroadcastSettings(
        address="127.0.0.1", port=0, round="7",
        boards=[BoardSettings(id="1", white="Alexandra Konstantinovna Kosteniuk-Ivanova",
                              black="Maximilian Montgomery Vachier-Lagrave Junior")],
    )  # fmt: skip
    broadcaster = Broadcaster(settings)
    await broadcaster.start()
    played = len(feed) - 2 * len(SIZES)  # one more move (and clock) at each size
    for event in feed[:played]:
        broadcaster.publish("1", event)
    url = f"http://127.0.0.1:{broadcaster.port}/"
    try:
        async with chromium(probe=LAYOUT_PROBE) as tools:
            for n, (width, height) in enumerate(SIZES):
                await tools.call(
                    "Emulation.setDeviceMetricsOverride",
                    width=width, height=height, deviceScaleFactor=1, mobile=width < 1000,
                )  # fmt: skip
                await tools.call("Page.navigate", url=url)
                plies = len(ucis) - len(SIZES) + n
                await tools.until(
                    lambda d, p=plies: d["live"] and d["loaded"] and d["count"] == p,
                    f"the game at {width}x{height}",
                )
                # The next move arrives live: the last move scrolls into view in
                # its box, and nothing else moves.
                for event in feed[played + 2 * n : played + 2 * n + 2]:
                    broadcaster.publish("1", event)
                seen = await tools.until(
                    lambda d, p=plies + 1: d["count"] == p and d["fen"] == moves[p - 1]["fen"],
                    f"the live move at {width}x{height}",
                )
                check_layout(seen, width, height, plies + 1)
                ARTIFACTS.mkdir(exist_ok=True)
                shot = await tools.call("Page.captureScreenshot", format="png")
                (ARTIFACTS / f"broadcast-page-{width}x{height}.png").write_bytes(
                    base64.b64decode(shot["data"])
                )
    finally:
        await broadcaster.stop()


FIRST_PROBE = """(() => {
  const img = document.getElementById("board");
  return JSON.stringify({
    loaded: document.readyState === "complete" && !!img && img.complete && img.naturalWidth > 0,
    fen: img && img.dataset.fen,
    names: [...document.querySelectorAll(".player .name")].map(e => e.textContent),
    clocks: [...document.querySelectorAll(".player .clock")].map(e => e.textContent),
    moves: document.querySelectorAll("#moves .mv").length,
    width: img ? img.getBoundingClientRect().width : 0,
  });
})()"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
async def test_the_first_response_already_shows_the_board_without_any_script(live):
    ucis = long_game(30)
    server = await live()
    server.publish(game_feed(ucis, base=600.0))
    async with server.session.get(f"{server.url}/") as response:
        html = await response.text()
    match = re.search(r'<img id=board [^>]*src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert match, "the board is in the first response"
    svg = base64.b64decode(match[1]).decode()
    assert svg.startswith("<svg") and svg.count("<use") >= 20, "pieces drawn"
    final = chess.Board()
    for uci in ucis:
        final.push_uci(uci)
    assert f'data-fen="{final.fen()}"' in html

    async with chromium(probe=FIRST_PROBE) as tools:
        await tools.call("Emulation.setScriptExecutionDisabled", value=True)
        await tools.call("Emulation.setDeviceMetricsOverride", width=390, height=844,
                         deviceScaleFactor=1, mobile=True)  # fmt: skip
        await tools.call("Page.navigate", url=f"{server.url}/")
        seen = await tools.until(lambda d: d["loaded"], "the board with no script at all")
        assert seen["fen"] == final.fen()
        assert seen["names"] == ["Duke", "Morphy"] and seen["moves"] == len(ucis)
        assert all(re.fullmatch(r"\d+:\d\d", text) for text in seen["clocks"]), seen["clocks"]
        assert seen["width"] > 300
