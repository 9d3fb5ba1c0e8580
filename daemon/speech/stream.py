"""One player kept running per output, fed raw PCM through a pipe (issue 19).

Starting a player for every phrase (``aplay file.wav``) costs a process start and
ALSA's set-up before the first sample, and the WAV is written, re-read and checked
first: on a Pi Zero 2 W's budget that was most of the 250 ms a move may take from the
press to the first sound. ``StreamPlayer`` starts the player once (``speech.
stream_player``, by default ``aplay`` reading raw 16-bit PCM from its standard input)
and writes each phrase's samples into its pipe as the engine makes them.

- The silence espeak-ng puts before and after a phrase is cut as it streams by
  (``Trimmer``): the leading silence is not waited through, a short tail is kept.
- A stereo output with ``channel`` left or right gets the mono phrase on that side.
- ``speak`` returns once the phrase has been played: the samples written are timed
  at the player's rate (``ends_at``), as the player plays them.
- Cutting a phrase (a cancelled announcement) kills the player, so the sound stops
  at once, whatever is still in the pipe; the next phrase starts a new one.
- After each phrase some silence is written so that a player that reads its input
  in whole periods (aplay) plays the phrase's last samples without waiting for more.
- A phrase's first samples may be written by the thread that makes them
  (``Phrase.straight``, the synthesis thread's): on one slow core the event loop's
  turn, twice, came between espeak-ng's first samples and the player (issue 28).
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
import time
import wave
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from daemon.speech.settings import SpeechSettings
from daemon.speech.speechfirst import first_sound
from daemon.speech.wavs import KEEP, SILENCE
from drivers.records import FrozenRecord

log = logging.getLogger("dgt_bridge.speech")

#: Seconds of silence kept before a phrase's first loud sample (a click-free start;
#: the file path keeps ``KEEP``, here every millisecond is lag).
LEAD = 0.01
#: Seconds of silence written after each phrase: more than the player's period (25
#: ms with the shipped ``--buffer-time=100000``), so that a player reading whole
#: periods plays the phrase's last samples at once. A phrase right behind waits
#: this long (with the tail's ``KEEP`` and ``LEAD``: about 0.1 s between phrases).
FLUSH = 0.03
#: Seconds a player that was told to stop (end of input) may take to finish.
CLOSE_WAIT = 2.0


class PlaybackError(Exception):
    """The player could not be started or died (``engines`` makes it a PlaybackFailure)."""


def _loud(samples: array.array, channels: int) -> tuple[int, int] | None:
    """Index of the first and last loud sample (every 16th frame looked at), or None."""
    step = max(1, channels * 16)
    loud = [n for n in range(0, len(samples), step) if abs(samples[n]) > SILENCE]
    if not loud:
        return None
    return loud[0], min(len(samples), loud[-1] + step)


class Trimmer:
    """Cuts the leading silence to ``LEAD`` and the trailing to ``KEEP``, chunk by chunk.

    Silence inside the phrase (between words, between two moves said together) is
    held back until the next loud sample and then written whole; silence after the
    last loud sample is dropped at ``end`` but for ``KEEP`` seconds.
    """

    def __init__(self, rate: int, channels: int = 1) -> None:
        self.channels = channels
        self.lead = int(LEAD * rate) * channels
        self.tail = int(KEEP * rate) * channels
        self.started = False
        self.held = array.array("h")
        self.frames = 0  # frames passed on

    def trim(self, samples: array.array) -> array.array:
        """What of ``samples`` can be played now."""
        bounds = _loud(samples, self.channels)
        if bounds is None:
            if self.started:
                self.held.extend(samples)
            else:  # still before the phrase: only the last LEAD is kept
                self.held = (self.held + samples)[-self.lead :] if self.lead else array.array("h")
            return array.array("h")
        first, last = bounds
        if not self.started:
            first -= first % self.channels
            before = (self.held + samples[:first])[-self.lead :] if self.lead else array.array("h")
            out = before + samples[first:last]
            self.started = True
        else:
            out = self.held + samples[:last]
        self.held = samples[last:]
        self.frames += len(out) // self.channels
        return out

    def end(self) -> array.array:
        out = self.held[: self.tail] if self.started else array.array("h")
        out = out[: len(out) - len(out) % self.channels]
        self.held = array.array("h")
        self.frames += len(out) // self.channels
        return out


def to_channel(mono: array.array, channel: str) -> array.array:
    """Mono samples as stereo with the sound on ``channel`` only (left or right)."""
    stereo = array.array("h", bytes(4 * len(mono)))
    stereo[0 if channel == "left" else 1 :: 2] = mono
    return stereo


def _little_endian(samples: array.array) -> bytes:
    """16-bit samples as the player reads them (raw PCM, little-endian)."""
    if sys.byteorder == "big":
        samples = array.array("h", samples)
        samples.byteswap()
    return samples.tobytes()


class StreamPlayer:
    """The output's one player process; ``play(path)`` for a WAV, or ``phrase()`` to stream."""

    plays_stream = True

    def __init__(self, settings: SpeechSettings, clock=time.monotonic) -> None:
        self.settings = settings
        self.clock = clock
        self.channels = 1 if settings.channel == "both" else 2
        self.process: asyncio.subprocess.Process | None = None
        self.rate: int | None = None
        self.starts = 0
        self.ends_at = 0.0  # when what was written will have been played
        self._errors: deque[str] = deque(maxlen=4)
        self._stderr_task: asyncio.Task[None] | None = None
        self._exited: asyncio.Future[int] | None = None  # the player's wait()

    # -- the process ------------------------------------------------------------------

    async def open(self, rate: int) -> None:
        """The player running at ``rate`` (started, or restarted for another rate)."""
        if self.process is not None and self.process.returncode is None and self.rate == rate:
            return
        await self.cut()
        argv = self.settings.stream_player_command(rate, self.channels)
        self._errors.clear()
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            raise PlaybackError(f"player {argv[0]!r} cannot run: {exc}") from None
        self.starts += 1
        self.rate = rate
        self.ends_at = self.clock()
        self._stderr_task = asyncio.create_task(self._keep_errors(self.process))
        self._exited = asyncio.ensure_future(self.process.wait())

    async def _keep_errors(self, process: asyncio.subprocess.Process) -> None:
        """Its last lines, for the message if it fails (its underruns between phrases
        are normal: the pipe is read, so it never blocks on a full stderr)."""
        assert process.stderr is not None
        while line := await process.stderr.readline():
            text = line.decode("utf-8", "replace").strip()
            if text and "underrun" not in text:
                self._errors.append(text)

    def _failure(self) -> PlaybackError:
        argv = self.settings.stream_player_command(self.rate or 0, self.channels)
        code = self.process.returncode if self.process is not None else None
        detail = self._errors[-1] if self._errors else "no message"
        return PlaybackError(f"player {' '.join(argv[:2])} failed ({code}): {detail}")

    async def cut(self) -> None:
        """Stop the sound at once (the player is killed; the next phrase starts one)."""
        process, self.process = self.process, None
        errors, self._stderr_task = self._stderr_task, None
        if process is None:
            return
        if process.returncode is None:
            # By its pid: asyncio's kill() does nothing once it thinks the process gone.
            with contextlib.suppress(OSError):
                os.kill(process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(process.wait()), CLOSE_WAIT)
        if process.stdin is not None:  # the pipe too: its transport is then closed
            with contextlib.suppress(Exception):
                process.stdin.close()
        if errors is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(errors), CLOSE_WAIT)
            errors.cancel()

    async def close(self) -> None:
        """End of input: the player plays what it has and ends (killed if it hangs)."""
        process = self.process
        if process is None or process.returncode is not None or process.stdin is None:
            await self.cut()
            return
        with contextlib.suppress(Exception):
            process.stdin.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(process.wait()), CLOSE_WAIT)
        await self.cut()

    # -- the samples ------------------------------------------------------------------

    def on_channel(self, mono: array.array) -> array.array:
        """Mono samples in the player's channels (the output's ``channel``)."""
        channel = self.settings.channel
        return mono if channel == "both" else to_channel(mono, channel)

    def pcm(self, mono: array.array) -> bytes:
        """Mono samples as the player reads them: on the output's channel, little-endian."""
        return _little_endian(self.on_channel(mono))

    def played_from(self, at: float, frames: int) -> None:
        """``frames`` more written at ``at``: when what was written will have been played."""
        self.ends_at = max(at, self.ends_at) + frames / (self.rate or 1)

    async def write(self, samples: array.array) -> None:
        """Samples (already in the player's channels) into the pipe; times their end."""
        if not samples:
            return
        self.played_from(self.clock(), len(samples) // self.channels)
        await self.send(_little_endian(samples))

    async def send(self, data: bytes) -> None:
        """Bytes the player reads, into the pipe (timed by the caller)."""
        process = self.process
        if process is None or process.returncode is not None or process.stdin is None:
            raise self._failure()
        try:
            process.stdin.write(data)
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(process.wait()), 1.0)
            raise self._failure() from None
        # The phrase's first samples are in the pipe: what waited for them may run
        # (``daemon.speech.speechfirst``; once per phrase, later calls do nothing).
        first_sound()

    async def played(self, heard_at: float) -> None:
        """Wait until ``heard_at`` (the phrase's last sample played); a player that
        ends meanwhile is a failure."""
        process = self.process
        if process is None:
            raise self._failure()
        remaining = heard_at - self.clock()
        if remaining > 0 and self._exited is not None:
            # asyncio.wait, not wait_for: 3.11's wait_for can swallow a cancellation.
            await asyncio.wait({self._exited}, timeout=remaining)
        if process.returncode is not None:
            raise self._failure()

    def phrase(self, rate: int) -> Phrase:
        """A phrase to stream mono samples into (``async with`` it)."""
        return Phrase(self, rate)

    async def play(self, path: Path) -> None:
        """A whole WAV file (the espeak-ng program's), through the running player."""
        with wave.open(str(path), "rb") as wav:
            rate, channels, width = wav.getframerate(), wav.getnchannels(), wav.getsampwidth()
            data = wav.readframes(wav.getnframes())
        if width != 2:
            raise PlaybackError(f"the player is fed 16-bit samples, not {8 * width}-bit")
        samples = array.array("h", data)
        if sys.byteorder == "big":
            samples.byteswap()
        if channels == self.channels:
            await self.open(rate)
            await self._play_samples(samples)
            return
        if channels != 1:
            raise PlaybackError(f"a {channels}-channel WAV for a {self.channels}-channel player")
        async with self.phrase(rate) as phrase:
            await phrase.write(samples, trim=False)

    async def _play_samples(self, samples: array.array) -> None:
        try:
            await self.write(samples)
            heard_at = self.ends_at
            flush = int(FLUSH * (self.rate or 0))
            await self.write(array.array("h", bytes(2 * self.channels * flush)))
            await self.played(heard_at)
        except asyncio.CancelledError:
            await self.cut()
            raise


class Phrase:
    """One phrase streamed into a ``StreamPlayer``: trimmed, put on its channel,
    and on leaving the ``async with`` waited for until it has been played (or cut
    at once if cancelled)."""

    def __init__(self, player: StreamPlayer, rate: int) -> None:
        self.player = player
        self.rate = rate
        self.trimmer = Trimmer(rate)
        self.first_at: float | None = None  # when its first loud sample went out
        self._straight: Straight | None = None

    def straight(self) -> Straight | None:
        """A writer of this phrase's first samples for the thread that makes them
        (None: the player has bytes still queued, which must go first, or no pipe)."""
        process = self.player.process
        if process is None or process.returncode is not None or process.stdin is None:
            return None
        transport = process.stdin.transport
        pipe = transport.get_extra_info("pipe")
        if transport.get_write_buffer_size() or pipe is None:
            return None
        try:
            # Its own descriptor: the loop closing the pipe (a cut) can never make the
            # number the thread writes to another file's.
            fd = os.dup(pipe.fileno())
        except (OSError, ValueError):
            return None
        self._straight = Straight(self, fd)
        return self._straight

    async def __aenter__(self) -> Phrase:
        await self.player.open(self.rate)
        return self

    async def write(self, mono: array.array, trim: bool = True) -> None:
        """The phrase's next samples (mono), trimmed unless ``trim`` is False, onto
        its channel of the player."""
        out = self.trimmer.trim(mono) if trim else mono
        if not trim:
            self.trimmer.frames += len(mono)
        await self._to_player(out)

    async def _to_player(self, mono: array.array) -> None:
        if not mono:
            return
        if self.first_at is None:
            self.first_at = self.player.clock()
        await self.player.write(self.player.on_channel(mono))

    @property
    def seconds(self) -> float:
        return self.trimmer.frames / self.rate

    async def __aexit__(self, kind, exc, traceback) -> None:
        if self._straight is not None:
            # closed, and let go of: the phrase and its writer hold each other, a
            # cycle only the collector's rare full pass would free (issue 28's growth)
            self._straight.close()
            self._straight = None
        if kind is not None:
            if issubclass(kind, asyncio.CancelledError) or not issubclass(kind, Exception):
                await self.player.cut()
            return
        try:
            await self._to_player(self.trimmer.end())
            heard_at = self.player.ends_at
            silence = array.array("h", bytes(2 * int(FLUSH * self.rate)))
            await self._to_player(silence)
            await self.player.played(heard_at)
        except asyncio.CancelledError:
            await self.player.cut()
            raise


@dataclass(eq=False, repr=False)
class Written(FrozenRecord):
    """What the synthesis thread wrote of a phrase: ``frames`` (on the player's clock
    from ``at``), and the bytes the pipe did not take, for the event loop to write."""

    frames: int
    at: float
    rest: bytes

    def __bool__(self) -> bool:
        """False when nothing was written (the silence before the phrase): the loop
        need not wake for it."""
        return self.frames > 0


class Straight:
    """A phrase's samples written into its player's pipe by the thread that makes them,
    until its first loud samples are out; from then on the event loop writes them
    (``Phrase.write``), with the pipe's back-pressure. Each write is told to the loop
    (``written``, in order with the samples it writes), which times the phrase and
    tells the first sound (``first_sound``: what waited for it may run).

    Why (issue 28): on the one-core Zero 2 W model the first samples went from the
    synthesis thread to the event loop (a wake of it, then a turn for the phrase's
    task), each step waiting for the loop's other work and a quota period: 0-65 ms a
    phrase between espeak-ng's first samples and the player in one run."""

    def __init__(self, phrase: Phrase, fd: int) -> None:
        self.phrase = phrase
        self._fd = fd
        self._lock = threading.Lock()  # a write, or the close: never both at once
        self.over = False  # the first loud samples are out, or the phrase ended

    def write(self, pcm: bytes) -> Written | None:
        """In the synthesis thread: ``pcm`` (mono) trimmed and written, and what was
        written; None once over (the samples then go the loop's way)."""
        with self._lock:
            if self.over:
                return None
            phrase = self.phrase
            out = phrase.trimmer.trim(array.array("h", pcm))
            at = phrase.player.clock()
            if not out:  # the silence before the phrase: nothing to play yet
                return Written(0, at, b"")
            self.over = True
            data = phrase.player.pcm(out)
            try:
                sent = os.write(self._fd, data)
            except OSError:  # full, or the player gone: the loop writes it (and fails)
                sent = 0
            return Written(len(out), at, data[sent:])

    async def written(self, note: Written) -> None:
        """On the event loop, in the phrase's task: what ``write`` did, accounted."""
        phrase = self.phrase
        if phrase.first_at is None:
            phrase.first_at = note.at
        phrase.player.played_from(note.at, note.frames)
        if note.rest:
            await phrase.player.send(note.rest)
        first_sound()

    def close(self) -> None:
        """No more writes (the phrase ended, or was cut); the descriptor closed."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
            self.over = True
