"""The live page in a real headless Chromium, driven over the DevTools protocol.

What a viewer in the hall sees: the board and the move list follow each move,
the clock counts down, an irregularity shows a banner until the position is
restored, and the page comes back by itself after the daemon restarts.
"""

from __future__ import annotations

import asyncio
import base64
import json
import tempfile
from pathlib import Path
from typing import Any

import chess
import pytest
from broadcast_feed import OPERA_GAME, game_feed
from chromium import CHROMIUM, WAIT, close_chromium, open_chromium

from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings, figurine
from daemon.game import events

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

DOM_PROBE = """(() => {
  const img = document.getElementById("board");
  const banner = document.querySelector(".banner");
  const clocks = [...document.querySelectorAll(".player")].map(p => ({
    side: p.dataset.side, text: p.querySelector(".clock").textContent,
    running: p.classList.contains("running")}));
  return JSON.stringify({
    fen: img ? img.dataset.fen : null,
    loaded: img ? img.complete && img.naturalWidth > 0 : false,
    moves: [...document.querySelectorAll("#moves .mv")].map(e => e.textContent),
    banner: banner && banner.classList.contains("shown") ? banner.textContent : "",
    names: [...document.querySelectorAll(".player .name")].map(e => e.textContent),
    clocks: clocks,
  });
})()"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
async def test_the_page_follows_the_game_in_a_real_browser():
    settings = BroadcastSettings(
        address="127.0.0.1", port=0, round="5",
        boards=[BoardSettings(id="1", white="Paul Morphy", black="Duke Karl")],
    )  # fmt: skip
    broadcaster = Broadcaster(settings)
    await broadcaster.start()
    feed = game_feed(OPERA_GAME[:10], step=30.0)
    moves = [e for e in feed if e["type"] == "move"]
    for event in feed[:5]:  # game start and two moves before the page opens
        broadcaster.publish("1", event)
    profile = Path(tempfile.mkdtemp(prefix="dgt-bridge-chromium-"))
    process, tools = await open_chromium(f"http://127.0.0.1:{broadcaster.port}/", profile)
    tools.probe = DOM_PROBE
    try:
        shown = await tools.until(
            lambda d: d["moves"] == ["e4", "e5"] and d["fen"] == moves[1]["fen"],
            "the first two moves",
        )
        assert shown["names"] == ["Duke Karl", "Paul Morphy"], "white at the bottom"

        expected = ["e4", "e5"]
        for index in range(5, len(feed), 2):  # one move and its clock report at a time
            for event in feed[index : index + 2]:
                broadcaster.publish("1", event)
            move = feed[index]
            expected.append(figurine(move["san"]))
            await tools.until(
                lambda d, fen=move["fen"], want=list(expected): (
                    d["moves"] == want and d["fen"] == fen and d["loaded"]
                ),
                f"move {move['ply']} ({move['san']})",
            )
        assert any("♘" in m for m in expected), "pieces are shown as figurines"

        # The running clock counts down between clock reports.
        before = await tools.dom()
        running = [c for c in before["clocks"] if c["running"]]
        on_move = "black" if moves[-1]["by"] == "white" else "white"
        assert [c["side"] for c in running] == [on_move]
        await tools.until(
            lambda d: [c["text"] for c in d["clocks"] if c["running"]] != [running[0]["text"]],
            "the running clock counting down",
        )

        board = chess.Board(moves[-1]["fen"])
        broadcaster.publish(
            "1",
            events.Irregularity(
                t=400, kind="displaced_pieces", article="7.3", by=None, squares=["a7"],
                restore=[{"square": "a7", "piece": "p"}],
            ).to_dict(),
        )  # fmt: skip
        shown = await tools.until(lambda d: "Displaced pieces" in d["banner"], "the banner")
        assert "a7" in shown["banner"]
        ARTIFACTS.mkdir(exist_ok=True)
        shot = await tools.call("Page.captureScreenshot", format="png")
        (ARTIFACTS / "broadcast-page.png").write_bytes(base64.b64decode(shot["data"]))
        broadcaster.publish("1", events.PositionRestored(t=401, fen=board.fen()).to_dict())
        await tools.until(lambda d: d["banner"] == "", "the banner gone after the restore")

        # The daemon restarts on the same port; the page finds it again by itself.
        port = broadcaster.port
        await broadcaster.stop()
        settings.port = port
        broadcaster = Broadcaster(settings)
        await broadcaster.start()
        for event in feed[: len(feed) - 2]:  # the journal replays all but the last move
            broadcaster.publish("1", event)
        await tools.until(
            lambda d: d["moves"] == expected[:-1] and d["fen"] == moves[-2]["fen"],
            "the game after the daemon restarted",
            timeout=2 * WAIT,
        )
    finally:
        await close_chromium(process, tools, profile)
        await broadcaster.stop()


GRID_PROBE = """(() => JSON.stringify({
  cards: [...document.querySelectorAll(".card")].map(c => ({
    board: c.dataset.board, title: c.querySelector(".title").textContent,
    last: c.querySelector(".lastmove").textContent,
    fen: c.querySelector("img").dataset.fen})),
  overflow: document.documentElement.scrollWidth - window.innerWidth,
}))()"""


async def _three_boards() -> Broadcaster:
    """A page of three boards (W1-B1, W2-B2, W3-B3), started."""
    broadcaster = Broadcaster(BroadcastSettings(
        address="127.0.0.1", port=0,
        boards=[BoardSettings(id=str(n), white=f"W{n}", black=f"B{n}") for n in (1, 2, 3)],
    ))  # fmt: skip
    await broadcaster.start()
    return broadcaster


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
async def test_several_boards_show_as_a_grid_that_fits_a_phone():
    broadcaster = await _three_boards()
    feeds = {b: game_feed(OPERA_GAME[: 2 * int(b)]) for b in ("1", "2", "3")}
    for board, feed in feeds.items():
        for event in feed[:-2]:
            broadcaster.publish(board, event)
    profile = Path(tempfile.mkdtemp(prefix="dgt-bridge-chromium-"))
    process, tools = await open_chromium("about:blank", profile)
    try:
        await tools.call(
            "Emulation.setDeviceMetricsOverride",
            width=390, height=844, deviceScaleFactor=1, mobile=True,
        )  # fmt: skip
        await tools.call("Page.navigate", url=f"http://127.0.0.1:{broadcaster.port}/")

        async def grid() -> dict[str, Any]:
            result = await tools.call("Runtime.evaluate", expression=GRID_PROBE,
                                      returnByValue=True)  # fmt: skip
            if "value" not in result["result"]:  # the page is still loading
                return {"cards": [], "overflow": 0, "error": result.get("exceptionDetails")}
            return json.loads(result["result"]["value"])

        async def until(predicate, what: str) -> dict[str, Any]:
            seen: dict[str, Any] = {}
            for _ in range(int(WAIT * 10)):
                seen = await grid()
                if predicate(seen):
                    return seen
                await asyncio.sleep(0.1)
            raise AssertionError(f"the grid never showed {what}; it shows {seen}")

        def last_moves(feed: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [e for e in feed if e["type"] == "move"]

        shown = await until(
            lambda g: (
                [c["board"] for c in g["cards"]] == ["1", "2", "3"]
                and all(c["fen"] for c in g["cards"])
            ),
            "three boards",
        )
        assert [c["title"] for c in shown["cards"]] == ["Board 1", "Board 2", "Board 3"]
        assert shown["overflow"] <= 0, "the grid must not scroll sideways on a phone"

        for event in feeds["2"][-2:]:  # board 2 plays its next move; the others wait
            broadcaster.publish("2", event)
        final = last_moves(feeds["2"])[-1]
        shown = await until(lambda g: g["cards"][1]["fen"] == final["fen"], "board 2's new move")
        assert figurine(final["san"]) in shown["cards"][1]["last"]
        assert shown["cards"][0]["fen"] == last_moves(feeds["1"])[-2]["fen"]
        ARTIFACTS.mkdir(exist_ok=True)
        shot = await tools.call("Page.captureScreenshot", format="png")
        (ARTIFACTS / "broadcast-grid-phone.png").write_bytes(base64.b64decode(shot["data"]))
    finally:
        await close_chromium(process, tools, profile)
        await broadcaster.stop()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
async def test_a_page_whose_feed_drops_resumes_with_only_the_moves_it_missed(
    monkeypatch: pytest.MonkeyPatch,
):
    """A Wi-Fi blip: the page's feed closes; the browser reopens it by itself with
    ``Last-Event-ID``, is sent the moves made meanwhile (no whole snapshot) and shows
    them on the right board."""
    broadcaster = await _three_boards()
    hub = broadcaster.hub
    feed = game_feed(OPERA_GAME[:8])
    for board in ("1", "2", "3"):
        for event in feed[:5]:
            broadcaster.publish(board, event)
    moves = [e for e in feed if e["type"] == "move"]
    profile = Path(tempfile.mkdtemp(prefix="dgt-bridge-chromium-"))
    process, tools = await open_chromium(f"http://127.0.0.1:{broadcaster.port}/", profile)
    tools.probe = GRID_PROBE
    try:
        await tools.until(
            lambda g: [c["fen"] for c in g["cards"]] == [moves[1]["fen"]] * 3, "three boards"
        )
        await tools.until(lambda g: len(hub.subscribers) == 1, "the page's feed open")
        snapshots: list[object] = []
        snapshot = hub.snapshot
        monkeypatch.setattr(hub, "snapshot", lambda *a: snapshots.append(a) or snapshot(*a))
        for viewer in list(hub.subscribers):
            hub.drop_viewer(viewer, "a Wi-Fi blip (the test)")
        for event in feed[5:]:  # board 3 plays on while the page is away
            broadcaster.publish("3", event)
        shown = await tools.until(
            lambda g: g["cards"][2]["fen"] == moves[-1]["fen"], "board 3's moves, resumed"
        )
        assert [c["fen"] for c in shown["cards"][:2]] == [moves[1]["fen"]] * 2
        assert figurine(moves[-1]["san"]) in shown["cards"][2]["last"]
        assert len(hub.subscribers) == 1, "the page reopened its feed"
        assert snapshots == [], "resumed with the moves it missed, not every board's game"
    finally:
        await close_chromium(process, tools, profile)
        await broadcaster.stop()
