"""The arbiter's console: in a real headless Chromium on a phone (log in, give a
penalty, set the players, confirm the result the kings signal; the spectators'
page shows each), and its display-side controls as plain POSTs."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import chess
import pytest
from chromium import CHROMIUM, chromium

from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings
from daemon.game import events
from daemon.game.resultsignal import signalled_result
from daemon.rules import RulesSettings
from daemon.rules.core import RulesCore
from drivers.sensors import BoardDump, ClockReport, SquareChange

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TOKEN = "s3cret-arbiter"
OPENING = ["g1f3", "g8f6", "b1c3", "b8c6"]  # the centre stays empty


class Table:
    """A board, its rules core and the daemon's broadcaster, wired as the daemon
    wires them: sensor events -> core -> feed; the controls' requests -> core."""

    def __init__(self, boards: tuple[str, ...] = ("1",), played: str = "1") -> None:
        # the console's confirm flow is for boards where the kings' signal does not end
        # the game by itself (rules.result_on_board: false; on, the core ends it)
        self.core = RulesCore(RulesSettings(result_on_board=False))
        self.t = 0.0
        self.position = chess.Board()
        self.played = played  # the board this core plays; the others stay at the start
        settings = BroadcastSettings(
            address="127.0.0.1", port=0, token=TOKEN, round="2",
            boards=[BoardSettings(id=b, white="Morphy", black="Duke") for b in boards],
        )  # fmt: skip
        self.broadcaster = Broadcaster(settings, on_request=self.request, start_seq=0)

    def judge(self, event) -> None:
        for out in self.core.judge(event):
            self.broadcaster.publish(self.played, out.to_dict())

    def settle(self, seconds: float = 3.0) -> None:
        self.t += seconds
        for out in self.core.tick(self.t):
            self.broadcaster.publish(self.played, out.to_dict())

    def request(self, board: str, request) -> None:
        assert board == self.played, f"a request for board {board}, not the one played"
        self.t += 0.1
        self.judge(type(request)(t=self.t, action=request.action, args=request.args))

    def change(self, square: str, piece: str | None) -> None:
        self.t += 0.3
        self.judge(SquareChange(self.t, square, piece))

    def play(self, ucis: list[str]) -> None:
        for uci in ucis:
            move = chess.Move.from_uci(uci)
            piece = self.position.piece_at(move.from_square).symbol()
            self.change(chess.square_name(move.from_square), None)
            self.change(chess.square_name(move.to_square), piece)
            self.settle()
            self.position.push(move)

    async def start(self) -> None:
        await self.broadcaster.start()
        self.judge(BoardDump(self.t, self.position.board_fen()))
        self.settle()
        self.play(OPENING)
        self.t += 0.1
        self.judge(ClockReport(self.t, white=5321.0, black=5288.0, running="white"))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.broadcaster.port}"


CONSOLE_PROBE = """(() => {
  const shown = id => !document.getElementById(id).classList.contains("hidden");
  return JSON.stringify({
    href: location.href, login: shown("login"), console: shown("console"),
    stored: sessionStorage.getItem("dgt-bridge-arbiter-token"),
    error: document.getElementById("login-error").textContent,
    feedback: document.getElementById("feedback").textContent,
    penalties: [...document.querySelectorAll("#penalties li")].map(e => e.textContent),
    clocks: [...document.querySelectorAll(".clock")].map(e => e.textContent),
    signal: shown("signal") ? document.getElementById("signal-text").textContent : "",
    result: document.getElementById("result").textContent,
    title: document.getElementById("title").textContent,
    choice: shown("board-choice"),
    boards: [...document.querySelectorAll("#board-select option")].map(e => e.textContent),
    chosen: document.getElementById("board-select").value,
    overflow: document.documentElement.scrollWidth - window.innerWidth,
  });
})()"""

SPECTATOR_PROBE = """(() => JSON.stringify({
  live: document.getElementById("status-line").textContent.startsWith("live"),
  note: (document.querySelector(".result") || {}).textContent || "",
  names: [...document.querySelectorAll(".player .name")].map(e => e.textContent),
  title: (document.querySelector(".title") || {}).textContent || "",
}))()"""


async def _click(tools, selector: str) -> None:
    await tools.evaluate(f"JSON.stringify(document.querySelector({json.dumps(selector)}).click())")


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
async def test_an_arbiter_logs_in_on_a_phone_gives_a_penalty_and_the_spectators_see_it():
    table = Table()
    await table.start()
    try:
        async with chromium(probe=CONSOLE_PROBE) as tools:
            await tools.call("Emulation.setDeviceMetricsOverride", width=390, height=844,
                             deviceScaleFactor=1, mobile=True)  # fmt: skip
            await tools.call("Page.navigate", url=f"{table.url}/arbiter")
            await tools.until(lambda d: d["login"], "the login form")

            # A wrong token: refused, nothing kept.
            await tools.evaluate(
                'JSON.stringify((document.getElementById("token").value = '
                '"guess", document.getElementById("login").requestSubmit()))'
            )
            seen = await tools.until(lambda d: "token" in d["error"], "the refusal")
            assert seen["stored"] is None and not seen["console"]

            await tools.evaluate(
                f'JSON.stringify((document.getElementById("token").value = '
                f'"{TOKEN}", document.getElementById("login").requestSubmit()))'
            )
            seen = await tools.until(
                lambda d: d["console"] and "1:28" in " ".join(d["clocks"]), "the console"
            )
            assert TOKEN not in seen["href"], "the token is never in the URL"
            assert seen["stored"] == TOKEN, "kept in this tab's sessionStorage"
            assert seen["overflow"] <= 0, "the console fits a phone"
            ARTIFACTS.mkdir(exist_ok=True)
            shot = await tools.call("Page.captureScreenshot", format="png")
            (ARTIFACTS / "arbiter-console-390x844.png").write_bytes(base64.b64decode(shot["data"]))

            await _click(tools, '[data-penalty="black"][data-article="7.4b"]')
            seen = await tools.until(lambda d: d["penalties"] and d["feedback"],
                                     "the penalty in the console")  # fmt: skip
            assert seen["penalties"][0].startswith("7.4b: +2:00 to black"), seen["penalties"]
            assert "Penalty sent: +2:00 to black" in seen["feedback"]
            # The spectators' page shows it; back on the console, still logged in.
            await tools.call("Page.navigate", url=f"{table.url}/")
            seen = await tools.until(lambda d: d["live"] and d["note"], "the penalty for all",
                                     probe=SPECTATOR_PROBE)  # fmt: skip
            assert seen["note"] == "Penalty 7.4b: +2:00 to Black"
            await tools.call("Page.navigate", url=f"{table.url}/arbiter")
            await tools.until(lambda d: d["console"] and d["penalties"], "the console again")
            # an article typed with blanks around it (a phone's keyboard adds one)
            # is sent trimmed, not refused; the field holds no more than an article
            await tools.evaluate(
                'JSON.stringify((document.getElementById("pen-article").value = " 9.5b ", '
                'document.getElementById("pen-seconds").value = "30", '
                'document.getElementById("pen-custom").click()))'
            )  # fmt: skip
            seen = await tools.until(lambda d: len(d["penalties"]) == 2, "the typed penalty")
            assert seen["penalties"][1].startswith("9.5b: +0:30 to white"), seen["penalties"]
            field = 'JSON.stringify(document.getElementById("pen-article").maxLength)'
            assert await tools.evaluate(field) == 12

            await tools.evaluate(
                'JSON.stringify((document.getElementById("white").value = "Paul Morphy", '
                'document.getElementById("round").value = "2.1", '
                'document.getElementById("players").click()))'
            )  # fmt: skip
            await tools.until(lambda d: "Players and round set" in d["feedback"], "the names")

            # The kings go to d5 and e4: the console offers 1-0, the arbiter confirms.
            for square, piece in (("e1", None), ("d5", "K"), ("e8", None), ("e4", "k")):
                table.change(square, piece)
            table.settle()
            seen = await tools.until(lambda d: d["signal"], "the signalled result")
            assert seen["signal"].startswith("The kings signal 1-0 (d5, e4)")
            await _click(tools, "#signal-confirm")
            seen = await tools.until(lambda d: "Result" in d["result"], "the confirmed result")
            assert seen["result"] == "Result: 1-0 (arbiter)"
            assert not seen["signal"], "no longer offered once the result is set"

            # The spectators' page, in the same browser.
            await tools.call("Page.navigate", url=f"{table.url}/")
            seen = await tools.until(lambda d: d["live"], "the spectators' page",
                                     probe=SPECTATOR_PROBE)  # fmt: skip
            assert "Paul Morphy" in seen["names"] and "Round 2.1" in seen["title"]
            assert seen["note"].startswith("1-0"), "the confirmed result for the spectators"
        record = table.broadcaster.hub.boards["1"].record
        assert [p["article"] for p in record.penalties] == ["7.4b", "9.5b"]
        assert record.penalties[0]["to"] == "black" and record.penalties[0]["seconds"] == 120
    finally:
        await table.broadcaster.stop()


async def _log_in(tools, token: str) -> None:
    await tools.evaluate(
        f'JSON.stringify((document.getElementById("token").value = '
        f'"{token}", document.getElementById("login").requestSubmit()))'
    )


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
async def test_on_a_daemon_of_several_boards_the_console_lists_them_and_opens_the_one_asked():
    """``/arbiter?board=5`` on a phone: the login names no board, the console lists
    the boards, opens board 5 and its penalty goes to board 5; picking another board
    puts it in the address, and ``/arbiter`` alone opens the first board."""
    table = Table(boards=("1", "5", "7"), played="5")
    await table.start()
    try:
        async with chromium(probe=CONSOLE_PROBE) as tools:
            await tools.call("Emulation.setDeviceMetricsOverride", width=390, height=844,
                             deviceScaleFactor=1, mobile=True)  # fmt: skip
            await tools.call("Page.navigate", url=f"{table.url}/arbiter?board=5")
            await tools.until(lambda d: d["login"], "the login form")
            await _log_in(tools, TOKEN)
            seen = await tools.until(
                lambda d: d["console"] and "1:28" in " ".join(d["clocks"]), "board 5's console"
            )
            assert seen["stored"] == TOKEN and "which board" not in seen["feedback"]
            assert seen["title"].startswith("Board 5"), seen["title"]
            assert seen["choice"] and seen["boards"] == ["Board 1", "Board 5", "Board 7"]
            assert seen["chosen"] == "5"
            assert seen["overflow"] <= 0, "the console fits a phone"
            ARTIFACTS.mkdir(exist_ok=True)
            shot = await tools.call("Page.captureScreenshot", format="png")
            (ARTIFACTS / "arbiter-console-boards-390x844.png").write_bytes(
                base64.b64decode(shot["data"])
            )

            await _click(tools, '[data-penalty="white"][data-article="9.5b"]')
            seen = await tools.until(lambda d: d["penalties"], "the penalty on board 5")
            assert seen["penalties"][0].startswith("9.5b: +3:00 to white"), seen["penalties"]
            hub = table.broadcaster.hub
            assert [p["article"] for p in hub.boards["5"].record.penalties] == ["9.5b"]
            assert hub.boards["1"].record.penalties == [], "the other boards are untouched"

            await tools.evaluate(
                'JSON.stringify((document.getElementById("board-select").value = "7", '
                'document.getElementById("board-select").dispatchEvent(new Event("change"))))'
            )  # fmt: skip
            seen = await tools.until(lambda d: d["title"].startswith("Board 7"), "board 7")
            assert seen["href"].endswith("/arbiter?board=7"), "the address names the board"
            assert seen["penalties"] == [] and "1:28" not in " ".join(seen["clocks"])

            await tools.call("Page.navigate", url=f"{table.url}/arbiter")
            # The page's own heading says "Board" until the state arrives.
            seen = await tools.until(
                lambda d: d["console"] and d["title"] != "Board", "the first board"
            )
            assert seen["title"].startswith("Board 1") and seen["chosen"] == "1"

            await tools.call("Page.navigate", url=f"{table.url}/arbiter?board=9")
            seen = await tools.until(
                lambda d: d["console"] and d["feedback"] and d["title"] != "Board", "no board 9"
            )
            assert "no board 9" in seen["feedback"] and seen["title"].startswith("Board 1")
    finally:
        await table.broadcaster.stop()


async def test_logging_in_names_no_board_on_a_daemon_of_several(live):
    server = await live(token=TOKEN, boards=[BoardSettings(id=b) for b in ("1", "5")])
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with server.session.post(f"{server.url}/control/check", json={},
                                   headers=auth) as response:  # fmt: skip
        assert response.status == 200, await response.text()
        assert (await response.json())["boards"] == ["1", "5"]
    async with server.session.post(f"{server.url}/control/check?board=9", json={},
                                   headers=auth) as response:  # fmt: skip
        assert response.status == 404, "a board that is not there is still named"
    async with server.session.post(f"{server.url}/control/takeback", json={},
                                   headers=auth) as response:  # fmt: skip
        assert response.status == 400, "what changes a game still says which board"
        assert "which board" in (await response.json())["error"]


# -- the display's own controls, as plain POSTs -------------------------------------


def _kings_to(first: str, second: str, occupied: str | None = None) -> dict:
    restore = [{"square": "e1", "piece": "K"}, {"square": "e8", "piece": "k"},
               {"square": first, "piece": None}, {"square": second, "piece": occupied}]  # fmt: skip
    return events.Irregularity(
        t=50.0, kind="displaced_pieces", article="7.3", by=None,
        squares=["e1", "e8", first, second], restore=restore,
    ).to_dict()  # fmt: skip


def test_the_kings_in_the_centre_signal_a_result_only_on_the_four_pairs():
    assert signalled_result(_kings_to("d5", "e4"))["result"] == "1-0"
    assert signalled_result(_kings_to("e5", "d4"))["result"] == "0-1"
    assert signalled_result(_kings_to("d4", "e4"))["result"] == "1/2-1/2"
    assert signalled_result(_kings_to("e5", "d5"))["result"] == "1/2-1/2"
    assert signalled_result(_kings_to("d4", "d5")) is None, "not one of the pairs"
    assert signalled_result(_kings_to("d5", "e4", occupied="P")) is None, "a piece lifted"
    assert signalled_result({**_kings_to("d5", "e4"), "kind": "illegal_move"}) is None


async def test_the_console_and_its_display_controls_are_plain_documented_posts(live):
    server = await live(token=TOKEN)
    auth = {"Authorization": f"Bearer {TOKEN}"}

    async def post(action: str, body: dict, headers=auth):
        async with server.session.post(f"{server.url}/control/{action}", json=body,
                                       headers=headers) as response:  # fmt: skip
            return response.status, await response.json()

    async def state() -> dict:
        async with server.session.get(f"{server.url}/state.json") as response:
            return (await response.json())["boards"]["1"]

    async with server.session.get(f"{server.url}/arbiter") as response:
        page = await response.text()
        assert response.status == 200 and "sessionStorage" in page and TOKEN not in page
        assert "sha256-" in response.headers["Content-Security-Policy"]
    assert (await post("check", {}))[0] == 200
    assert (await post("check", {}, headers={"Authorization": "Bearer guess"}))[0] == 403

    status, answer = await post("players", {"white": "Anna Muzychuk", "round": "5"})
    assert status == 202, answer
    ((board, named),) = server.requests
    assert (board, named.action) == ("1", "players"), "the names go through the rules core"
    server.requests.clear()
    server.publish([event.to_dict() for event in RulesCore().judge(named)])
    assert (await state())["headers"]["white"] == "Anna Muzychuk"
    async with server.session.get(f"{server.url}/game.pgn") as response:
        pgn = await response.text()
    assert '[White "Anna Muzychuk"]' in pgn and '[Round "5"]' in pgn and '[Black "Duke"]' in pgn
    status, answer = await post("players", {"black": 'Bad\n[Result "1-0"]'})
    assert status == 400 and answer["field"] == "black"

    assert (await post("reject_signal", {}))[0] == 409, "nothing signalled yet"
    server.publish([_kings_to("d5", "e4")])
    assert (await state())["result_signal"]["result"] == "1-0"
    assert (await post("reject_signal", {}))[0] == 200
    assert (await state())["result_signal"] is None, "a rejected signal is not offered again"
    assert server.requests == [], "the display's own control never reaches the rules core"
    assert (await post("say", {"what": "silence"}))[0] == 202
    assert [(r.action, r.args) for _, r in server.requests] == [("say", {"what": "silence"})]
