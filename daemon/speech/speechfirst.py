"""A move's phrase first: the daemon's other work for a move waits until its first
sound is out (issue 28, the one-core Zero model).

On a Pi's slow core the blind player's phrase and the move's other outputs take turns:
a profile of the slow phrases found the event loop running more than the synthesis
between the press and the first sample (the page's fan-out, MQTT, the clock display),
so the phrase waited for work nobody was waiting for. ``SpeechFirst`` is the daemon's
one gate (the CPU and the GIL are the process's, so it is one for every board):

- an announcer that is about to say a move ``hold()``s it, and releases the hold once
  the phrase's first sample has gone to the player (``first_sound``), or the phrase
  ended (said, failed, cut), whichever comes first;
- work that can wait (the page and MQTT: ``daemon.boards.pageview``; the move's text
  on the clock's display: ``daemon.clock.display``; the PGN's rebuild:
  ``daemon.boards.pipeline.JournalSync``) is handed to ``later``: run at once when
  nothing is held, else queued, and let out one piece a loop turn from the turn after
  the last hold is released, in the order it came (every board's work in one queue,
  so nothing is reordered, and nothing dropped);
- nothing waits long: a hold lasts at most ``cap`` seconds, and work queued waits at
  most ``cap`` seconds whatever holds come after it (a hall's moves one after the
  other never starve the page).

What never waits: the rules core, the journal's line (disk first: a lost move is the
worst failure) and its fsync, the feed's line on standard output, the speech itself.

The first sound reaches the announcer through a context variable (``FIRST_SOUND``): the
players that write the first sample (``daemon.speech.stream``, the per-file player)
call ``first_sound()`` inside the phrase's task, whatever engine made the samples, so
no engine's signature carries it.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections import deque
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger("dgt-bridge")

#: Seconds a hold lasts, and queued work waits, at most: the page is never held long.
CAP = 0.25


class Cancellable(Protocol):
    def cancel(self) -> None: ...


#: ``call_later(delay, callback)``: the running loop's by default; a test's simulated time.
CallLater = Callable[[float, Callable[[], None]], Cancellable]


def _loop_call_later(delay: float, callback: Callable[[], None]) -> Cancellable | None:
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop (a replay, a test feeding the pipeline by hand)
        return None
    return loop.call_soon(callback) if delay <= 0 else loop.call_later(delay, callback)


class Hold:
    """One phrase's hold on the gate; ``release()`` is idempotent."""

    def __init__(self, gate: SpeechFirst) -> None:
        self._gate = gate
        self.released = False
        self.timer: Cancellable | None = None

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self._gate._released(self)


class SpeechFirst:
    """The gate: ``hold()`` while a move's phrase is on its way to the first sample;
    ``later(work)`` for work that can wait for it."""

    def __init__(self, cap: float = CAP, call_later: CallLater | None = None) -> None:
        self.cap = cap
        self._call_later = call_later
        self._holds: set[Hold] = set()
        self._queue: deque[Callable[[], None]] = deque()
        self._deadline: Cancellable | None = None  # the oldest queued work's cap
        self._running = False  # in ``_drain``: work queued meanwhile goes behind
        #: work that waited, and the holds that ran out (for the benchmark's and the log's
        #: eyes: a hold that always runs out means the first sound is never reported)
        self.deferred = 0
        self.expired = 0

    @property
    def held(self) -> bool:
        return bool(self._holds)

    def _timer(self, delay: float, callback: Callable[[], None]) -> Cancellable | None:
        if self._call_later is not None:
            return self._call_later(delay, callback)
        return _loop_call_later(delay, callback)

    def hold(self) -> Hold:
        """A hold until its ``release()``, or ``cap`` seconds (without an event loop
        to time it: not held at all, since nothing could end it)."""
        hold = Hold(self)
        hold.timer = self._timer(self.cap, lambda: self._expire(hold))
        if hold.timer is None:
            hold.released = True
            return hold
        self._holds.add(hold)
        return hold

    def _expire(self, hold: Hold) -> None:
        if not hold.released:
            self.expired += 1
            log.debug("speech first: no first sound within %.2f s; the page goes on", self.cap)
            hold.timer = None
            hold.release()

    def _released(self, hold: Hold) -> None:
        """The last hold gone: what waited runs from the loop's next turn, not inside
        the player's write that released it (the phrase's next samples first)."""
        self._holds.discard(hold)
        if not self._holds and self._queue:
            self._drain_soon()

    def later(self, work: Callable[[], None]) -> None:
        """``work`` now if nothing is held (and nothing queued before it), else once
        the holds are released or it has waited ``cap`` seconds."""
        if not self._holds and not self._queue and not self._running:
            work()
            return
        self._queue.append(work)
        self.deferred += 1
        if self._deadline is None and not self._running:
            self._deadline = self._timer(self.cap, self._drain)
            if self._deadline is None:  # no loop to wait on: at once, in order
                self._drain(whole=True)

    def _drain_soon(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self._timer(0.0, self._drain)
        if self._deadline is None:  # no loop: at once
            self._drain(whole=True)

    def _drain(self, whole: bool = False) -> None:
        """The queued work in order, one piece a loop turn (``whole``: all now): a
        hall's worth of page events let out at once would hold the loop, and the
        phrase's next samples with it, for as long as all of them take. A work that
        raises is logged; the rest still run."""
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if self._running:
            return
        self._running = True
        try:
            while self._queue:
                work = self._queue.popleft()
                try:
                    work()
                except Exception:  # one output's bug must not cost the others
                    log.exception("deferred output work failed")
                if not whole:
                    break
        finally:
            self._running = False
        if self._queue:
            self._drain_soon()

    def release_all(self) -> None:
        """Every hold released (the daemon closing): what waits runs now."""
        for hold in list(self._holds):
            hold.release()
        self._drain(whole=True)


#: The running phrase's "first sound is out" callback (set by the announcer in the
#: phrase's task; None: nobody waits for it).
FIRST_SOUND: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "dgt_bridge_first_sound", default=None
)


def first_sound() -> None:
    """Called by a player when it writes a phrase's first samples: the announcer of
    this task's phrase hears of it (once per phrase; later calls do nothing)."""
    callback = FIRST_SOUND.get()
    if callback is not None:
        FIRST_SOUND.set(None)
        with contextlib.suppress(Exception):
            callback()
