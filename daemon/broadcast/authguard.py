"""Wrong tokens, rate-limited per client address and across all addresses:
guessing the token takes forever, from one address or from thousands.

300 guesses used to take 0.09 s. Each address may get a few wrong (``BURST``,
one more each ``REFILL`` seconds, so an arbiter's typos never matter); beyond
that it is locked out, first for ``FIRST_LOCKOUT`` seconds, then twice as long
each time, up to ``MAX_LOCKOUT``.

An address is cheap, though: one machine has all of 127.0.0.0/8, and one laptop
on a hall's LAN can take dozens. Wrong tokens from 200 addresses were checked at
1,000 a second. So wrong tokens are also counted across all addresses
(``GLOBAL_BURST``, one more each ``GLOBAL_REFILL`` seconds: about what a single
address gets); beyond that the controls are locked for every address that has
not given the right token before, first for ``GLOBAL_FIRST_LOCKOUT`` seconds,
doubling to at most ``GLOBAL_MAX_LOCKOUT``, so a guesser gains nothing from
more addresses.

The real arbiter during such an attack: an address that gave the right token
(the console checks it at login, and every button sends it) is remembered for
``TRUST_SECONDS`` (at most ``TRUSTED`` addresses) and is let through the global
lock, still held to its own per-address allowance. So an arbiter logged in before
the attack sees nothing of it. One arriving during it, from a new address, gets
429 with ``Retry-After`` (at most ``GLOBAL_MAX_LOCKOUT``, 60 s) until the attack
stops, and then at most one more lock-out: the token cannot be compared while
guesses are refused without telling the guesser which one was right.

While locked out every control request is answered 429 with ``Retry-After``
before the token is even compared, so a lock-out tells nothing. Each lock-out is
logged (throttled: one line per minute with a count). A right token forgives the
address its earlier mistakes.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from daemon.broadcast.logthrottle import throttled
from drivers.records import Record

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

GLOBAL_BURST = 20
"""Wrong tokens all addresses together may send at once."""
GLOBAL_REFILL = 1.0
"""Seconds for one more wrong token to be allowed across all addresses."""
GLOBAL_FIRST_LOCKOUT = 2.0
GLOBAL_MAX_LOCKOUT = 60.0
"""The global lock-out doubles to at most a minute: the longest an arbiter on a new
address waits once an attack stops."""
GLOBAL_QUIET = 300.0
"""Seconds without a global lock-out after which the next starts short again."""
TRUSTED = 64
"""Addresses remembered as having given the right token (the arbiter's phone,
a laptop), let through the global lock; the least recent are forgotten beyond."""
TRUST_SECONDS = 24 * 3600.0
"""How long a right token from an address keeps it trusted (a tournament's day)."""


@dataclass(eq=False, repr=False, slots=True)
class _Record(Record):
    allowance: float
    seen: float
    locked_until: float = 0.0
    lockouts: int = 0


class TokenGuard:
    """Per-address and global allowances of wrong tokens, and the lock-outs beyond."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._records: dict[str, _Record] = {}
        self._trusted: dict[str, float] = {}  # address -> when it gave the right token
        self._global = _Record(allowance=GLOBAL_BURST, seen=clock())
        self.lockouts = 0  # of addresses, in total, for the status
        self.global_lockouts = 0  # of the controls for every untrusted address

    def _record(self, address: str) -> _Record:
        now = self.clock()
        record = self._records.pop(address, None)
        if record is None:
            if len(self._records) >= MAX_ADDRESSES:
                self._records.pop(next(iter(self._records)))
            record = _Record(allowance=BURST, seen=now)
        else:
            _refill(record, now, BURST, REFILL)
        self._records[address] = record  # most recently seen last
        return record

    def trusted(self, address: str) -> bool:
        """The address gave the right token within ``TRUST_SECONDS``."""
        since = self._trusted.get(address)
        return since is not None and self.clock() - since < TRUST_SECONDS

    def retry_after(self, address: str) -> int | None:
        """Seconds the address must still wait, or None when it may try."""
        now = self.clock()
        record = self._records.get(address)
        left = record.locked_until - now if record is not None else 0.0
        if left <= 0 and not self.trusted(address):
            left = self._global.locked_until - now
        return math.ceil(left) if left > 0 else None

    def why_locked(self, address: str) -> str:
        """What a 429 tells the client: its own lock-out, or the global one."""
        record = self._records.get(address)
        if record is not None and record.locked_until > self.clock():
            return "too many wrong tokens from this address"
        return ("too many wrong tokens from many addresses: the controls are locked for "
                "every address that has not given the right token before")  # fmt: skip

    def failed(self, address: str) -> int | None:
        """A wrong token from ``address``; the seconds it must now wait when this one
        began a lock-out (its own, or the global one), else None."""
        own = self._failed_here(address)
        whole = self._failed_anywhere(address)
        if own is not None:
            return own
        return None if whole is None or self.trusted(address) else whole

    def _failed_here(self, address: str) -> int | None:
        record = self._record(address)
        record.allowance -= 1
        if record.allowance >= 0:
            return None
        self.lockouts += 1
        duration = _lock(record, self.clock(), FIRST_LOCKOUT, MAX_LOCKOUT)
        throttled(log, "token-lockout", logging.WARNING,
                  "locked out %s for %.0f s: too many wrong tokens for the arbiter's controls "
                  "(lock-out %d of this address)", address, duration, record.lockouts)  # fmt: skip
        return math.ceil(duration)

    def _failed_anywhere(self, address: str) -> int | None:
        now = self.clock()
        whole = self._global
        if whole.lockouts and now - whole.locked_until > GLOBAL_QUIET:
            whole.lockouts = 0  # the last attack is long over: start short again
        _refill(whole, now, GLOBAL_BURST, GLOBAL_REFILL)
        whole.allowance -= 1
        if whole.allowance >= 0:
            return None
        self.global_lockouts += 1
        duration = _lock(whole, now, GLOBAL_FIRST_LOCKOUT, GLOBAL_MAX_LOCKOUT)
        whole.seen = whole.locked_until  # nothing grows back while locked
        throttled(log, "token-lockdown", logging.WARNING,
                  "locked the arbiter's controls for %.0f s for every address not known to "
                  "have the token: more than %d wrong tokens from several addresses (the "
                  "last from %s; lock-out %d)", duration, GLOBAL_BURST, address,
                  whole.lockouts)  # fmt: skip
        return math.ceil(duration)

    def succeeded(self, address: str) -> None:
        self._records.pop(address, None)
        self._trusted.pop(address, None)
        if len(self._trusted) >= TRUSTED:
            self._trusted.pop(next(iter(self._trusted)))
        self._trusted[address] = self.clock()  # most recent last

    def status(self) -> dict[str, int | float]:
        """For ``/state.json``: lock-outs so far, and the seconds the controls stay
        locked for untrusted addresses (0: not locked)."""
        left = self._global.locked_until - self.clock()
        return {
            "token_lockouts": self.lockouts,
            "token_global_lockouts": self.global_lockouts,
            "controls_locked_for": max(0, math.ceil(left)),
        }


def _refill(record: _Record, now: float, burst: float, refill: float) -> None:
    if now > record.seen:
        record.allowance = min(burst, record.allowance + (now - record.seen) / refill)
        record.seen = now


def _lock(record: _Record, now: float, first: float, longest: float) -> float:
    """Lock ``record`` out: ``first`` seconds, twice as long each time, at most
    ``longest``; the seconds."""
    record.lockouts += 1
    duration = min(longest, first * 2 ** (record.lockouts - 1))
    record.locked_until = now + duration
    record.allowance = 0
    return duration
