"""The output's one running player, fed each phrase as pyttsx3 synthesises it (issue 19).

The player here is ``benchmarks/record_stream_player.py`` (no sound card): it notes
when each phrase's first loud sample would be heard; a missing device uses the real
aplay.
"""

from __future__ import annotations

import array
import asyncio
import io
import logging
import shutil
import sys
from pathlib import Path

import pytest

from daemon.speech.engines import Pyttsx3Engine, build_engine, pyttsx3_available
from daemon.speech.settings import SpeechSettings
from daemon.speech.stream import LEAD, StreamPlayer, Trimmer
from daemon.speech.wavs import KEEP

WAIT = 30.0
RECORDER = Path(__file__).resolve().parents[2] / "benchmarks" / "record_stream_player.py"
needs_pyttsx3 = pytest.mark.skipif(not pyttsx3_available(), reason="pyttsx3/espeak-ng missing")
#: Each streaming test in both places pyttsx3 can run: the daemon's thread and the
#: worker process (the one a crash or a hang cannot take the daemon down with).
both_syntheses = pytest.mark.parametrize("synthesis", ["thread", "process"])


def recording(log: Path, **kwargs) -> SpeechSettings:
    player = (sys.executable, str(RECORDER), str(log), "{rate}", "{channels}")
    return SpeechSettings(engine="pyttsx3", stream_player=player, **kwargs)


def heard(log: Path) -> list[float]:
    """When each phrase's first loud sample was heard (the log's ``stream`` lines)."""
    return [
        float(f[0]) for f in map(str.split, log.read_text().splitlines()) if f[1:2] == ["stream"]
    ]


def test_the_silence_around_a_phrase_is_cut_as_it_streams_and_the_pauses_inside_kept() -> None:
    rate = 8000
    trimmer = Trimmer(rate)
    word = array.array("h", [5000] * 800)
    silence = array.array("h", [0] * 1600)
    chunks = [silence, silence + word, silence, word, silence, silence]
    out = array.array("h")
    for chunk in chunks:
        out += trimmer.trim(chunk)
    out += trimmer.end()
    loud = [i for i, v in enumerate(out) if v]
    # Of 3200 samples of silence before the first word, LEAD is kept (the search
    # looks at every 16th sample); the pause between the words is there whole, and
    # after the last word KEEP is left.
    assert int(LEAD * rate) - 16 <= loud[0] <= int(LEAD * rate)
    assert out[loud[0] : loud[-1] + 1].tolist() == (word + silence + word).tolist()
    assert int(KEEP * rate) - 16 <= len(out) - loud[-1] - 1 <= int(KEEP * rate) + 16
    assert trimmer.frames == len(out)


@needs_pyttsx3
@both_syntheses
async def test_phrases_stream_into_one_running_player(tmp_path: Path, synthesis: str) -> None:
    log = tmp_path / "heard.log"
    log.touch()
    engine = Pyttsx3Engine(recording(log, device="null", synthesis=synthesis), "de")
    try:
        await asyncio.wait_for(engine.start(), WAIT)
        player = engine.player
        assert isinstance(player, StreamPlayer) and player.starts == 1
        assert (engine.process is not None) == (synthesis == "process")  # as configured
        short = await asyncio.wait_for(engine.speak("Bauer Eva vier", "Bauer Eva vier"), WAIT)
        long = await asyncio.wait_for(
            engine.speak("x", "Unmöglicher Zug. Springer zurück auf Gustav eins"), WAIT
        )
        assert short.seconds is not None and long.seconds is not None
        assert 0.4 < short.seconds < 2.5 and long.seconds > 1.5 * short.seconds
        assert player.starts == 1  # the same player for both
        for _ in range(100):
            if len(heard(log)) >= 2:
                break
            await asyncio.sleep(0.05)
        assert len(heard(log)) >= 2
    finally:
        await engine.close()


@needs_pyttsx3
@both_syntheses
async def test_a_cut_phrase_stops_at_once_and_the_next_is_heard(
    tmp_path: Path, synthesis: str
) -> None:
    log = tmp_path / "heard.log"
    log.touch()
    engine = Pyttsx3Engine(recording(log, synthesis=synthesis), "de")
    try:
        await asyncio.wait_for(engine.start(), WAIT)
        player = engine.player
        assert isinstance(player, StreamPlayer)
        text = "Stellung: Weiß König Gustav eins, Dame David eins, Türme Anna eins und Felix eins"
        speaking = asyncio.create_task(engine.speak(text, text))
        for _ in range(200):
            if heard(log):
                break
            await asyncio.sleep(0.02)
        first = player.process
        assert not speaking.done(), speaking.exception() if speaking.done() else None
        speaking.cancel()
        await asyncio.gather(speaking, return_exceptions=True)
        assert first is not None and first.returncode is not None  # killed: silent at once
        said = await asyncio.wait_for(engine.speak("Kurze Rochade", "Kurze Rochade"), WAIT)
        assert said.seconds is not None and said.seconds > 0.3
        assert player.starts == 2
    finally:
        await engine.close()


@needs_pyttsx3
@pytest.mark.skipif(shutil.which("aplay") is None, reason="no aplay")
async def test_a_missing_device_for_the_running_player_falls_back_to_text(caplog) -> None:
    settings = SpeechSettings(engine="pyttsx3", device="no_such_device_xyz")
    printed = io.StringIO()
    chain = build_engine(settings, "de", text_stream=printed)
    try:
        with caplog.at_level(logging.ERROR, logger="dgt_bridge.speech"):
            await asyncio.wait_for(chain.start(), WAIT)
            await asyncio.wait_for(chain.speak("Bauer Eva vier", "Bauer Eva vier"), WAIT)
            await asyncio.wait_for(chain.speak("Dame David eins", "Dame David eins"), WAIT)
        assert printed.getvalue().splitlines() == ["Bauer Eva vier", "Dame David eins"]
        assert len([r for r in caplog.records if "SOUND OUTPUT" in r.getMessage()]) == 1
    finally:
        await chain.close()


@needs_pyttsx3
@both_syntheses
async def test_a_streamed_phrase_over_its_budget_is_said_quicker(
    tmp_path: Path, synthesis: str
) -> None:
    log = tmp_path / "heard.log"
    log.touch()
    engine = Pyttsx3Engine(recording(log, rate=150, max_rate=300, synthesis=synthesis), "de")
    text = "Läufer schlägt Zäsar sechs Schach"
    try:
        await asyncio.wait_for(engine.start(), WAIT)
        relaxed = await asyncio.wait_for(engine.speak(text, text), WAIT)
        hurried = await asyncio.wait_for(engine.speak(text, text, budget=1.0), WAIT)
        assert relaxed.rate == 150 and relaxed.seconds is not None and relaxed.seconds > 1.3
        # the rate is chosen before the phrase is made, from the length learnt so far
        assert hurried.rate is not None and 200 <= hurried.rate <= 300
        # at the cap, 300 words a minute
        assert hurried.seconds is not None and hurried.seconds <= 1.25
    finally:
        await engine.close()
