"""pyttsx3's espeak driver and where libespeak-ng makes the samples (``pyttsx3_worker``).

libespeak-ng, initialised for retrieval as the driver does, carried out ``Synth``
and ``setProperty`` in a thread of its own. The driver's ``runAndWait`` begins with
``stop()``, which cancelled when that thread was still busy (often, on a loaded or
CPU-capped machine: with the rate just set, or ending the last phrase) and left a
flag that cancelled the new text right after its ``Synth``: when espeak-ng's thread
had not taken the text up yet, on both of the synthesizer's tries, the phrase had
no samples and the daemon fell back to the slow espeak-ng program. Now espeak-ng is
synchronous (it makes the text inside ``Synth``, in the asking thread: issue 28) and
``stop()`` cancels nothing; both are checked here.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
import wave
from concurrent.futures import ProcessPoolExecutor

import pytest

from daemon.speech.engines import pyttsx3_available
from daemon.speech.pyttsx3_worker import Synthesizer

pytestmark = pytest.mark.skipif(not pyttsx3_available(), reason="pyttsx3/espeak-ng missing")

TEXT = "Springer Felix drei, Schach"


def callback_threads(synthesizer: Synthesizer) -> tuple[int, set[int]]:
    """A phrase streamed: its frames, and the system ids of the threads libespeak-ng
    called the synthesis callback from."""
    tap = synthesizer.tap
    driver_callback = tap._driver_callback
    seen: set[int] = set()

    def noting(wav, numsamples, events):
        seen.add(threading.get_native_id())
        return driver_callback(wav, numsamples, events)

    tap._driver_callback = noting
    try:
        frames, error = synthesizer.stream(TEXT, 150, lambda pcm: None)
    finally:
        tap._driver_callback = driver_callback
    assert error is None
    return frames, seen


def made_in_the_asking_thread(path: str) -> tuple[int, set[int], int, int]:
    """In a process of its own: a phrase streamed (its frames and the callback's
    threads), the asking thread's id, and the frames of the same text into a file."""
    synthesizer = Synthesizer()
    synthesizer.use("de", 1.0, 150)
    frames, threads = callback_threads(synthesizer)
    error = synthesizer.to_file(TEXT, path, 150)
    assert error is None, error
    with wave.open(path, "rb") as wav:
        saved = wav.getnframes()
    return frames, threads, threading.get_native_id(), saved


def test_espeak_ng_makes_a_phrase_inside_the_call_in_the_asking_thread(tmp_path) -> None:
    """Synchronous espeak-ng: every sample is called back before ``stream`` returns, in
    the thread that asked (no hand-over to a thread of espeak-ng's own, whose turn of
    a slow core the first samples waited for), and the driver still writes its file
    and ends its loop (it ended on an event synchronous espeak-ng does not send)."""
    path = str(tmp_path / "phrase.wav")
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        frames, threads, asking, saved = pool.submit(made_in_the_asking_thread, path).result(
            timeout=60
        )
    assert threads == {asking}
    assert frames > 0 and abs(saved - frames) < 0.05 * frames  # (espeak-ng varies a little)


@contextlib.contextmanager
def espeak_says_it_is_busy():
    """What espeak-ng in retrieval mode said on a busy Pi when the next text came:
    still playing the last (``IsPlaying``), so the driver's ``stop()`` cancelled."""
    from pyttsx3.drivers import _espeak

    is_playing = _espeak.IsPlaying
    _espeak.IsPlaying = lambda: 1
    try:
        yield
    finally:
        _espeak.IsPlaying = is_playing


def say_while_espeaks_thread_is_busy() -> tuple[int, list[tuple[int, str | None, int]]]:
    """In a process of its own (libespeak-ng and its callback are one per process): a
    phrase said normally, then five while espeak-ng says it is busy, as (frames,
    error, frames streamed)."""
    synthesizer = Synthesizer()
    synthesizer.use("de", 1.0, 150)
    normal, error = synthesizer.stream(TEXT, 150, lambda pcm: None)
    assert error is None and normal > 0
    said = []
    with espeak_says_it_is_busy():
        for rate in (150, 151, 150, 151, 150):
            chunks: list[bytes] = []
            frames, error = synthesizer.stream(TEXT, rate, chunks.append)
            said.append((frames, error, sum(len(chunk) for chunk in chunks) // 2))
    return normal, said


def test_a_text_asked_while_espeaks_thread_is_still_busy_is_said_in_full() -> None:
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        normal, said = pool.submit(say_while_espeaks_thread_is_busy).result(timeout=60)
    for frames, error, streamed in said:
        assert error is None, said  # was "no samples" for each of them
        assert frames == streamed and abs(frames - normal) < 0.1 * normal, said
