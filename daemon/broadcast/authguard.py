"""Wrong tokens, rate-limited per client address: guessing the token takes forever.

300 guesses used to take 0.09 s. Now each address may get a few wrong (``BURST``,
one more each ``REFILL`` seconds, so an arbiter's typos never matter); beyond
that it is locked out, first for ``FIRST_LOCKOUT`` seconds, then twice as long
each time, up to ``MAX_LOCKOUT``. While locked out every control request from it
is answered 429 with ``Retry-After`` before the token is even compared, so a
lock-out tells nothing. Each lock-out is logged (throttled: one line per minute
with a count). A right token forgives the address its earlier mistakes.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from daemon.broadcast.logthrottle import throttled

log = logging.getLogger(__name__)

BURST = 5
"""Wrong tokens an address may send at once."""
REFILL = 1.0
"""Seconds for one more wrong token to be allowed (a few per second at most)."""
FIRST_LOCKOUT = 2.0
MAX_LOCKOUT = 300.0
"""Lock-outs double from the first to at most five minutes."""
MAX_ADDRESSES = 4096
"""Addresses remembered; the least recently seen are forgotten beyond (bounded memory)."""


@dataclass(slots=True)
class _Record:
    allowance: float
    seen: float
    locked_until: float = 0.0
    lockouts: int = 0


class TokenGuard:
    """Per-address allowance of wrong tokens, and the lock-outs beyond it."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._records: dict[str, _Record] = {}
        self.lockouts = 0  # in total, for the status

    def _record(self, address: str) -> _Record:
        now = self.clock()
        record = self._records.pop(address, None)
        if record is None:
            if len(self._records) >= MAX_ADDRESSES:
                self._records.pop(next(iter(self._records)))
            record = _Record(allowance=BURST, seen=now)
        else:
            record.allowance = min(BURST, record.allowance + (now - record.seen) / REFILL)
            record.seen = now
        self._records[address] = record  # most recently seen last
        return record

    def retry_after(self, address: str) -> int | None:
        """Seconds the address must still wait, or None when it may try."""
        record = self._records.get(address)
        if record is None:
            return None
        left = record.locked_until - self.clock()
        return math.ceil(left) if left > 0 else None

    def failed(self, address: str) -> int | None:
        """A wrong token from ``address``; the seconds of its lock-out when this one
        began one, else None."""
        record = self._record(address)
        record.allowance -= 1
        if record.allowance >= 0:
            return None
        record.lockouts += 1
        self.lockouts += 1
        duration = min(MAX_LOCKOUT, FIRST_LOCKOUT * 2 ** (record.lockouts - 1))
        record.locked_until = self.clock() + duration
        record.allowance = 0
        throttled(log, "token-lockout", logging.WARNING,
                  "locked out %s for %.0f s: too many wrong tokens for the arbiter's controls "
                  "(lock-out %d of this address)", address, duration, record.lockouts)  # fmt: skip
        return math.ceil(duration)

    def succeeded(self, address: str) -> None:
        self._records.pop(address, None)
