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
from daemon.speech.announcer import AnnouncerGroup, build_announcers
from daemon.speech.engines import FallbackEngine, Pyttsx3Engine, TextEngine, pyttsx3_available
from daemon.speech.pyttsx3_worker import Synthesizer
from daemon.speech.settings import OutputSettings, SpeechSettings, SynthesisSeat
from daemon.speech.vocabulary import load_vocabulary

WAIT = 30.0
pytestmark = pytest.mark.skipif(not pyttsx3_available(), reason="pyttsx3/espeak-ng missing")


class DonePlayer:
    """Plays a WAV file by noting it: no sound card, no time."""

    def __init__(self) -> None:
        self.played: list[int] = []

    async def play(self, path: Path) -> None:
        self.played.append(path.stat().st_size)


def per_file(**kwargs) -> SpeechSettings:
    kwargs.setdefault("synthesis", "thread")
    return SpeechSettings(engine="pyttsx3", stream_player=(), **kwargs)


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


async def test_with_auto_a_second_output_synthesises_beside_the_first_not_after_it() -> None:
    """Two earphones, or two speaking boards of a hall: libespeak-ng is one per
    process, so in the one thread a short move for the second would wait until the
    first's whole long phrase was made. With ``auto`` (the default) the first output
    has the thread and the second a worker of its own: its move is ready first."""
    seat = SynthesisSeat()
    long_phrase = " ".join(["Springer Gustav eins Friedrich drei, Bauer Eva vier"] * 25)
    players = [DonePlayer(), DonePlayer()]
    first, second = (
        Pyttsx3Engine(per_file(synthesis=seat.resolve("auto")), "de", player) for player in players
    )
    assert (first.in_thread, second.in_thread) == (True, False)
    finished: list[str] = []

    async def say(engine: Pyttsx3Engine, text: str, who: str) -> None:
        await engine.speak(text, text)
        finished.append(who)

    try:
        await asyncio.wait_for(asyncio.gather(first.start(), second.start()), WAIT)
        long_one = asyncio.create_task(say(first, long_phrase, "long"))
        await asyncio.sleep(0.05)  # the long phrase is being made
        short_one = say(second, "Kurze Rochade", "short")
        await asyncio.wait_for(asyncio.gather(long_one, short_one), WAIT)
        assert finished == ["short", "long"]
        assert all(player.played for player in players)
    finally:
        await asyncio.gather(first.close(), second.close())


def test_the_hall_and_the_earphones_share_one_seat_the_first_output_keeps_the_thread() -> None:
    outputs = (OutputSettings(player="white"), OutputSettings(player="black"))
    seat = SynthesisSeat()
    one_board = build_announcers(SpeechSettings(engine="pyttsx3", outputs=outputs),
                                 load_vocabulary(), seat=seat)  # fmt: skip
    next_board = build_announcers(SpeechSettings(engine="pyttsx3"), load_vocabulary(), seat=seat)
    assert isinstance(one_board, AnnouncerGroup) and not isinstance(next_board, AnnouncerGroup)
    announcers = [*one_board.announcers, next_board]
    where = [a.settings.synthesis for a in announcers]
    assert where == ["thread", "process", "process"]
    chains = [a.engine for a in announcers]
    assert [c.engines[0].in_thread for c in chains] == [True, False, False]
    explicit = SynthesisSeat()
    assert [explicit.resolve(s) for s in ("process", "thread", "auto")] == [
        "process", "thread", "process"
    ]  # fmt: skip
