"""Speech engines the announcer can use, each safe to cancel mid-sentence.

- ``Pyttsx3Engine``: pyttsx3 (espeak driver) in a child process that owns it (see
  ``pyttsx3_worker`` for why); restarted when it dies. With a ``StreamPlayer`` (the
  default: ``speech.stream_player``) its samples are streamed into the output's one
  running player as they are made, so the first sound does not wait for the last
  (issue 19); with a per-file player, one WAV file per announcement.
- ``EspeakEngine``: the ``espeak-ng`` program writes the WAV (no Python binding,
  lowest latency).
- ``TextEngine``: prints the written text (no audio; the default without speech).
- ``FallbackEngine``: tries engines in order; a failing engine is reported once,
  loudly, and the announcement goes to the next one, so it is never lost.

Audio engines never trust a success report: the WAV must exist, be a WAV, have
frames and a plausible length (a stream: loud samples), and the daemon plays it
itself (``StreamPlayer``, or ``WavPlayer``: ``aplay`` per file), so a new move can
stop it at once by killing the player.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import wave
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO

from daemon.speech import wavs
from daemon.speech.schedule import quicker_rate, spoken_seconds
from daemon.speech.settings import SpeechSettings
from daemon.speech.speechfirst import first_sound
from daemon.speech.stream import PlaybackError, StreamPlayer
from drivers.records import FrozenRecord

log = logging.getLogger("dgt_bridge.speech")

#: Seconds a synthesis may take before the worker is considered hung.
SYNTH_TIMEOUT = 15.0


class SpeechFailure(Exception):
    """An engine could not speak one announcement (the announcer falls back).

    ``kind`` names the cause without the announcement's text, so the same cause
    is reported once however many different moves it hits.
    """

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind or message


class PlaybackFailure(SpeechFailure):
    """The player failed (no sound card, wrong device): every audio engine would too."""


@dataclass(eq=False, repr=False, slots=True)
class Delivery(FrozenRecord):
    """How an announcement was spoken: for the journal and the benchmark."""

    engine: str
    seconds: float | None = None  # the sound's length (None: no audio, the text engine)
    rate: int | None = None  # words per minute it was rendered at


class Engine(Protocol):
    name: str

    async def start(self) -> None: ...

    async def speak(self, written: str, spoken: str, budget: float | None = None) -> Delivery:
        """Return once it has been heard; cancelling stops the sound at once.

        ``budget``: seconds the sound should take (a move in fast play); an audio
        engine renders it at a quicker rate, up to ``max_rate``, to fit.
        """

    async def close(self) -> None: ...


def check_wav(path: Path, text: str) -> float:
    """The WAV's duration, or SpeechFailure if it is not a plausible spoken ``text``."""
    try:
        with wave.open(str(path), "rb") as wav:
            frames, rate = wav.getnframes(), wav.getframerate()
    except (OSError, EOFError, wave.Error) as exc:
        raise SpeechFailure(f"no WAV file for {text!r}: {exc}", "no WAV file") from None
    if frames == 0 or rate == 0:
        raise SpeechFailure(f"empty WAV file for {text!r}", "empty WAV file")
    duration = frames / rate
    if duration < 0.1 or duration > 2.0 + 1.0 * len(text):
        raise SpeechFailure(
            f"implausible WAV length {duration:.2f} s for {text!r}", "implausible WAV length"
        )
    return duration


class Player(Protocol):
    """What plays an engine's WAV (``StreamPlayer``, ``WavPlayer``; a test's timer)."""

    async def play(self, path: Path) -> None: ...


def default_player(settings: SpeechSettings) -> Player:
    """The output's player: one kept running (``stream_player``), else one per file."""
    return StreamPlayer(settings) if settings.streams else WavPlayer(settings)


class WavPlayer:
    """Plays a WAV with an external command (``aplay``) that cancellation kills."""

    def __init__(self, settings: SpeechSettings) -> None:
        self.settings = settings

    async def play(self, path: Path) -> None:
        argv = self.settings.player_command(str(path))
        try:
            # once it runs, what waited for the first sound may (``daemon.speech.speechfirst``)
            code, message = await run_to_end(argv, started=first_sound)
        except OSError as exc:
            raise PlaybackFailure(f"player {argv[0]!r} cannot run: {exc}") from None
        if code != 0:
            detail = message.splitlines()
            raise PlaybackFailure(
                f"player {' '.join(argv[:-1])} failed ({code}):"
                f" {detail[-1] if detail else 'no message'}"
            )


async def run_to_end(
    argv: list[str],
    data: bytes | None = None,
    timeout: float | None = None,
    started: Callable[[], None] | None = None,
) -> tuple[int, str]:
    """``argv`` run to its end, ``data`` its input (None: /dev/null): its exit status
    and what it wrote on stderr; ``started`` is called once it runs. OSError: it cannot
    run. Cancelled, or still running after ``timeout`` seconds (TimeoutError), it is
    killed and reaped first."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL if data is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    if started is not None:
        started()
    try:
        _, stderr = await asyncio.wait_for(process.communicate(data), timeout)
    except (asyncio.CancelledError, TimeoutError):
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with contextlib.suppress(Exception):
            await asyncio.shield(process.wait())
        raise
    code = process.returncode
    return (code if code is not None else -1), stderr.decode("utf-8", "replace").strip()


class _WavEngine:
    """Synthesise into a fresh file, check it, play it, remove it."""

    name = "wav"
    plays_audio = True

    def __init__(self, settings: SpeechSettings, voice: str, player: Player | None) -> None:
        self.settings = settings
        self.voice = voice
        self.player = player or default_player(settings)
        self._dir = Path(tempfile.mkdtemp(prefix="dgt-bridge-speech-"))
        self._count = 0

    async def start(self) -> None:
        return None

    async def synthesize(self, text: str, path: Path, rate: int) -> None:
        raise NotImplementedError

    async def render(self, text: str, rate: int | None = None) -> tuple[Path, float]:
        """The checked WAV of ``text``, its silence trimmed, and its length in seconds
        (the caller plays and removes it)."""
        self._count += 1
        path = self._dir / f"{self._count:06d}.wav"
        for leftover in self._dir.glob("*.wav"):  # of announcements cut mid-synthesis
            with contextlib.suppress(OSError):
                leftover.unlink()
        await self.synthesize(text, path, int(rate or self.settings.rate))
        check_wav(path, text)
        return path, wavs.trim(path)

    async def speak(self, written: str, spoken: str, budget: float | None = None) -> Delivery:
        rate = int(self.settings.rate)
        path, seconds = await self.render(spoken, rate)
        try:
            quicker = quicker_rate(seconds, budget, rate, int(self.settings.max_rate))
            if quicker is not None:  # fast play: the same words, said quicker
                with contextlib.suppress(OSError):
                    path.unlink()
                rate = quicker
                path, seconds = await self.render(spoken, rate)
            wavs.to_channel(path, self.settings.channel)
            try:
                await self.player.play(path)
            except PlaybackError as exc:
                raise PlaybackFailure(str(exc)) from None
        finally:
            with contextlib.suppress(OSError):
                path.unlink()
        return Delivery(self.name, seconds, rate)

    async def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)
        closing = getattr(self.player, "close", None)
        if closing is not None:  # a StreamPlayer (shared by the chain: closing twice is fine)
            await closing()


def espeak_voice_names(program: str = "espeak-ng") -> set[str]:
    """Every name ``espeak-ng -v`` accepts: languages, voice names, voice files."""
    try:
        listing = subprocess.run(
            [program, "--voices"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    names: set[str] = set()
    for line in listing.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 5:
            continue
        names.update({parts[1], parts[3], parts[4], parts[4].rsplit("/", 1)[-1]})
        names.update(re.findall(r"\(([^\s()]+) \d+\)", line))
    return {name.lower() for name in names}


class EspeakEngine(_WavEngine):
    """The espeak-ng program: one short-lived process per announcement.

    espeak-ng given an unknown voice speaks English without a word of warning, so
    the voice is checked against ``espeak-ng --voices`` at start.
    """

    name = "espeak-ng"

    def __init__(self, settings: SpeechSettings, voice: str, player: Player | None = None):
        super().__init__(settings, voice, player)
        self.program = shutil.which("espeak-ng") or "espeak-ng"
        self._voice_checked = False

    async def start(self) -> None:
        known = await asyncio.to_thread(espeak_voice_names, self.program)
        if not known:
            raise SpeechFailure(f"{self.program} does not run or lists no voices")
        if self.voice.split("+", 1)[0].lower() not in known:
            raise SpeechFailure(f"espeak-ng has no voice {self.voice!r} (see espeak-ng --voices)")
        self._voice_checked = True

    async def render(self, text: str, rate: int | None = None) -> tuple[Path, float]:
        if not self._voice_checked:
            await self.start()
        return await super().render(text, rate)

    async def synthesize(self, text: str, path: Path, rate: int) -> None:
        argv = [
            self.program,
            "-v",
            self.voice,
            "-s",
            str(rate),
            "-a",
            str(round(float(self.settings.volume) * 100)),
            "-w",
            str(path),
        ]
        try:
            code, message = await run_to_end(argv, text.encode("utf-8"), SYNTH_TIMEOUT)
        except OSError as exc:
            raise SpeechFailure(f"espeak-ng cannot run: {exc}") from None
        if code != 0:
            raise SpeechFailure(
                f"espeak-ng -v {self.voice}: {message or f'exit {code}'}",
                f"espeak-ng exit {code}",
            )
        if message:  # a warning; the WAV check decides whether it matters
            log.debug("espeak-ng -v %s: %s", self.voice, message)


class Pyttsx3Engine(_WavEngine):
    """pyttsx3 owned by the daemon's one synthesis thread (``speech.synthesis: thread``,
    ``daemon.speech.synthesis``), or by one child process, restarted when it dies or
    hangs (``process``)."""

    name = "pyttsx3"

    def __init__(self, settings: SpeechSettings, voice: str, player: Player | None = None):
        super().__init__(settings, voice, player)
        self.process: asyncio.subprocess.Process | None = None
        self.in_thread = settings.synthesis != "process"  # "auto" alone: the thread
        self._thread_ready = False
        self.reported_voice = ""
        self.sample_rate = 22050  # the worker's, from its ready line
        self.starts = 0
        self._ids = 0
        self._lock = asyncio.Lock()
        self._unread = 0  # bytes of a cancelled stream's chunk left in the pipe
        # A streamed phrase's rate is chosen before its length is known: from the
        # schedule's estimate, times this factor learnt from the phrases said before
        # (measured length / estimate).
        self.length_factor = 1.0

    async def start(self) -> None:
        if self.in_thread:
            await self._ensure_thread()
        else:
            await self._ensure_worker()
        if isinstance(self.player, StreamPlayer):  # ready before the first move
            try:
                await self.player.open(self.sample_rate)
            except PlaybackError as exc:
                raise PlaybackFailure(str(exc)) from None

    async def _ensure_thread(self) -> None:
        """This engine's voice set in the synthesis thread (started if need be)."""
        if self._thread_ready:
            return
        from daemon.speech import synthesis

        try:
            voice = await synthesis.run(
                synthesis.shared(), SYNTH_TIMEOUT, voice=self.voice,
                volume=float(self.settings.volume), rate=int(self.settings.rate),
            )  # fmt: skip
        except (synthesis.Hung, RuntimeError) as exc:
            raise SpeechFailure(f"pyttsx3 did not start: {exc}") from None
        self.starts += 1
        self.reported_voice = str(voice or "")
        self._thread_ready = True

    async def _in_thread(self, text: str, rate: int, *, path: Path | None = None,
                         on_pcm=None, straight=None) -> None:  # fmt: skip
        """One text in the synthesis thread: into ``path``, or streamed to ``on_pcm``
        (its first samples ``straight`` from the thread when given)."""
        from daemon.speech import synthesis

        await self._ensure_thread()
        try:
            await synthesis.run(
                synthesis.shared(), SYNTH_TIMEOUT, voice=self.voice,
                volume=float(self.settings.volume), rate=rate, text=text,
                path=None if path is None else str(path), on_pcm=on_pcm, straight=straight,
            )  # fmt: skip
        except synthesis.Hung as exc:
            # A thread cannot be killed: requests fail at once until it returns.
            raise SpeechFailure(
                f"pyttsx3 took over {SYNTH_TIMEOUT:.0f} s ({exc})", "pyttsx3 hung"
            ) from None
        except RuntimeError as exc:
            raise SpeechFailure(f"pyttsx3: {exc}") from None

    async def _ensure_worker(self) -> asyncio.subprocess.Process:
        if self.process is not None and self.process.returncode is None:
            return self.process
        await self._stop_worker()
        package_root = str(Path(__file__).resolve().parent.parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        self.starts += 1
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            # The file, not ``-m daemon.speech...``: the packages' imports stay out of
            # this resident process (about 0.5 MB of PSS, issue 19); -P: its directory
            # is not put on sys.path, where a module could shadow the standard library.
            "-P",
            str(Path(__file__).with_name("pyttsx3_worker.py")),
            "--voice",
            self.voice,
            "--rate",
            str(int(self.settings.rate)),
            "--volume",
            str(float(self.settings.volume)),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
        )
        self.process = process
        try:
            hello = await asyncio.wait_for(self._read(process), SYNTH_TIMEOUT)
        except (TimeoutError, SpeechFailure) as exc:
            await self._stop_worker()
            raise SpeechFailure(f"pyttsx3 worker did not start: {exc}") from None
        if not hello.get("ready"):
            await self._stop_worker()
            raise SpeechFailure(f"pyttsx3 worker: {hello.get('error')}")
        self.reported_voice = str(hello.get("voice") or "")
        self.sample_rate = int(hello.get("rate") or self.sample_rate)
        self._unread = 0
        return process

    @staticmethod
    async def _read(process: asyncio.subprocess.Process) -> dict:
        assert process.stdout is not None
        line = await process.stdout.readline()
        if not line:
            raise SpeechFailure("pyttsx3 worker ended")
        try:
            return json.loads(line)
        except ValueError:
            raise SpeechFailure(f"pyttsx3 worker said {line[:80]!r}") from None

    async def _stop_worker(self) -> None:
        process, self.process = self.process, None
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with contextlib.suppress(Exception):
            await process.wait()

    async def synthesize(self, text: str, path: Path, rate: int) -> None:
        await self._synthesize(text, rate, path=path)

    async def _synthesize(self, text: str, rate: int, *, path: Path | None = None,
                          on_pcm=None, heard=lambda: False, straight=None) -> None:  # fmt: skip
        async with self._lock:
            if self.in_thread:
                await self._in_thread(text, rate, path=path, on_pcm=on_pcm, straight=straight)
                return
            try:
                await self._request(text, rate, path=path, on_pcm=on_pcm)
            except SpeechFailure:
                # A dead worker (killed, crashed) is restarted once for this text, if
                # none of it was heard yet.
                if self.process is not None and self.process.returncode is None:
                    raise
                if heard():  # part of it was heard: not said twice
                    raise
                log.warning("pyttsx3 worker ended; restarting it")
                await self._request(text, rate, path=path, on_pcm=on_pcm)

    async def speak(self, written: str, spoken: str, budget: float | None = None) -> Delivery:
        player = self.player
        if not isinstance(player, StreamPlayer):
            return await super().speak(written, spoken, budget)
        rate = int(self.settings.rate)
        estimate = spoken_seconds(spoken, rate) * self.length_factor
        rate = quicker_rate(estimate, budget, rate, int(self.settings.max_rate)) or rate
        try:
            async with player.phrase(self.sample_rate) as phrase:

                async def on_pcm(data: bytes) -> None:
                    await phrase.write(array.array("h", data))

                await self._synthesize(
                    spoken, rate, on_pcm=on_pcm, heard=lambda: phrase.first_at is not None,
                    # the first samples into the player from the synthesis thread
                    # (a worker process's come through the loop anyway)
                    straight=phrase.straight() if self.in_thread else None,
                )  # fmt: skip
                if phrase.first_at is None:
                    raise SpeechFailure(f"no sound for {spoken!r}", "silent phrase")
        except PlaybackError as exc:
            raise PlaybackFailure(str(exc)) from None
        seconds = phrase.seconds
        if spoken:
            measured = seconds / spoken_seconds(spoken, rate)
            self.length_factor = min(2.0, max(0.5, 0.5 * self.length_factor + 0.5 * measured))
        return Delivery(self.name, seconds, rate)

    async def _request(self, text: str, rate: int, *, path: Path | None = None,
                       on_pcm=None) -> None:  # fmt: skip
        """One text to the worker: into ``path``, or streamed chunk by chunk to
        ``on_pcm`` (awaited: a full player pipe holds the worker back)."""
        process = await self._ensure_worker()
        assert process.stdout is not None
        if self._unread:  # the rest of a chunk whose reading was cancelled
            await process.stdout.readexactly(self._unread)
            self._unread = 0
        self._ids += 1
        ident = self._ids
        order: dict[str, object] = {"id": ident, "text": text, "rate": rate}
        if on_pcm is not None:
            order["stream"] = True
        else:
            order["file"] = str(path)
        request = json.dumps(order, ensure_ascii=False)
        assert process.stdin is not None
        try:
            process.stdin.write(request.encode("utf-8") + b"\n")
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            await self._stop_worker()
            raise SpeechFailure(f"pyttsx3 worker gone: {exc}") from None
        while True:
            # The time-out is for the worker's silence: a long phrase's chunks may be
            # held back by the player's pipe as long as it takes to play them.
            # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation
            # (a cut phrase went on playing) when what it awaits is ready at once.
            try:
                async with asyncio.timeout(SYNTH_TIMEOUT):
                    reply = await self._read(process)
            except TimeoutError:
                await self._stop_worker()
                raise SpeechFailure(f"pyttsx3 took over {SYNTH_TIMEOUT:.0f} s") from None
            except SpeechFailure:
                await self._stop_worker()
                raise
            except asyncio.CancelledError:
                # The worker finishes this text unheard; its reply is skipped next time.
                raise
            if "pcm" in reply:
                size = int(reply["pcm"])
                self._unread = size
                try:
                    async with asyncio.timeout(SYNTH_TIMEOUT):
                        data = await process.stdout.readexactly(size)
                except (TimeoutError, asyncio.IncompleteReadError):
                    await self._stop_worker()
                    raise SpeechFailure("pyttsx3 worker stopped mid-phrase") from None
                self._unread = 0
                if reply.get("id") == ident and on_pcm is not None:
                    await on_pcm(data)
                continue
            if reply.get("id") != ident:
                continue  # the reply to an announcement that was cancelled meanwhile
            if not reply.get("ok"):
                raise SpeechFailure(f"pyttsx3: {reply.get('error')}")
            return

    async def close(self) -> None:
        await self._stop_worker()
        await super().close()


class TextEngine:
    """Prints the written text: no audio, and the last engine of every chain."""

    name = "text"

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    async def start(self) -> None:
        return None

    async def speak(self, written: str, spoken: str, budget: float | None = None) -> Delivery:
        stream = self.stream or sys.stdout
        print(written, file=stream, flush=True)
        return Delivery(self.name)

    async def close(self) -> None:
        return None


class FallbackEngine:
    """Engines in order of preference; a failure moves this announcement to the next.

    Each distinct failure is logged once at ERROR (a missing sound card must give
    one loud line, not one per move). An engine that failed ``set_aside_after``
    announcements in a row, or at its start, and the audio engines after a failed
    player, are skipped for ``retry_after`` seconds, then tried again (a sound card
    plugged in, a worker restarted), so a broken engine costs no latency in between.
    A single failed phrase does not set the engine aside: pyttsx3 now and then
    made no samples for one phrase, and the next 60 s of moves went to the
    espeak-ng program, 4-5 times slower to the first sound.
    """

    name = "fallback"

    def __init__(
        self,
        engines: list[Engine],
        retry_after: float = 60.0,
        on_problem=None,
        set_aside_after: int = 2,
    ) -> None:
        if not engines:
            raise ValueError("at least one engine")
        self.engines = engines
        self.retry_after = retry_after
        self.on_problem = on_problem
        self.used: str | None = None  # the engine that spoke the last announcement
        self.set_aside_after = set_aside_after
        self._broken_until: dict[str, float] = {}
        self._failed_in_row: dict[str, int] = {}
        self._reported: set[tuple[str, str]] = set()

    async def start(self) -> None:
        for engine in self.engines:
            try:
                await engine.start()
            except SpeechFailure as exc:
                self._failed(engine, exc, at_start=True)

    def _failed(self, engine: Engine, exc: Exception, *, at_start: bool = False) -> None:
        until = time.monotonic() + self.retry_after
        in_row = self._failed_in_row[engine.name] = self._failed_in_row.get(engine.name, 0) + 1
        if isinstance(exc, PlaybackFailure):
            # The player is shared: the other audio engines need not fail it again.
            broken = [e for e in self.engines if getattr(e, "plays_audio", False)]
            what = "sound output"
        else:
            what = f"speech engine {engine.name}"
            # One phrase it could not make: the next announcement tries it again.
            broken = [engine] if at_start or in_row >= self.set_aside_after else []
        for each in broken:
            self._broken_until[each.name] = until
        key = (what, getattr(exc, "kind", str(exc)))
        if key in self._reported:
            log.debug("%s failed again: %s", what, exc)
            return
        self._reported.add(key)
        fallback = next(
            (e.name for e in self.engines if e not in broken and e is not engine), "nothing"
        )
        log.error("SPEECH: %s FAILED: %s (falling back to %s)", what.upper(), exc, fallback)
        if self.on_problem is not None:
            with contextlib.suppress(Exception):
                self.on_problem(f"{what} failed: {exc}")

    async def speak(self, written: str, spoken: str, budget: float | None = None) -> Delivery:
        now = time.monotonic()
        candidates = [e for e in self.engines if self._broken_until.get(e.name, 0.0) <= now]
        if not candidates:
            candidates = [self.engines[-1]]
        for engine in candidates:
            if (
                self._broken_until.get(engine.name, 0.0) > time.monotonic()
                and engine is not (self.engines[-1])
            ):
                continue  # broken by a shared failure during this very announcement
            try:
                delivery = await engine.speak(written, spoken, budget)
            except SpeechFailure as exc:
                self._failed(engine, exc)
                continue
            self.used = engine.name
            self._broken_until.pop(engine.name, None)
            self._failed_in_row.pop(engine.name, None)
            return delivery
        raise SpeechFailure(f"no engine could speak {written!r}")

    async def close(self) -> None:
        for engine in self.engines:
            with contextlib.suppress(Exception):
                await engine.close()


def pyttsx3_available() -> bool:
    """pyttsx3 is installed and its espeak driver will find the espeak-ng library."""
    import ctypes.util
    import importlib.util

    if importlib.util.find_spec("pyttsx3") is None:
        return False
    return bool(ctypes.util.find_library("espeak-ng") or ctypes.util.find_library("espeak"))


def build_engine(
    settings: SpeechSettings,
    voice: str,
    *,
    player: Player | None = None,
    text_stream: TextIO | None = None,
    on_problem=None,
) -> FallbackEngine:
    """The chain for ``settings.engine``: pyttsx3, then espeak-ng, then text."""
    chain: list[Engine] = []
    choice = settings.engine
    player = player or default_player(settings)  # one per output, shared by its engines
    if choice in ("auto", "pyttsx3") and (choice == "pyttsx3" or pyttsx3_available()):
        chain.append(Pyttsx3Engine(settings, voice, player))
    if choice in ("auto", "pyttsx3", "espeak-ng") and (
        choice == "espeak-ng" or shutil.which("espeak-ng")
    ):
        chain.append(EspeakEngine(settings, voice, player))
    chain.append(TextEngine(text_stream))
    return FallbackEngine(chain, on_problem=on_problem)
