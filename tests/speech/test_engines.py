"""The real engines: pyttsx3 in its thread or its worker, espeak-ng, the player, the fallback chain.

No sound card is needed: WAV files are checked, playing uses a fake player or
``aplay -D null``, and a missing device is exercised on purpose.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import logging
import shutil
import wave
from dataclasses import replace
from pathlib import Path

import chess
import pytest

from daemon.game.events import Move
from daemon.speech.announcer import Announcer
from daemon.speech.engines import (
    Delivery,
    EspeakEngine,
    FallbackEngine,
    PlaybackFailure,
    Pyttsx3Engine,
    SpeechFailure,
    TextEngine,
    WavPlayer,
    build_engine,
    check_wav,
    default_player,
    pyttsx3_available,
)
from daemon.speech.settings import SpeechSettings
from daemon.speech.stream import StreamPlayer

WAIT = 30.0
needs_pyttsx3 = pytest.mark.skipif(not pyttsx3_available(), reason="pyttsx3/espeak-ng missing")
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="no espeak-ng")
needs_aplay = pytest.mark.skipif(shutil.which("aplay") is None, reason="no aplay")


def duration(path: Path) -> float:
    with wave.open(str(path), "rb") as wav:
        return wav.getnframes() / wav.getframerate()


class HeldPlayer:
    """Plays each file until released; records what was started, finished or cut."""

    def __init__(self) -> None:
        self.started: list[Path] = []
        self.finished: list[Path] = []
        self.cut: list[Path] = []
        self.sizes: list[int] = []
        self._release = asyncio.Event()

    async def play(self, path: Path) -> None:
        self.started.append(path)
        self.sizes.append(path.stat().st_size)
        try:
            await self._release.wait()
        except asyncio.CancelledError:
            self.cut.append(path)
            raise
        self._release.clear()
        self.finished.append(path)

    def release(self) -> None:
        self._release.set()


@pytest.fixture
async def pyttsx3_engine():
    engine = Pyttsx3Engine(SpeechSettings(engine="pyttsx3", rate=170), "de")
    await asyncio.wait_for(engine.start(), WAIT)
    yield engine
    await engine.close()


@needs_pyttsx3
async def test_many_announcements_each_get_their_own_wav(pyttsx3_engine) -> None:
    assert "de" in pyttsx3_engine.reported_voice  # German was selected, not the English default
    texts = [
        "Springer Felix drei",
        "Bauer Eva vier",
        "Läufer schlägt Zäsar sechs Schach",
        "Kurze Rochade",
        "Unmöglicher Zug. Springer zurück auf Gustav eins",
        "Dame David eins",
        "Bauer Eva acht Dame",
        "Lange Rochade",
    ]
    digests, lengths = set(), {}
    for text in texts:
        path, _ = await asyncio.wait_for(pyttsx3_engine.render(text), WAIT)
        check_wav(path, text)
        digests.add(hashlib.sha256(path.read_bytes()).hexdigest())
        lengths[text] = duration(path)
        path.unlink()
    assert len(digests) == len(texts)  # never the previous text again
    # The longest sentence takes clearly longer than the shortest: each file is its text.
    assert lengths[texts[4]] > 2 * lengths[texts[1]]
    assert all(0.3 < seconds < 10 for seconds in lengths.values())
    assert pyttsx3_engine.starts == 1


@needs_pyttsx3
async def test_a_killed_worker_is_restarted() -> None:
    engine = Pyttsx3Engine(SpeechSettings(engine="pyttsx3", rate=170, synthesis="process"), "de")
    try:
        await asyncio.wait_for(engine.start(), WAIT)
        first, _ = await asyncio.wait_for(engine.render("Springer Felix drei"), WAIT)
        assert engine.process is not None
        engine.process.kill()
        await engine.process.wait()
        second, _ = await asyncio.wait_for(engine.render("Bauer Eva vier"), WAIT)
        assert check_wav(second, "Bauer Eva vier") > 0.3
        assert engine.starts == 2
        assert first != second
    finally:
        await engine.close()


@needs_pyttsx3
async def test_a_move_is_not_cut_by_the_next_with_the_real_engine() -> None:
    player = HeldPlayer()
    settings = SpeechSettings(engine="pyttsx3")
    engine = Pyttsx3Engine(settings, "de", player)
    await asyncio.wait_for(engine.start(), WAIT)
    announcer = Announcer(settings, engine)
    runner = asyncio.create_task(announcer.run())
    try:
        board = chess.Board()
        for ply, san in enumerate(["e4", "e5"], 1):
            move = board.parse_san(san)
            by = "white" if board.turn else "black"
            board.push(move)
            announcer.receive(
                Move(t=ply, ply=ply, uci=move.uci(), san=san, fen=board.fen(), by=by,
                     speech="").to_dict()
            )  # fmt: skip
            while len(player.started) < 1:
                await asyncio.sleep(0.02)
        player.release()
        while len(player.started) < 2:
            await asyncio.sleep(0.02)
        player.release()
        await asyncio.wait_for(announcer.drain(), WAIT)
        assert player.cut == [] and len(player.finished) == 2
        assert player.sizes[0] > 1000 and player.sizes[1] > 1000
        assert [a.written for a in announcer.spoken] == ["Bauer Eva vier", "Bauer Eva fuenf"]
    finally:
        await announcer.close()
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)


@needs_espeak
async def test_a_phrase_over_its_budget_is_said_quicker_and_its_silence_trimmed() -> None:
    player = HeldPlayer()
    engine = EspeakEngine(SpeechSettings(engine="espeak-ng", rate=150, max_rate=300), "de", player)
    text = "Läufer schlägt Zäsar sechs Schach"
    try:
        untrimmed = engine._dir / "untrimmed.wav"
        await engine.synthesize(text, untrimmed, 150)
        full = duration(untrimmed)
        player.release()
        relaxed = await asyncio.wait_for(engine.speak(text, text), WAIT)
        assert relaxed.rate == 150
        assert relaxed.seconds is not None and full - 0.45 < relaxed.seconds < full - 0.25
        player.release()
        hurried = await asyncio.wait_for(engine.speak(text, text, budget=1.0), WAIT)
        # At the cap (300 words a minute) the phrase takes about 1.1 s: quicker, not cut.
        assert hurried.rate is not None and 200 <= hurried.rate <= 300
        assert hurried.seconds is not None and hurried.seconds < 0.6 * relaxed.seconds
    finally:
        await engine.close()


@pytest.mark.parametrize("voice", ["de", "en", "es"])
@needs_espeak
async def test_espeak_engine_writes_a_wav(voice: str) -> None:
    engine = EspeakEngine(SpeechSettings(engine="espeak-ng"), voice)
    try:
        path, seconds = await asyncio.wait_for(engine.render("Springer Felix drei"), WAIT)
        assert seconds == pytest.approx(duration(path))
        assert 0.3 < duration(path) < 10
    finally:
        await engine.close()


@needs_espeak
async def test_an_unknown_voice_is_a_failure_not_silence() -> None:
    engine = EspeakEngine(SpeechSettings(engine="espeak-ng"), "no-such-voice")
    try:
        with pytest.raises(SpeechFailure, match="no-such-voice"):
            await asyncio.wait_for(engine.render("Bauer Eva vier"), WAIT)
    finally:
        await engine.close()


def test_check_wav_refuses_empty_and_missing_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.wav"
    with wave.open(str(empty), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(22050)
    with pytest.raises(SpeechFailure, match="empty WAV"):
        check_wav(empty, "Bauer Eva vier")
    with pytest.raises(SpeechFailure, match="no WAV"):
        check_wav(tmp_path / "missing.wav", "Bauer Eva vier")
    (tmp_path / "text.wav").write_text("not a wav")
    with pytest.raises(SpeechFailure, match="no WAV"):
        check_wav(tmp_path / "text.wav", "Bauer Eva vier")


@needs_aplay
@needs_espeak
async def test_aplay_on_the_null_device_plays(tmp_path: Path) -> None:
    engine = EspeakEngine(SpeechSettings(engine="espeak-ng", device="null"), "de")
    try:
        await asyncio.wait_for(engine.speak("Bauer Eva vier", "Bauer Eva vier"), WAIT)
    finally:
        await engine.close()


class FailingEngine:
    plays_audio = True

    def __init__(self, name: str, failure: Exception) -> None:
        self.name = name
        self.failure = failure
        self.calls = 0

    async def start(self) -> None:
        return None

    async def speak(self, written: str, spoken: str, budget: float | None = None) -> None:
        self.calls += 1
        raise self.failure

    async def close(self) -> None:
        return None


async def test_a_missing_sound_device_gives_one_loud_line_and_text(caplog) -> None:
    no_device = PlaybackFailure("player aplay -q failed (1): audio open error")
    first = FailingEngine("pyttsx3", no_device)
    second = FailingEngine("espeak-ng", no_device)
    printed = io.StringIO()
    problems: list[str] = []
    chain = FallbackEngine([first, second, TextEngine(printed)], on_problem=problems.append)
    with caplog.at_level(logging.DEBUG, logger="dgt_bridge.speech"):
        for text in ["Bauer Eva vier", "Bauer Eva fuenf", "Springer Felix drei"]:
            await chain.speak(text, text)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "SOUND OUTPUT FAILED" in errors[0].getMessage()
    assert len(problems) == 1
    assert printed.getvalue().splitlines() == [
        "Bauer Eva vier",
        "Bauer Eva fuenf",
        "Springer Felix drei",
    ]
    # The shared player failed once: neither audio engine is retried for every move.
    assert first.calls == 1 and second.calls == 0
    assert chain.used == "text"


async def test_a_broken_engine_falls_back_to_the_next_for_this_announcement() -> None:
    broken = FailingEngine("pyttsx3", SpeechFailure("pyttsx3 worker did not start"))
    printed = io.StringIO()
    chain = FallbackEngine([broken, TextEngine(printed)])
    await chain.speak("Kurze Rochade", "Kurze Rochade")
    assert printed.getvalue() == "Kurze Rochade\n"


@needs_aplay
@needs_espeak
async def test_real_aplay_on_a_missing_device_falls_back(caplog) -> None:
    settings = SpeechSettings(engine="espeak-ng", device="no_such_device_xyz")
    printed = io.StringIO()
    chain = build_engine(settings, "de", text_stream=printed)
    try:
        with caplog.at_level(logging.ERROR, logger="dgt_bridge.speech"):
            await asyncio.wait_for(chain.speak("Bauer Eva vier", "Bauer Eva vier"), WAIT)
            await asyncio.wait_for(chain.speak("Bauer Eva fuenf", "Bauer Eva fünf"), WAIT)
        assert printed.getvalue().splitlines() == ["Bauer Eva vier", "Bauer Eva fuenf"]
        assert len(caplog.records) == 1
    finally:
        await chain.close()


def test_player_command_places_the_device_and_file() -> None:
    assert SpeechSettings(device="hw:1").player_command("/tmp/a.wav") == [
        "aplay", "-q", "-D", "hw:1", "/tmp/a.wav"
    ]  # fmt: skip
    assert SpeechSettings().player_command("/tmp/a.wav") == ["aplay", "-q", "/tmp/a.wav"]
    custom = SpeechSettings(player=("paplay", "--device={device}", "{file}"), device="x")
    assert custom.player_command("/f.wav") == ["paplay", "--device=x", "/f.wav"]
    assert isinstance(WavPlayer(custom), WavPlayer)


def test_a_player_of_the_sites_own_is_used_not_bypassed_by_the_shipped_stream() -> None:
    """A site that plays through paplay (PulseAudio, Bluetooth) keeps hearing it:
    the shipped running player is plain aplay, which would go around it."""
    assert isinstance(default_player(SpeechSettings()), StreamPlayer)
    own = SpeechSettings(player=("paplay", "{file}"))
    assert isinstance(default_player(own), WavPlayer)
    both = replace(own, stream_player=("pacat", "--rate={rate}", "--channels={channels}"))
    assert isinstance(default_player(both), StreamPlayer)
    assert both.stream_player_command(22050, 1) == ["pacat", "--rate=22050", "--channels=1"]
    assert isinstance(default_player(replace(own, stream_player=())), WavPlayer)


class EmptyWavEngine(FailingEngine):
    async def speak(self, written: str, spoken: str, budget: float | None = None) -> None:
        self.calls += 1
        raise SpeechFailure(f"empty WAV file for {spoken!r}", "empty WAV file")


async def test_one_cause_is_reported_once_whatever_the_text(caplog) -> None:
    flaky = EmptyWavEngine("pyttsx3", SpeechFailure("unused"))
    printed = io.StringIO()
    chain = FallbackEngine([flaky, TextEngine(printed)], retry_after=0.0)
    with caplog.at_level(logging.ERROR, logger="dgt_bridge.speech"):
        for text in ["Bauer Eva vier", "Dame David eins", "Kurze Rochade"]:
            await chain.speak(text, text)
    assert flaky.calls == 3  # retried every time (retry_after 0), reported once
    assert len(caplog.records) == 1
    assert printed.getvalue().splitlines() == ["Bauer Eva vier", "Dame David eins", "Kurze Rochade"]


@needs_pyttsx3
@pytest.mark.parametrize("synthesis", ["thread", "process"])
async def test_a_voice_pyttsx3_lacks_is_refused_not_spoken_in_english(caplog, synthesis) -> None:
    settings = SpeechSettings(engine="pyttsx3", device="null", synthesis=synthesis)
    printed = io.StringIO()
    chain = FallbackEngine([Pyttsx3Engine(settings, "xx-no-such-voice"), TextEngine(printed)])
    try:
        with caplog.at_level(logging.ERROR, logger="dgt_bridge.speech"):
            await asyncio.wait_for(chain.start(), WAIT)
            await asyncio.wait_for(chain.speak("Bauer Eva vier", "Bauer Eva vier"), WAIT)
        assert "xx-no-such-voice" in caplog.text
        assert printed.getvalue() == "Bauer Eva vier\n"
    finally:
        await chain.close()


class OnceSilentEngine(FailingEngine):
    """Fails one announcement (pyttsx3's "no samples", once in a while), then speaks."""

    def __init__(self, name: str, fail_at: set[int]) -> None:
        super().__init__(name, SpeechFailure("pyttsx3: no samples"))
        self.fail_at = fail_at

    async def speak(self, written: str, spoken: str, budget: float | None = None) -> Delivery:
        self.calls += 1
        if self.calls in self.fail_at:
            raise self.failure
        return Delivery(self.name, 1.0)


async def test_after_one_failed_phrase_the_next_move_is_said_by_the_first_engine_again() -> None:
    """One phrase pyttsx3 could not make must not leave the rest of the game (60 s
    here) on the slow espeak-ng program: the next move tries pyttsx3 again."""
    flaky = OnceSilentEngine("pyttsx3", fail_at={2})
    printed = io.StringIO()
    chain = FallbackEngine([flaky, TextEngine(printed)])  # the shipped retry_after
    used = []
    for text in ["Bauer Eva vier", "Dame David eins", "Kurze Rochade", "Turm Anna eins"]:
        await chain.speak(text, text)
        used.append(chain.used)
    assert used == ["pyttsx3", "text", "pyttsx3", "pyttsx3"]
    assert printed.getvalue() == "Dame David eins\n"


async def test_an_engine_failing_twice_in_a_row_is_set_aside_until_retry_after() -> None:
    always = FailingEngine("pyttsx3", SpeechFailure("pyttsx3: no samples"))
    printed = io.StringIO()
    chain = FallbackEngine([always, TextEngine(printed)])
    texts = ["Bauer Eva vier", "Dame David eins", "Kurze Rochade", "Turm Anna eins"]
    for text in texts:
        await chain.speak(text, text)
    assert always.calls == 2  # not tried for every move once it fails in a row
    assert printed.getvalue().splitlines() == texts
