"""The round's pairings from the arbiter's console: on a phone in a real headless
Chromium, the arbiter uploads Swiss-Manager's CSV (Windows' Latin-1, as it writes
it), sees every board's players before anything changes, names the boards, and the
spectators' page, the live PGN and every feed listener (MQTT) carry the names; a
file that is no pairings is refused with its reason, nothing changed."""

from __future__ import annotations

from pathlib import Path

import chess
import pytest
from chromium import CHROMIUM, chromium
from test_broadcast_console import TOKEN, _click, _log_in

from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings
from daemon.rules.core import RulesCore
from drivers.sensors import BoardDump

SAMPLES = Path(__file__).resolve().parents[1] / "pairings" / "samples"
BOARDS = ("1", "2", "3")  # the file has boards 1-4 (and a bye): board 4 is not here

PROBE = """(() => {
  const $ = id => document.getElementById(id);
  return JSON.stringify({
    console: !$("console").classList.contains("hidden"),
    title: $("title").textContent,
    feedback: $("feedback").textContent,
    preview: !$("pairings-preview").classList.contains("hidden"),
    open: $("pairings-box").open,
    summary: $("pairings-summary").textContent,
    rows: [...document.querySelectorAll("#pairings-list li")].map(e => e.textContent),
    clocks: [...document.querySelectorAll(".clock .name")].map(e => e.textContent),
    overflow: document.documentElement.scrollWidth - window.innerWidth,
    // the pairings' controls a thumb taps: inside the width, tall enough
    cramped: [...document.querySelectorAll("#pairings-box input, #pairings-box textarea, " +
        "#pairings-box button, #pairings-preview button")]
      .filter(e => e.offsetParent !== null)
      .filter(e => { const r = e.getBoundingClientRect();
        return r.left < 0 || r.right > window.innerWidth || r.height < 40; })
      .map(e => e.id),
  });
})()"""


class Hall:
    """Three boards, each with its own rules core, wired as the daemon wires them:
    the controls' requests go through the board's core and come back as events."""

    def __init__(self) -> None:
        self.cores = {board: RulesCore() for board in BOARDS}
        self.t = 0.0
        settings = BroadcastSettings(
            address="127.0.0.1", port=0, token=TOKEN, round="?",
            boards=[BoardSettings(id=b) for b in BOARDS],
        )  # fmt: skip
        self.broadcaster = Broadcaster(settings, on_request=self.request, start_seq=0)
        self.heard: list[tuple[str, dict]] = []  # what a feed listener (MQTT) is given

    def judge(self, board: str, event) -> None:
        for out in self.cores[board].judge(event):
            self.broadcaster.publish(board, out.to_dict())

    def request(self, board: str, request) -> None:
        self.t += 0.1
        self.judge(board, type(request)(t=self.t, action=request.action, args=request.args))

    async def start(self) -> None:
        await self.broadcaster.start()
        hub = self.broadcaster.hub
        hub.listeners.append(lambda board, seq, event, state: self.heard.append((board, event)))
        for board in BOARDS:
            self.judge(board, BoardDump(self.t, chess.Board().board_fen()))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.broadcaster.port}"


async def _set_file(tools, path: Path) -> None:
    """The arbiter picks the file: DevTools sets the file input as a tap would."""
    root = await tools.call("DOM.getDocument")
    node = await tools.call("DOM.querySelector", nodeId=root["root"]["nodeId"],
                            selector="#pairings-file")  # fmt: skip
    await tools.call("DOM.setFileInputFiles", files=[str(path)], nodeId=node["nodeId"])


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
async def test_the_arbiter_loads_the_rounds_pairings_on_a_phone_previews_and_names_the_boards():
    hall = Hall()
    await hall.start()
    hub = hall.broadcaster.hub
    try:
        async with chromium(probe=PROBE) as tools:
            await tools.call("Emulation.setDeviceMetricsOverride", width=390, height=844,
                             deviceScaleFactor=1, mobile=True)  # fmt: skip
            await tools.call("Page.navigate", url=f"{hall.url}/arbiter?board=2")
            await tools.until(lambda d: d.get("title") is not None, "the page")
            await _log_in(tools, TOKEN)
            await tools.until(lambda d: d["console"] and d["title"].startswith("Board 2"),
                              "board 2's console")  # fmt: skip

            await _click(tools, "#pairings-box summary")  # the arbiter opens the section
            # Not a pairings file: refused with its reason, no preview, nothing named.
            await tools.evaluate(
                'JSON.stringify(document.getElementById("pairings-text").value = '
                '"Dear arbiter,\\nround 3 starts at seven.")'
            )
            await _click(tools, "#pairings-check")
            seen = await tools.until(lambda d: "pairings" in d["feedback"], "the refusal")
            assert "neither a TRF file" in seen["feedback"] and not seen["preview"]

            # Swiss-Manager's export, uploaded: read, previewed, nothing changed yet.
            await _set_file(tools, SAMPLES / "swissmanager-round3.csv")
            seen = await tools.until(lambda d: d["preview"], "the pairings' preview")
            assert "names 3 boards, round 3" in seen["summary"], seen["summary"]
            assert seen["rows"] == [
                "Board 1: Kramnik, Vladimir – Anand, Viswanathan",
                "Board 2: Dreev, Aleksey – Hou, Yifan",
                "Board 3: Lindqvist, Åke – Müller, Käthe",  # Latin-1 read as such
                "Board 4: not a board of this daemon, left out",
                "No board: Bye, Late Entry",
            ]
            assert seen["overflow"] <= 0, "the preview fits a phone"
            assert seen["open"] and seen["cramped"] == [], "every control big enough to tap"
            assert hub.boards["2"].record.headers.white == "?", "a preview changes nothing"

            await _click(tools, "#pairings-apply")
            seen = await tools.until(
                lambda d: "Boards named" in d["feedback"] and "Dreev" in " ".join(d["clocks"]),
                "the names on board 2",
            )
            assert seen["feedback"] == "Boards named: 3, round 3"
            assert seen["title"] == "Board 2 · Round 3" and not seen["preview"]

            await tools.call("Page.navigate", url=f"{hall.url}/?board=3")
            names = await tools.until(
                lambda d: "Lindqvist, Åke" in d.get("names", []), "the spectators' names",
                probe='JSON.stringify({names: [...document.querySelectorAll(".player .name")]'
                '.map(e => e.textContent)})',
            )  # fmt: skip
            assert "Müller, Käthe" in names["names"]
        pgn = hub.pgn()
        for white, black in (("Kramnik, Vladimir", "Anand, Viswanathan"),
                             ("Lindqvist, Åke", "Müller, Käthe")):  # fmt: skip
            assert f'[White "{white}"]' in pgn and f'[Black "{black}"]' in pgn
        assert pgn.count('[Round "3"]') == 3
        named = {board: event for board, event in hall.heard if event.get("type") == "players"}
        assert sorted(named) == ["1", "2", "3"], "each board's core said it (journal, MQTT)"
        assert named["2"]["white"] == "Dreev, Aleksey"
    finally:
        await hall.broadcaster.stop()
