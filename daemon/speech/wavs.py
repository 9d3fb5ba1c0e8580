"""Small WAV operations the speaker needs: silence trimmed, one ear of a stereo pair.

espeak-ng ends every WAV with about 0.4 s of silence at 150 words per minute: a
quarter of a short move phrase, lag the player only waits through. ``trim`` keeps
a short tail (the ear still hears the phrase end). ``to_channel`` puts a mono
phrase on the left or right channel of a stereo file, so two players can share one
stereo output, each with one earphone. 16-bit PCM only (what espeak-ng and pyttsx3
write); other WAVs are left alone.
"""

from __future__ import annotations

import array
import sys
import wave
from pathlib import Path

#: Samples below this (of 32767) count as silence.
SILENCE = 300
#: Seconds of silence kept at each end.
KEEP = 0.06

CHANNELS = ("both", "left", "right")


def duration(path: Path) -> float:
    with wave.open(str(path), "rb") as wav:
        return wav.getnframes() / wav.getframerate()


def _read(path: Path) -> tuple[wave._wave_params, array.array] | None:
    with wave.open(str(path), "rb") as wav:
        params = wav.getparams()
        if params.sampwidth != 2:
            return None
        samples = array.array("h", wav.readframes(params.nframes))
    if sys.byteorder == "big":
        samples.byteswap()
    return params, samples


def _write(path: Path, params: wave._wave_params, channels: int, samples: array.array) -> None:
    if sys.byteorder == "big":
        samples.byteswap()
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(2)
        wav.setframerate(params.framerate)
        wav.writeframes(samples.tobytes())


def trim(path: Path) -> float:
    """Cut the leading and trailing silence down to ``KEEP``; the new duration."""
    read = _read(path)
    if read is None:
        return duration(path)
    params, samples = read
    width = params.nchannels
    loud = [n for n in range(0, len(samples), max(1, width * 16)) if abs(samples[n]) > SILENCE]
    if not loud:
        return duration(path)
    keep = int(KEEP * params.framerate) * width
    start = max(0, loud[0] - keep)
    end = min(len(samples), loud[-1] + width * 16 + keep)
    start -= start % width
    end -= end % width
    if start == 0 and end == len(samples):
        return duration(path)
    _write(path, params, width, samples[start:end])
    return (end - start) / width / params.framerate


def to_channel(path: Path, channel: str) -> None:
    """Make a mono WAV stereo with the sound on ``channel`` only ("both": unchanged)."""
    if channel == "both":
        return
    if channel not in CHANNELS:
        raise ValueError(f"channel must be one of {', '.join(CHANNELS)}: {channel!r}")
    read = _read(path)
    if read is None or read[0].nchannels != 1:
        return
    params, mono = read
    stereo = array.array("h", bytes(4 * len(mono)))
    offset = 0 if channel == "left" else 1
    stereo[offset::2] = mono
    _write(path, params, 2, stereo)
