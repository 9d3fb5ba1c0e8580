"""pyttsx3 in the daemon's synthesis thread (``speech.synthesis: thread``): what the
worker process gave for free must still hold, a failure or a hang is reported and the
next engine speaks, and the driver says nothing on the daemon's standard output."""

from __future__ import annotations

import asyncio
import io
import logging
import shutil
import threading
from pathlib import Path

import pytest

from daemon.speech import engines, synthesis
from daemon.speech.engines import FallbackEngine, Pyttsx3Engine, TextEngine, pyttsx3_available
from daemon.speech.pyttsx3_worker import Synthesizer
from daemon.speech.settings import SpeechSettings

WAIT = 30.0
pytestmark = pytest.mark.skipif(not pyttsx3_available(), reason="pyttsx3/espeak-ng missing")


class DonePlayer:
    """Plays a WAV file by noting it: no sound card, no time."""

    def __init__(self) -> None:
        self.played: list[int] = []

    async def play(self, path: Path) -> None:
        self.played.append(path.stat().st_size)


def per_file(**kwargs) -> SpeechSettings:
    return SpeechSettings(engine="pyttsx3", synthesis="thread", stream_player=(), **kwargs)


async def started_chain() -> tuple[FallbackEngine, Pyttsx3Engine, DonePlayer, io.StringIO]:
    """pyttsx3 in the thread, then the text engine (retried at every announcement)."""
    player = DonePlayer()
    engine = Pyttsx3Engine(per_file(), "de", player)
    printed = io.StringIO()
    chain = FallbackEngine([engine, TextEngine(printed)], retry_after=0.0)
    await asyncio.wait_for(chain.start(), WAIT)
    return chain, engine, player, printed


async def test_the_driver_prints_nothing_on_the_daemons_standard_output(capfd) -> None:
    """The daemon's standard output may carry ``--events -`` JSON: pyttsx3's driver
    prints "Audio saved to ..." after every file it writes."""
    player = DonePlayer()
    engine = Pyttsx3Engine(per_file(), "de", player)
    try:
        await asyncio.wait_for(engine.start(), WAIT)
        for text in ("Springer Felix drei", "Kurze Rochade"):
            await asyncio.wait_for(engine.speak(text, text), WAIT)
        assert len(player.played) == 2 and min(player.played) > 10_000
        assert engine.process is None  # no worker process
    finally:
        await engine.close()
    assert capfd.readouterr().out == ""


async def test_a_synthesis_that_fails_is_reported_and_the_next_engine_speaks(caplog) -> None:
    chain, engine, player, printed = await started_chain()
    try:
        shutil.rmtree(engine._dir)  # the WAV cannot be written: the driver raises
        with caplog.at_level(logging.ERROR, logger="dgt_bridge.speech"):
            await asyncio.wait_for(chain.speak("Bauer Eva vier", "Bauer Eva vier"), WAIT)
        assert printed.getvalue() == "Bauer Eva vier\n"
        assert "SPEECH ENGINE PYTTSX3 FAILED" in caplog.text
        engine._dir.mkdir()
        await asyncio.wait_for(chain.speak("Dame David eins", "Dame David eins"), WAIT)
        assert chain.used == "pyttsx3" and len(player.played) == 1  # not left hung
    finally:
        await chain.close()


async def test_a_hung_synthesis_is_reported_fails_fast_and_speaks_again_once_back(
    caplog, monkeypatch
) -> None:
    """A thread cannot be killed as the worker was: its time-out is reported, the
    next engine speaks meanwhile (at once, not after another time-out), and once the
    synthesis returns pyttsx3 speaks again."""
    held = threading.Event()
    to_file = Synthesizer.to_file

    def hanging(self, text, path, rate):
        if text == "Bauer Eva vier":
            held.wait(WAIT)
        return to_file(self, text, path, rate)

    monkeypatch.setattr(Synthesizer, "to_file", hanging)
    monkeypatch.setattr(engines, "SYNTH_TIMEOUT", 0.5)
    chain, _, player, printed = await started_chain()
    try:
        with caplog.at_level(logging.ERROR, logger="dgt_bridge.speech"):
            await asyncio.wait_for(chain.speak("Bauer Eva vier", "Bauer Eva vier"), WAIT)
        assert "took over" in caplog.text and printed.getvalue() == "Bauer Eva vier\n"
        await asyncio.sleep(0.6)  # hung for longer than the time-out now
        loop = asyncio.get_running_loop()
        started = loop.time()
        await asyncio.wait_for(chain.speak("Dame David eins", "Dame David eins"), WAIT)
        assert loop.time() - started < 0.4 and chain.used == "text"
        held.set()
        for _ in range(200):
            if synthesis.shared().busy_since is None:
                break
            await asyncio.sleep(0.02)
        await asyncio.wait_for(chain.speak("Kurze Rochade", "Kurze Rochade"), WAIT)
        assert chain.used == "pyttsx3" and len(player.played) == 1
        assert printed.getvalue().splitlines() == ["Bauer Eva vier", "Dame David eins"]
    finally:
        held.set()
        await chain.close()
