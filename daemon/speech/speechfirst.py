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
  ``daemon.boards.pipeline.JournalSync``) is handed to ``later``: queued, and let out
  one piece a loop turn, in the order it came (every board's work in one queue, so
  nothing is reordered, and nothing dropped); a hold keeps the work queued after it
  began, until the turn after the last such hold is released;
- and always after the boards: each piece runs after the replies the loop has already
  read in that turn (a timer of no delay, which asyncio runs after a turn's I/O
  callbacks), never inside the callback that decided the move. A profile of the Zero
  2 W hall found a quarter of the bus replies' own callbacks in the page's and MQTT's
  work for events already on the card (a clock report's), run at once, while the other
  boards' replies waited (issue 28: a round's first moves, every board at once);
- nothing waits long: a hold lasts at most ``cap`` seconds, and no work waits for holds
  longer than ``cap`` seconds from when it was queued, whatever holds come after it (a
  hall's moves one after the other never starve the page).

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
import time
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
    """``call_later`` on the running loop, even for no delay: a timer due now runs after
    the I/O callbacks of the turn it is found due in (``call_soon`` would run before
    them), so the boards' replies read by then are decided first."""
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop (a replay, a test feeding the pipeline by hand)
        return None
    return loop.call_later(max(0.0, delay), callback)


class Hold:
    """One phrase's hold on the gate; ``release()`` is idempotent."""

    def __init__(self, gate: SpeechFirst) -> None:
        self._gate = gate
        self.after = gate._queued  # it keeps the work queued after this much
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

    def __init__(
        self,
        cap: float = CAP,
        call_later: CallLater | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cap = cap
        self._call_later = call_later
        self._clock = clock  # the timers' clock (the loop's is time.monotonic)
        self._holds: set[Hold] = set()
        #: (queued at, its number, work); a hold keeps only work queued after it began
        self._queue: deque[tuple[float, int, Callable[[], None]]] = deque()
        self._queued = 0  # pieces queued so far
        self._deadline: Cancellable | None = None  # the next piece's turn
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
        if not self._holds and self._queue and not self._running:
            self._schedule(now=True)

    def later(self, work: Callable[[], None]) -> None:
        """``work`` after the work queued before it: once the loop has run the I/O
        callbacks of its turn (at once without a loop) if nothing is held, else once
        the holds are released or it has waited ``cap`` seconds."""
        self._queued += 1
        self._queue.append((self._clock(), self._queued, work))
        if self._holds:
            self.deferred += 1
        if not self._running and self._deadline is None:
            self._schedule()  # else the turn already due serves it (or ``_drain``'s end)

    def _schedule(self, now: bool = False) -> None:
        """The oldest piece's turn: the next timer due now, unless a hold keeps it,
        then at the end of its ``cap`` (a release comes sooner: ``now``)."""
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if not self._queue:
            return
        delay = 0.0
        if not now and self._kept():
            delay = max(0.0, self._queue[0][0] + self.cap - self._clock())
        self._deadline = self._timer(delay, self._drain)
        if self._deadline is None:  # no loop: at once, in order
            self._drain(whole=True)

    def _kept(self) -> bool:
        """Whether a hold keeps the oldest piece: one that began before it was queued,
        while it has waited less than ``cap``."""
        if not self._holds or not self._queue:
            return False
        queued_at, number, _ = self._queue[0]
        began = min(hold.after for hold in self._holds)
        return number > began and self._clock() < queued_at + self.cap

    def _drain(self, whole: bool = False) -> None:
        """The queued work in order, one piece a loop turn (``whole``: all now): a
        hall's worth of page events let out at once would hold the loop, and the
        phrase's next samples with it, for as long as all of them take. A piece a hold
        keeps waits for it, ``cap`` seconds from when it was queued at most. A work
        that raises is logged; the rest still run."""
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if self._running:
            return
        self._running = True
        try:
            while self._queue:
                if not whole and self._kept():
                    break  # a phrase on its way: its first sound (or the cap) first
                _, _, work = self._queue.popleft()
                try:
                    work()
                except Exception:  # one output's bug must not cost the others
                    log.exception("deferred output work failed")
                if not whole:
                    break
        finally:
            self._running = False
        self._schedule()

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
