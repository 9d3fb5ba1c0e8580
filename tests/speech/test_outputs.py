"""An earphone per player, and the journal of what was said.

Two outputs: each player hears his own choice of events, and a player's questions
and their answers reach only his earphone. Checked with recording engines, and
once with the real espeak-ng and aplay into ALSA's file plugin (no sound card):
the right earphone's phrase is on the right channel only.
"""

from __future__ import annotations

import array
import asyncio
import io
import json
import shutil
import wave
from pathlib import Path

import chess
import pytest

from daemon.app import Daemon
from daemon.config import load_text
from daemon.speech.announcer import AnnouncerGroup, build_announcers
from daemon.speech.engines import EspeakEngine
from daemon.speech.settings import OutputSettings, SpeechSettings
from daemon.speech.vocabulary import load_vocabulary
from drivers.sensors import BoardDump, SquareChange
from tests.speech.recorder import Recorder

WAIT = 20.0


def move_event(board: chess.Board, san: str) -> dict:
    move = board.parse_san(san)
    by = "white" if board.turn else "black"
    board.push(move)
    return {"t": board.ply(), "type": "move", "ply": board.ply(), "uci": move.uci(),
            "san": san, "fen": board.fen(), "by": by, "speech": ""}  # fmt: skip


async def settled(group: AnnouncerGroup) -> None:
    await asyncio.sleep(0.05)
    await asyncio.wait_for(group.drain(), WAIT)


async def test_each_player_hears_his_events_and_only_his_own_answers() -> None:
    settings = SpeechSettings(
        engine="text",
        own_side="black",  # the clock's buttons are the blind Black's
        outputs=(
            OutputSettings(player="white", channel="left", sides=("black",)),
            OutputSettings(player="black", channel="right", sides=("white",),
                           announce=("move", "info_request", "irregularity")),
        ),
    )  # fmt: skip
    group = build_announcers(settings, load_vocabulary())
    assert isinstance(group, AnnouncerGroup)
    white, black = group.announcers
    assert (white.settings.channel, black.settings.channel) == ("left", "right")
    white.engine, black.engine = Recorder(), Recorder()
    runner = asyncio.create_task(group.run())
    try:
        board = chess.Board()
        group.receive({"t": 0.0, "type": "game_start", "fen": board.fen()})
        group.receive(move_event(board, "e4"))
        group.receive(move_event(board, "c5"))
        await settled(group)
        group.receive({"t": 3.0, "type": "info_request", "what": "move_number", "by": None})
        await settled(group)
        group.receive({"t": 4.0, "type": "info_request", "what": "last", "by": "white"})
        await settled(group)
        assert group.ask("square", {"square": "e4"}) == "Eva vier: Bauer Weiß"  # own_side's
        await settled(group)
    finally:
        await group.close()
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
    assert white.engine.heard == [
        "Neue Partie",
        "Bauer Cesar fuenf",
        "Letzter Zug: Bauer Cesar fuenf",
    ]
    assert black.engine.heard == ["Bauer Eva vier", "Zug 2, Weiß am Zug", "Eva vier: Bauer Weiß"]


def channels(path: Path) -> tuple[int, int]:
    """The loudest sample on the left and on the right channel of a stereo WAV."""
    with wave.open(str(path), "rb") as wav:
        assert (wav.getnchannels(), wav.getsampwidth()) == (2, 2)
        samples = array.array("h", wav.readframes(wav.getnframes()))
    return max(map(abs, samples[0::2])), max(map(abs, samples[1::2]))


@pytest.mark.skipif(
    not (shutil.which("espeak-ng") and shutil.which("aplay")), reason="no audio tools"
)
@pytest.mark.parametrize("channel", ["left", "right"])
async def test_a_players_earphone_is_one_channel_of_a_stereo_output(tmp_path, channel) -> None:
    out = tmp_path / "card.wav"
    settings = SpeechSettings(
        engine="espeak-ng", device=f"file:FILE={out},FORMAT=wav", channel=channel
    )
    engine = EspeakEngine(settings, "de")
    try:
        delivery = await asyncio.wait_for(engine.speak("Bauer Eva vier", "Bauer Eva vier"), WAIT)
    finally:
        await engine.close()
    assert delivery.seconds is not None and delivery.seconds > 0.3
    left, right = channels(out)
    heard, silent = (left, right) if channel == "left" else (right, left)
    assert heard > 1000 and silent == 0


SETTINGS = (
    "broadcast:\n  enabled: false\nclock:\n  device: none\n"
    "rules:\n  settle_time: 0.1\nspeech:\n  engine: text\n"
)


async def test_the_journal_keeps_what_was_said_and_the_feed_the_same_words(tmp_path) -> None:
    feed: list[dict] = []
    printed = io.StringIO()
    daemon = Daemon(
        load_text(SETTINGS, "test.yaml", environ={}),
        port=str(tmp_path / "no-board-here"),
        storage_dir=tmp_path / "games",
        resume=False,
        on_event=feed.append,
        speech_text=printed,
    )
    await daemon.start()
    t = daemon.now()
    daemon.submit(BoardDump(t, chess.Board().board_fen()))
    daemon.submit(SquareChange(t + 0.01, "g1", None))
    daemon.submit(SquareChange(t + 0.02, "f3", "N"))
    for _ in range(int(WAIT / 0.02)):
        if "Springer Felix drei" in printed.getvalue():
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)
    daemon.stop()
    await daemon.close()
    move = next(e for e in feed if e["type"] == "move")
    assert move["speech"] == "Springer Felix drei"  # the feed says what the player hears
    journal = next((tmp_path / "games").glob("*.jsonl"))
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    said = [line for line in lines if line["type"] == "speech"]
    assert ("heard", "important", "Neue Partie") in [
        (s["outcome"], s["kind"], s["text"]) for s in said
    ]
    heard_move = [s for s in said if s["kind"] == "move"]
    assert [(s["outcome"], s["text"], s["plies"]) for s in heard_move] == [
        ("heard", "Springer Felix drei", [1])
    ]
    assert heard_move[0]["t"] >= move["t"]
    assert not [e for e in feed if e["type"] == "speech"]  # the journal's, not the feed's
