"""Mending a game from the arbiter's console on a phone, in a real headless Chromium:
choose an offered line, enter moves from the scoresheet, correct a past move, take
back to a ply, set the position (a FEN, the board as it stands), add a complete game.
Each is previewed (nothing changes) and then applied; bad input is said plainly on
the console and changes nothing."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from chromium import CHROMIUM, chromium
from test_broadcast_corrections import TOKEN, Board

from daemon.broadcast import BoardSettings, BroadcastSettings
from drivers.sensors import BoardDump, SquareChange

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

PROBE = """(() => {
  const shown = id => !document.getElementById(id).classList.contains("hidden");
  const width = window.innerWidth;
  const boxes = [...document.querySelectorAll("#console button, #console input, " +
      "#console textarea, #console select")]
    .filter(e => e.offsetParent !== null)
    .map(e => { const r = e.getBoundingClientRect();
      return {id: e.id || e.textContent.trim().slice(0, 20), left: r.left, right: r.right,
              height: r.height}; });
  return JSON.stringify({
    console: shown("console"),
    feedback: document.getElementById("feedback").textContent,
    error: document.getElementById("feedback").className === "error",
    lines: shown("lines") ?
      [...document.querySelectorAll("#lines-list button")].map(e => e.textContent) : [],
    preview: shown("mend-preview") ? document.getElementById("mend-summary").textContent : "",
    moves: [...document.querySelectorAll("#mend-moves button")].map(e => e.textContent),
    result: document.getElementById("result").textContent,
    outside: boxes.filter(b => b.left < 0 || b.right > width).map(b => b.id),
    small: boxes.filter(b => b.height < 40).map(b => b.id),
    overflow: document.documentElement.scrollWidth - window.innerWidth,
  });
})()"""


async def _js(tools, code: str) -> None:
    await tools.evaluate(f"JSON.stringify(({code}, null))")


async def _click(tools, selector: str) -> None:
    await _js(tools, f"document.querySelector({json.dumps(selector)}).click()")


async def _type(tools, element: str, text: str) -> None:
    await _js(tools, f"document.getElementById({json.dumps(element)}).value = {json.dumps(text)}")


async def _open_all(tools) -> None:
    await _js(tools, 'document.querySelectorAll("#console details").forEach(d => d.open = true)')


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
async def test_an_arbiter_mends_a_game_on_a_phone(tmp_path: Path) -> None:
    settings = BroadcastSettings(
        address="127.0.0.1", port=0, token=TOKEN, round="3",
        boards=[BoardSettings(id="1", white="Morphy", black="Duke")],
    )  # fmt: skip
    board = Board(settings, tmp_path)
    await board.broadcaster.start()
    url = f"http://127.0.0.1:{board.broadcaster.port}"
    record = board.broadcaster.hub.boards["1"].record
    try:
        board.judge(BoardDump(board.t, board.position.board_fen()))
        board.settle()
        board.play("e4 e5 Nf3")
        board.outage("Nc6 Bb5 a6")
        async with chromium(probe=PROBE) as tools:
            await tools.call("Emulation.setDeviceMetricsOverride", width=390, height=844,
                             deviceScaleFactor=1, mobile=True)  # fmt: skip
            await tools.call("Page.navigate", url=f"{url}/arbiter")
            await tools.until(lambda d: "login" in json.dumps(d) or d, "the page")
            await _js(tools, f'document.getElementById("token").value = "{TOKEN}"')
            await _js(tools, 'document.getElementById("login").requestSubmit()')
            await _js(tools, "window.confirm = () => true")  # the dialogs, answered yes

            # The offered lines: one tapped, previewed, applied.
            seen = await tools.until(lambda d: d.get("lines"), "the offered lines")
            assert seen["lines"] == ["2...Nc6 3. Bb5 a6", "2...a6 3. Bb5 Nc6"]
            await _open_all(tools)
            seen = await tools.dom()
            assert seen["overflow"] <= 0 and seen["outside"] == [], "every control fits a phone"
            assert seen["small"] == [], "every control is big enough to tap"
            ARTIFACTS.mkdir(exist_ok=True)
            shot = await tools.call(
                "Page.captureScreenshot", format="png", captureBeyondViewport=True
            )
            (ARTIFACTS / "arbiter-console-mend-390x844.png").write_bytes(
                base64.b64decode(shot["data"])
            )
            # The board changed meanwhile (a pawn lifted): the rules core refuses the
            # line, and the console says why.
            board.t += 0.3
            board.judge(SquareChange(board.t, "h2", None))
            await _click(tools, '#lines-list button[data-line="2...a6 3. Bb5 Nc6"]')
            await tools.until(lambda d: d["preview"], "the line's preview")
            await _click(tools, "#mend-apply")
            seen = await tools.until(lambda d: "Refused" in d["feedback"], "the core's refusal")
            assert seen["feedback"].startswith(
                "Refused: choose_line: 2...a6 3. Bb5 Nc6 does not lead to the position the board"
            )
            assert len(record.moves) == 3 and seen["error"]
            board.t += 0.3
            board.judge(SquareChange(board.t, "h2", "P"))  # put back
            await _click(tools, '#lines-list button[data-line="2...a6 3. Bb5 Nc6"]')
            seen = await tools.until(lambda d: d["preview"], "the line's preview")
            assert seen["preview"].startswith("This plays 2...a6 3. Bb5 Nc6.")
            assert len(record.moves) == 3, "a preview changes nothing"
            await _click(tools, "#mend-apply")
            seen = await tools.until(
                lambda d: len(d["moves"]) == 6 and "Line played" in d["feedback"], "the line played"
            )
            assert seen["moves"][3:] == ["…a6", "3.♗b5", "…♘c6"] and not seen["lines"]

            # Moves from the scoresheet: an illegal one said plainly, then the right ones.
            await _type(tools, "mend-san", "4. Ba4 Nf6 5. Qxf7")
            await _click(tools, "#mend-enter")
            seen = await tools.until(lambda d: d["error"] and d["feedback"], "the refusal")
            assert seen["feedback"] == (
                "enter_moves: 5. Qxf7 is not a legal move in this position (White to move)"
            )
            assert not seen["preview"] and len(record.moves) == 6
            await _type(tools, "mend-san", "4. Ba4 Nf6")
            await _click(tools, "#mend-enter")
            await tools.until(lambda d: "plays 4. Ba4 Nf6" in d["preview"], "the preview")
            await _click(tools, "#mend-apply")
            await tools.until(lambda d: len(d["moves"]) == 8, "the moves played")

            # A past move corrected: its ply picked by tapping the move.
            await _click(tools, '#mend-moves button[data-ply="4"]')
            await _type(tools, "mend-fix-san", "a5")
            await _click(tools, "#mend-fix")
            seen = await tools.until(lambda d: d["preview"], "the correction's preview")
            assert seen["preview"].startswith(
                "This replaces 2...a6 by 2...a5, and replays the 4 later half-move(s) on it"
            )
            await _click(tools, "#mend-apply")
            seen = await tools.until(lambda d: "…a5" in d["moves"], "the corrected move")
            assert [m.san for m in record.moves] == ["e4", "e5", "Nf3", "a5", "Bb5", "Nc6",
                                                     "Ba4", "Nf6"]  # fmt: skip

            # Take back to a ply: out of range refused; cancelled; then applied.
            await _type(tools, "mend-back-ply", "12")
            await _click(tools, "#mend-back")
            seen = await tools.until(lambda d: d["error"] and "out of range" in d["feedback"],
                                     "the ply refused")  # fmt: skip
            assert seen["feedback"].startswith("takeback_to: ply 12 is out of range")
            await _click(tools, '#mend-moves button[data-ply="6"]')
            await _click(tools, "#mend-back")
            await tools.until(lambda d: "takes back 2 half-move(s)" in d["preview"], "preview")
            await _click(tools, "#mend-cancel")
            seen = await tools.until(lambda d: not d["preview"], "the preview gone")
            assert len(record.moves) == 8 and "Nothing changed" in seen["feedback"]
            await _click(tools, "#mend-back")
            await tools.until(lambda d: d["preview"], "the preview again")
            await _click(tools, "#mend-apply")
            await tools.until(lambda d: len(d["moves"]) == 6, "the takeback")

            # The position: a broken FEN refused, then the board as it stands.
            await _type(tools, "mend-fen", "rnbqkbnr/pppp w - - 0 1")
            await _click(tools, "#mend-set-fen")
            seen = await tools.until(lambda d: d["error"] and "FEN" in d["feedback"], "refusal")
            assert seen["feedback"].startswith("'fen' is not a valid FEN")
            await _js(tools, 'document.getElementById("mend-turn").value = "white"')
            await _click(tools, "#mend-from-board")
            seen = await tools.until(lambda d: not d["moves"] and "board's position" in
                                     d["feedback"], "the board's position")  # fmt: skip
            assert record.start_fen == board.position.fen().replace(" b ", " w ")

            # A complete game: a broken one refused, then added.
            await _type(tools, "mend-pgn", "1. d4 d5 2. c4 e6 3. Nc3 Ne5 1-0")
            await _click(tools, "#mend-add")
            seen = await tools.until(lambda d: d["error"] and "Ne5" in d["feedback"], "refusal")
            assert seen["feedback"] == (
                "add_game: 3...Ne5 is not a legal move in this position (Black to move)"
            )
            await _type(tools, "mend-pgn", '[White "Anna"]\n[Black "Bert"]\n\n'
                        "1. d4 d5 2. c4 e6 3. Nc3 Nf6 1-0")  # fmt: skip
            await _click(tools, "#mend-add")
            seen = await tools.until(lambda d: d["preview"], "the game's preview")
            assert seen["preview"].startswith("This adds the game Anna - Bert: 6 half-move(s), 1-0")
            await _click(tools, "#mend-apply")
            seen = await tools.until(lambda d: len(d["moves"]) == 6 and d["result"], "the game")
            assert seen["result"].startswith("Result: 1-0")
            assert (record.headers.white, record.headers.black) == ("Anna", "Bert")
    finally:
        await board.broadcaster.stop()
        board.journal.close()
