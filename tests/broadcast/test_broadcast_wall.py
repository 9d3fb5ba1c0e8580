"""The hall on one wall screen, in a real headless Chromium at 1920x1080: with 12 and
24 boards, ``?wall=fit`` shows every board at once, and ``?wall=cycle`` (or the
configuration's ``broadcast.wall``) shows pages of boards in turn; on each card the
position, both names, both clocks and the last move are inside the screen, overlap
nothing, and are set in type large enough to read across a hall."""

from __future__ import annotations

import base64
import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from broadcast_feed import OPERA_GAME, game_feed
from chromium import CHROMIUM, chromium
from test_broadcast_page_layout import _apart, _inside

from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings
from daemon.broadcast.page import clock_text

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed"),
]

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
WIDTH, HEIGHT = 1920, 1080
#: The smallest text a wall screen may show (CSS pixels at 1920x1080: 7.6 mm on a
#: 55-inch screen, read from across a playing hall's aisle).
MIN_TEXT = 12
#: The smallest board (a square's side is an eighth of it).
MIN_BOARD = 180

#: Names as pairings files give them ("Surname, First name").
NAMES = [
    "Carlsen, Magnus", "Nakamura, Hikaru", "Caruana, Fabiano", "Ding, Liren",
    "Anand, Viswanathan", "Firouzja, Alireza", "So, Wesley", "Giri, Anish",
    "Aronian, Levon", "Rapport, Richard", "Gukesh, D.", "Abdusattorov, N.",
]  # fmt: skip

WALL_PROBE = """(() => {
  const box = el => { if (!el) return null; const r = el.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom,
            width: r.width, height: r.height}; };
  const text = el => ({box: box(el), text: el.textContent,
    size: parseFloat(getComputedStyle(el).fontSize),
    cut: (() => { const range = document.createRange(); range.selectNodeContents(el);
      return range.getBoundingClientRect().width > el.getBoundingClientRect().width + 0.5;
    })()});
  window.scrollTo(0, 100000);
  const scrolled = window.scrollY;
  window.scrollTo(0, 0);
  const cards = [...document.querySelectorAll("#app .card")].map(card => {
    const img = card.querySelector("img");
    return {board: card.dataset.board, box: box(card), img: box(img),
      loaded: !!img && img.complete && img.naturalWidth > 0, fen: img ? img.dataset.fen : null,
      title: text(card.querySelector(".title")),
      names: [...card.querySelectorAll(".player .name")].map(text),
      clocks: [...card.querySelectorAll(".player .clock")].map(text),
      lastmove: text(card.querySelector(".lastmove"))};
  });
  return JSON.stringify({
    status: document.getElementById("status-line").textContent,
    wall: document.getElementById("app").classList.contains("wall"),
    view: {width: window.innerWidth, height: window.innerHeight}, scrolled, cards});
})()"""


def check_cards(seen: dict[str, Any], boards: dict[str, dict[str, Any]]) -> None:
    """Every card of the screen readable: inside the screen, nothing overlapping, the
    position that board shows, its names whole, its clocks and its last move."""
    view = {"left": 0, "top": 0, "right": WIDTH, "bottom": HEIGHT}
    assert seen["view"] == {"width": WIDTH, "height": HEIGHT}
    assert seen["scrolled"] == 0, "the wall screen scrolls"
    cards = seen["cards"]
    for n, card in enumerate(cards):
        expected = boards[card["board"]]
        where = f"board {card['board']}"
        _inside(card["box"], view, where)
        for other in cards[n + 1 :]:
            _apart(card["box"], other["box"], f"{where} and board {other['board']}")
        assert card["loaded"] and card["fen"] == expected["fen"], f"{where}'s position"
        img = card["img"]
        assert abs(img["width"] - img["height"]) < 1 and img["width"] >= MIN_BOARD, img
        _inside(img, card["box"], f"{where}'s board")
        parts = [card["title"], *card["names"], *card["clocks"], card["lastmove"]]
        for part in parts:
            _inside(part["box"], card["box"], f"{where}'s {part['text']!r}")
            assert part["size"] >= MIN_TEXT, f"{where}'s {part['text']!r} is {part['size']}px"
            _apart(part["box"], img, f"{where}'s {part['text']!r} and its board")
        lines = [card["title"], card["names"][0], card["names"][1], card["lastmove"]]
        for a, b in itertools.pairwise(lines):
            _apart(a["box"], b["box"], f"{where}'s {a['text']!r} and {b['text']!r}")
        assert [name["text"] for name in card["names"]] == expected["names"], where
        assert not any(name["cut"] for name in card["names"]), f"{where}: a name is cut short"
        clock = expected["clock"]
        for side, shown in zip(("black", "white"), card["clocks"], strict=True):
            if clock["running"] != side:  # the stopped clock shows its time exactly
                assert shown["text"] == clock_text(clock[side]), (where, side, shown)
            else:  # the running one counts down in the browser
                assert re.fullmatch(r"\d+:\d\d(:\d\d)?", shown["text"]), (where, shown)
        assert card["lastmove"]["text"] == expected["lastmove"], where
        assert not card["lastmove"]["cut"] and not any(c["cut"] for c in card["clocks"]), where


async def _hall(count: int, **settings: Any) -> tuple[Broadcaster, dict[str, dict[str, Any]]]:
    """``count`` boards, each a few moves into its game (a different number each)."""
    boards = [
        BoardSettings(id=str(n), white=NAMES[(2 * n) % 12], black=NAMES[(2 * n + 1) % 12])
        for n in range(1, count + 1)
    ]
    broadcaster = Broadcaster(
        BroadcastSettings(address="127.0.0.1", port=0, round="5", boards=boards, **settings)
    )
    await broadcaster.start()
    expected = {}
    for n, board in enumerate(boards, 1):
        plies = 4 + n % 9
        feed = game_feed(OPERA_GAME[:plies], base=5400.0 - 60 * n)
        for event in feed:
            broadcaster.publish(board.id, event)
        state = broadcaster.hub.page_state(board.id)
        last = state["last_move"]
        number = (last["ply"] + 1) // 2
        # The names as the page draws them (white at the bottom), the clocks stopped
        # as the feed left them: the clock updates say who runs, whose time counts down.
        expected[board.id] = {
            "fen": state["fen"],
            "names": [board.black, board.white],
            "clock": state["clock"],
            "lastmove": f"{number}{'. ' if last['by'] == 'white' else '… '}{last['figurine']}",
        }
    return broadcaster, expected


async def _screen(tools: Any, url: str) -> None:
    await tools.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT,
                     deviceScaleFactor=1, mobile=False)  # fmt: skip
    await tools.call("Page.navigate", url=url)


def _clocks_shown(seen: dict[str, Any]) -> bool:
    return all(all(c["text"] != "–" for c in card["clocks"]) for card in seen["cards"])


async def _shot(tools: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    shot = await tools.call("Page.captureScreenshot", format="png")
    (ARTIFACTS / name).write_bytes(base64.b64decode(shot["data"]))


@pytest.mark.parametrize("count", [12, 24])
async def test_every_board_fits_one_wall_screen(count):
    broadcaster, expected = await _hall(count)
    try:
        async with chromium(probe=WALL_PROBE) as tools:
            await _screen(tools, f"http://127.0.0.1:{broadcaster.port}/?wall=fit")
            seen = await tools.until(
                lambda d: d["wall"] and len(d["cards"]) == count and d["status"].startswith("live")
                and all(c["loaded"] for c in d["cards"]) and _clocks_shown(d),
                f"{count} boards on the wall screen",
            )  # fmt: skip
            await _shot(tools, f"broadcast-wall-{count}.png")
            check_cards(seen, expected)
            assert {c["board"] for c in seen["cards"]} == set(expected)
    finally:
        await broadcaster.stop()


async def test_without_wall_the_grid_still_runs_below_the_fold():
    """What the wall mode changes: the plain grid of 12 boards does not fit 1080 rows."""
    broadcaster, _ = await _hall(12)
    try:
        async with chromium(probe=WALL_PROBE) as tools:
            await _screen(tools, f"http://127.0.0.1:{broadcaster.port}/")
            seen = await tools.until(
                lambda d: len(d["cards"]) == 12 and d["status"].startswith("live"), "the grid"
            )
            assert not seen["wall"]
            assert any(card["box"]["bottom"] > HEIGHT for card in seen["cards"])
    finally:
        await broadcaster.stop()


async def test_the_configuration_cycles_pages_of_boards():
    """``broadcast.wall: cycle`` with 8 boards a page: 24 boards in three pages, each
    page readable like the fitted screen, every board shown in turn."""
    broadcaster, expected = await _hall(
        24, wall="cycle", wall_boards_per_page=8, wall_page_seconds=1.0
    )
    try:
        async with chromium(probe=WALL_PROBE) as tools:
            await _screen(tools, f"http://127.0.0.1:{broadcaster.port}/")
            shown: dict[int, set[str]] = {}
            for page in (1, 2, 3):
                seen = await tools.until(
                    lambda d, p=page: d["wall"] and f"page {p}/3" in d["status"]
                    and len(d["cards"]) == 8 and all(c["loaded"] for c in d["cards"])
                    and _clocks_shown(d),
                    f"page {page} of 3",
                )  # fmt: skip
                check_cards(seen, expected)
                shown[page] = {card["board"] for card in seen["cards"]}
                if page == 1:
                    await _shot(tools, "broadcast-wall-cycle.png")
            assert shown[1] | shown[2] | shown[3] == set(expected)
            assert shown[1] == {str(n) for n in range(1, 9)}
    finally:
        await broadcaster.stop()
