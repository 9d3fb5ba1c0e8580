"""Reconnecting with back-off, for the single-board link and the bus link alike.

A link that loses its port (a cable out, a Bluetooth drop, a chain's adapter
unplugged) must try again for as long as the daemon runs, without hammering the
port (the wait doubles up to a ceiling) and without filling the log: a port
awaited for hours is one warning, each later attempt a debug line, and the first
success starts afresh. Both links are the same loop around their own attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable


class Retry:
    """The back-off and the failure log of one link (``what`` names it in the log)."""

    def __init__(self, log: logging.Logger, what: str, initial: float, maximum: float) -> None:
        self.log = log
        self.what = what
        self.initial = initial
        self.maximum = maximum
        self.attempts = 0  # failed attempts since the last success
        self._warned: str | None = None

    async def run(
        self,
        attempt: Callable[[], Awaitable[bool]],
        closed: Callable[[], bool],
        wake: asyncio.Event,
    ) -> None:
        """Run ``attempt`` again and again until ``closed()``. ``attempt`` returns once
        its connection is over (or never came) and says whether it had connected:
        then the back-off starts again from ``initial``, else it doubles up to
        ``maximum``. Setting ``wake`` ends a wait at once (``close()``, a board added)."""
        backoff = self.initial
        while not closed():
            if await attempt():
                backoff = self.initial
            if closed():
                break
            wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), backoff)
            backoff = min(self.maximum, backoff * 2)

    def failed(self, detail: str) -> None:
        """One failed attempt: a warning for a new failure, a debug line (with the
        attempt count) for the same one again."""
        self.attempts += 1
        if detail != self._warned:
            self.log.warning("%s: %s", self.what, detail)
            self._warned = detail
        else:
            self.log.debug("%s: %s (attempt %d)", self.what, detail, self.attempts)

    def succeeded(self) -> None:
        self.attempts, self._warned = 0, None
