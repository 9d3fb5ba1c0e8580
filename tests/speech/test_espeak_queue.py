"""pyttsx3's espeak driver and libespeak-ng's own thread (``pyttsx3_worker``).

libespeak-ng, initialised for retrieval as the driver does, carries out ``Synth``
and ``setProperty`` in a thread of its own. The driver's ``runAndWait`` begins with
``stop()``, which cancels when that thread is still busy (often, on a loaded or
CPU-capped machine: with the rate just set, or ending the last phrase) and leaves a
flag that cancels the new text right after its ``Synth``: when espeak-ng's thread
had not taken the text up yet, on both of the synthesizer's tries, the phrase had
no samples and the daemon fell back to the slow espeak-ng program.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor

import pytest

from daemon.speech.engines import pyttsx3_available
from daemon.speech.pyttsx3_worker import Synthesizer

pytestmark = pytest.mark.skipif(not pyttsx3_available(), reason="pyttsx3/espeak-ng missing")

TEXT = "Springer Felix drei, Schach"


def espeak_thread_id(synthesizer: Synthesizer) -> int:
    """The system id of the thread libespeak-ng calls the synthesis callback from."""
    tap = synthesizer.tap
    driver_callback = tap._driver_callback
    seen: list[int] = []

    def noting(wav, numsamples, events):
        seen.append(threading.get_native_id())
        return driver_callback(wav, numsamples, events)

    tap._driver_callback = noting
    try:
        synthesizer.stream(TEXT, 150, lambda pcm: None)
    finally:
        tap._driver_callback = driver_callback
    assert seen and seen[0] != threading.get_native_id()  # its own thread
    return seen[0]


@contextlib.contextmanager
def espeak_thread_slow_to_run(synthesizer: Synthesizer):
    """What a busy Pi does to libespeak-ng's thread, made certain: it runs only when
    the thread asking for speech waits (one core; the lowest scheduling class), and
    it is still busy when the next text is asked (as ``IsPlaying`` then says)."""
    from pyttsx3.drivers import _espeak

    tid = espeak_thread_id(synthesizer)
    affinity = os.sched_getaffinity(0)
    policy = os.sched_getscheduler(tid)
    is_playing = _espeak.IsPlaying
    os.sched_setaffinity(0, {min(affinity)})
    os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
    _espeak.IsPlaying = lambda: 1
    try:
        yield
    finally:
        _espeak.IsPlaying = is_playing
        # Back from the idle class needs a nice limit an unprivileged CI may lack; the
        # process ends after this test anyway.
        with contextlib.suppress(PermissionError):
            os.sched_setscheduler(tid, policy, os.sched_param(0))
        os.sched_setaffinity(0, affinity)


def say_while_espeaks_thread_is_busy() -> tuple[int, list[tuple[int, str | None, int]]]:
    """In a process of its own (libespeak-ng and its callback are one per process;
    the affinity and the thread's class stay there): a phrase said normally, then
    five with libespeak-ng's thread slow to run, as (frames, error, frames streamed)."""
    synthesizer = Synthesizer()
    synthesizer.use("de", 1.0, 150)
    normal, error = synthesizer.stream(TEXT, 150, lambda pcm: None)
    assert error is None and normal > 0
    said = []
    with espeak_thread_slow_to_run(synthesizer):
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
