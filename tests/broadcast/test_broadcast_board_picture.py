"""A board's picture: the page draws each board itself, exactly as python-chess draws
it on the server, so that a move costs the daemon no request per viewer (issue 28:
a hall's wall screen fetched every board's picture again after each move, more than
a Pi's core with 26 boards and 100 viewers); ``/board.svg`` is drawn once per
position and answers "not modified" to a browser that has it."""

from __future__ import annotations

import json
from typing import Any

import chess
import pytest
from broadcast_feed import OPERA_GAME, game_feed
from chromium import CHROMIUM, chromium

from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings
from daemon.broadcast.page import board_svg
from daemon.game import events

browser = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")

RESOURCES = """JSON.stringify(performance.getEntriesByType("resource").map(e => e.name))"""
CARDS = """(() => JSON.stringify([...document.querySelectorAll("#app .card img")].map(img =>
  ({fen: img.dataset.fen, drawn: img.complete && img.naturalWidth > 0,
    src: (img.getAttribute("src") || "").slice(0, 26)}))))()"""


async def _hall(orientations: dict[str, str]) -> Broadcaster:
    boards = [BoardSettings(id=b, orientation=o) for b, o in orientations.items()]
    broadcaster = Broadcaster(BroadcastSettings(address="127.0.0.1", port=0, boards=boards))
    await broadcaster.start()
    return broadcaster


def _drawn_here(tools: Any, state: dict[str, Any], size: int) -> Any:
    return tools.evaluate(f"JSON.stringify(drawBoard({json.dumps(state)}, {size}))")


@browser
async def test_the_browser_draws_every_position_as_python_chess_draws_it():
    """Every position of a game (castling, captures, check and mate), an irregularity's
    squares, both orientations, both sizes: the page's picture is python-chess's, byte
    for byte."""
    broadcaster = await _hall({"1": "white", "2": "black"})
    try:
        async with chromium(f"http://127.0.0.1:{broadcaster.port}/") as tools:
            await tools.until(lambda d: d is True, "the page's script",
                              probe='JSON.stringify(typeof drawBoard === "function")')  # fmt: skip
            feed = game_feed(OPERA_GAME)
            checks = 0
            for event in feed:
                for board in ("1", "2"):
                    broadcaster.publish(board, event)
                if event["type"] != "move":
                    continue
                for board in ("1", "2"):
                    state = broadcaster.hub.page_state(board)
                    checks += bool(state["check"])
                    for size in (0, 360):
                        want = board_svg(broadcaster.hub, board, size or None).svg
                        assert await _drawn_here(tools, state, size) == want, (board, event)
            assert checks >= 2, "positions with a king in check were drawn"
            fen = chess.Board(feed[-2]["fen"]).fen()
            for board in ("1", "2"):
                broadcaster.publish(board, events.Irregularity(
                    t=900, kind="displaced_pieces", article="7.3", by=None, squares=["a7", "e4"],
                    restore=[{"square": "a7", "piece": "p"}]).to_dict())  # fmt: skip
                state = broadcaster.hub.page_state(board)
                assert state["fen"] == fen and state["irregularity"]["squares"] == ["a7", "e4"]
                want = board_svg(broadcaster.hub, board, 360).svg
                assert await _drawn_here(tools, state, 360) == want
    finally:
        await broadcaster.stop()


@browser
async def test_a_move_costs_the_daemon_no_request_and_the_grid_is_drawn_before_the_feed():
    """The grid's boards are drawn as the page loads, even while its event stream
    cannot connect; once it can, each move is drawn from the stream alone."""
    broadcaster = await _hall({"1": "white", "2": "white", "3": "black"})
    feed = game_feed(OPERA_GAME[:6])
    for board in ("1", "2", "3"):
        for event in feed[:-2]:
            broadcaster.publish(board, event)
    before = broadcaster.hub.page_state("1")["fen"]
    try:
        async with chromium() as tools:
            await tools.call("Network.enable")
            await tools.call("Network.setBlockedURLs", urls=["*/events*"])
            await tools.call("Page.navigate", url=f"http://127.0.0.1:{broadcaster.port}/")
            cards = await tools.until(lambda d: len(d) == 3 and all(c["drawn"] for c in d),
                                      "the three boards without the feed", probe=CARDS)  # fmt: skip
            assert [c["fen"] for c in cards] == [before] * 3
            assert all(c["src"].startswith("data:image/svg+xml") for c in cards)

            await tools.call("Network.setBlockedURLs", urls=[])
            await tools.until(lambda d: any("/events" in name for name in d),
                              "the event stream", probe=RESOURCES)  # fmt: skip
            for event in feed[-2:]:
                broadcaster.publish("2", event)
            after = broadcaster.hub.page_state("2")["fen"]
            cards = await tools.until(lambda d: d[1]["fen"] == after and d[1]["drawn"],
                                      "board 2's move", probe=CARDS)  # fmt: skip
            assert [cards[0]["fen"], cards[2]["fen"]] == [before, before]
            fetched = await tools.evaluate(RESOURCES)
            assert not [name for name in fetched if "/events" not in name], fetched
    finally:
        await broadcaster.stop()


async def test_a_hall_page_names_its_boards_without_drawing_them(live):
    """24 boards: the first response is the page, each card's position and names, not
    24 pictures (they were 1.1 MB for a hall's 26 boards)."""
    server = await live(boards=[BoardSettings(id=str(n)) for n in range(1, 25)])
    for board in range(1, 25):
        for event in game_feed(OPERA_GAME[:board]):
            server.broadcaster.publish(str(board), event)
    async with server.session.get(server.url + "/") as response:
        page = await response.text()
    grid = page[page.index('<main id="app"') : page.index("</main>")]
    assert grid.count('<a class="card"') == 24 and 'src="data:' not in grid
    assert len(page.encode()) < 100_000
    state = server.broadcaster.hub.page_state("24")
    assert f'data-fen="{state["fen"]}"' in page


async def test_board_svg_is_drawn_once_a_position_and_not_sent_again_unchanged(live):
    server = await live()
    server.publish(game_feed(OPERA_GAME[:2]))
    url = server.url + "/board.svg?board=1"
    async with server.session.get(url) as response:
        first, tag = await response.text(), response.headers["ETag"]
        assert response.status == 200 and response.headers["Cache-Control"] == "no-cache"
    async with server.session.get(url, headers={"If-None-Match": tag}) as response:
        assert response.status == 304 and await response.read() == b""
    server.publish(game_feed(OPERA_GAME[:3])[-2:])
    async with server.session.get(url, headers={"If-None-Match": tag}) as response:
        assert response.status == 200 and response.headers["ETag"] != tag
        assert await response.text() != first
