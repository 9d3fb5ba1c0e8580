"""pyttsx3 in one thread of the daemon (``speech.synthesis: thread``, the default).

Why a thread and not the worker process (``speech.synthesis: process``): memory on a Pi
Zero 2 W (issue 19: 45 MB for the whole daemon). A second interpreter costs about
4.5 MB of PSS before it has loaded espeak-ng (its interpreter state, ``json``,
``wave``); a thread of the daemon costs only pyttsx3 and espeak-ng themselves. The
event loop keeps running meanwhile: espeak-ng synthesises inside a ctypes call, which
releases the GIL (only its 100 ms callbacks take it back).

pyttsx3 is not thread-safe and its espeak driver initialises libespeak-ng once per
process, so ONE thread of the process owns the engine and makes every call to it,
for every output's ``Pyttsx3Engine`` (``shared()``), exactly as the worker process
does: the same ``Synthesizer`` (``daemon/speech/pyttsx3_worker.py``: one
``save_to_file`` + ``runAndWait`` per text, the PHONEMES flag, small chunks, the
driver's prints kept off the daemon's standard output). Several outputs thus take
their turns; with the worker process each output has its own (in parallel on a Pi's
four cores).

What the thread cannot do that the process did: be killed. A synthesis that does not
come back within the time-out is reported (``SpeechFailure``: the announcement goes to
the next engine) and every request meanwhile fails at once, until the thread returns
(then pyttsx3 speaks again). A crash inside libespeak-ng (a segmentation fault) ends
the daemon, not a worker; systemd restarts it (``Restart=on-failure``) and the
journal resumes the game, as after any kill.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import queue
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from drivers.records import Shown

#: What the loop side gets from the thread, in order: ("pcm", bytes) or ("written",
#: the note of samples the thread wrote itself)*, then ("done", voice or frames) or
#: ("error", message).
Reply = tuple[str, Any]


class Straight(Protocol):
    """Where a phrase's first samples go from the synthesis thread itself, straight
    into the player (``daemon.speech.stream.Straight``), not through the event loop."""

    def write(self, pcm: bytes) -> Any:
        """In the synthesis thread: a note of what was written, for ``written`` (a
        false one, nothing written yet, is not sent); None when it takes no more (the
        samples then go to the loop's ``on_pcm``)."""

    async def written(self, note: Any) -> None:
        """On the loop, in order with the samples: the note of a write."""


@dataclass(eq=False, repr=False)
class Job(Shown):
    """One request to the thread; ``deliver`` is called there, thread-safe."""

    voice: str
    volume: float
    rate: int
    text: str | None  # None: only set the voice (an engine's start)
    path: str | None  # the WAV file; None with ``stream``
    stream: bool
    deliver: Callable[[Reply], None]
    cancelled: bool = field(default=False)
    straight: Straight | None = None
    #: set by the event loop once it has taken the first samples (``run``): until
    #: then espeak-ng makes no more of them (``FIRST_CHUNK_WAIT``)
    taken: threading.Event = field(default_factory=threading.Event)


class SynthesisThread:
    """The thread that owns the process's pyttsx3 engine, and its queue of jobs."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        #: monotonic time the job in hand was taken up (None: idle)
        self.busy_since: float | None = None
        #: the engine's one owner, once the thread has made it (read by the tests)
        self.synthesizer: Any = None

    def submit(self, job: Job) -> None:
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="pyttsx3-synthesis", daemon=True
                )
                self._thread.start()
        self._jobs.put(job)

    def hung_for(self) -> float:
        """Seconds the job in hand has taken so far (0 when idle)."""
        since = self.busy_since
        return 0.0 if since is None else time.monotonic() - since

    def _run(self) -> None:
        from daemon.speech.pyttsx3_worker import Synthesizer

        name_os_thread(OS_THREAD_NAME)
        synthesizer: Synthesizer | None = self.synthesizer
        while True:
            job = self._jobs.get()
            if job.cancelled:  # cut before its turn came: not made at all
                continue
            self.busy_since = time.monotonic()
            try:
                if synthesizer is None:
                    synthesizer = self.synthesizer = Synthesizer()
                voice = synthesizer.use(job.voice, job.volume, job.rate)
                if job.text is None:
                    job.deliver(("done", voice))
                elif job.stream:

                    def sink(pcm: bytes, job: Job = job) -> None:
                        if job.cancelled:  # a cut phrase is finished unheard
                            return
                        if job.straight is not None:
                            note = job.straight.write(pcm)
                            if note is not None:  # taken here: nothing to wait for
                                job.taken.set()
                                if note:
                                    job.deliver(("written", note))
                                return
                        job.deliver(("pcm", pcm))
                        # inside espeak-ng's Synth, in this thread: it waits (the GIL
                        # released) until the loop has the phrase's first samples in
                        # the player, so that on one slow core making the rest of the
                        # phrase does not come before the first sound
                        job.taken.wait(FIRST_CHUNK_WAIT)

                    frames, error = synthesizer.stream(job.text, job.rate, sink)
                    job.deliver(("error", error) if error else ("done", frames))
                else:
                    error = synthesizer.to_file(job.text, str(job.path), job.rate)
                    job.deliver(("error", error) if error else ("done", 0))
            except Exception as exc:  # reported to the waiting engine, never raised here
                job.deliver(("error", f"{type(exc).__name__}: {exc}"))
            finally:
                self.busy_since = None


#: Seconds espeak-ng waits, after a phrase's first samples, for the event loop to have
#: them in the player (issue 28: on the one-core Zero model espeak-ng made the whole
#: phrase, and the loop woke for every chunk, before the first sample was out).
#: Then it goes on whatever the loop does: a phrase is never held longer.
FIRST_CHUNK_WAIT = 0.25


#: The thread's name for the system (``top -H``, ``ps -L``; the benchmark's CPU groups
#: find it by it to give it a core of its own, as a Pi's four cores would).
OS_THREAD_NAME = b"dgt-synthesis"


def name_os_thread(name: bytes) -> None:
    """Names the calling thread for the system (Linux ``prctl(PR_SET_NAME)``; Python
    3.11 names only its own thread objects); nothing where that is not there."""
    with contextlib.suppress(AttributeError, OSError, TypeError):
        ctypes.CDLL(None).prctl(15, ctypes.c_char_p(name), 0, 0, 0)


_shared: SynthesisThread | None = None


def shared() -> SynthesisThread:
    """The process's one synthesis thread (libespeak-ng is one per process)."""
    global _shared
    if _shared is None:
        _shared = SynthesisThread()
    return _shared


class Hung(Exception):
    """No reply from the thread within the time-out."""


def _nobody(reply: Reply) -> None:
    """Where a finished job's late replies go (see ``run``'s end)."""


async def run(thread: SynthesisThread, timeout: float, *, voice: str, volume: float,
              rate: int, text: str | None = None, path: str | None = None,
              on_pcm: Callable[[bytes], Awaitable[None]] | None = None,
              straight: Straight | None = None) -> Any:  # fmt: skip
    """One job on ``thread``, awaited from the event loop: the samples go to ``on_pcm``
    (awaited) as they come, the first ones ``straight`` from the thread when given (its
    notes to its ``written``); returns the ``done`` value, raises RuntimeError with the
    thread's error, or ``Hung`` when the thread says nothing for ``timeout`` seconds
    (the time-out is for its silence: a long phrase's samples may wait on the player).
    Cancelled, the job is finished unheard by the thread."""
    if thread.hung_for() > timeout:
        raise Hung(f"still in a synthesis begun {thread.hung_for():.0f} s ago")
    loop = asyncio.get_running_loop()
    replies: asyncio.Queue[Reply] = asyncio.Queue()

    def deliver(reply: Reply) -> None:
        if job.cancelled:  # cut, timed out, or its loop gone: nobody waits for it
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(replies.put_nowait, reply)

    job = Job(voice, volume, rate, text, path, on_pcm is not None, deliver, straight=straight)
    thread.submit(job)
    try:
        while True:
            try:
                async with asyncio.timeout(timeout):
                    kind, value = await replies.get()
            except TimeoutError:
                raise Hung(f"no reply in {timeout:.0f} s") from None
            if kind == "pcm":
                if on_pcm is not None:
                    await on_pcm(value)
                job.taken.set()  # the next samples may come
                continue
            if kind == "written":
                if straight is not None:
                    await straight.written(value)
                continue
            if kind == "error":
                raise RuntimeError(value)
            return value
    finally:
        job.cancelled = True  # whatever comes after this is not for anyone
        job.taken.set()  # nor does espeak-ng wait for the loop any longer
        # ``deliver`` holds the job and the job holds ``deliver``: a cycle that only
        # the collector's rare full pass frees, with the queue and its futures. Kept,
        # a phrase's ~1.5 kB piled up over a tournament day's first 40 games
        # (benchmarks/growth.py, issue 28); broken here, all goes when the phrase ends.
        job.deliver = _nobody
