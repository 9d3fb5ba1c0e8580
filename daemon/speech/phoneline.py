"""One player's line to his phone page(s) on one board (``daemon.speech.phone``).

Light on purpose (no engines, no aiohttp): every board holds its two lines from
the start, the web side attaches a page's stream to one, and the phone's
announcer (made after READY, with the rest of the speech) speaks into it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("dgt_bridge.speech")

Sink = Callable[[dict[str, Any]], None]


class PhoneLine:
    """One player's line to his phone page(s) on one board: the pages listening
    (each a sink for the page's messages) and the phrases they have not yet said."""

    def __init__(self, board: str, side: str) -> None:
        self.board = board
        self.side = side
        self.pages: list[Sink] = []
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[float]] = {}

    @property
    def listening(self) -> bool:
        return bool(self.pages)

    def attach(self, sink: Sink) -> Callable[[], None]:
        """A page listens from now on; the returned function ends that."""
        self.pages.append(sink)
        log.info("phone page for board %s, %s: listening (%d)", self.board, self.side,
                 len(self.pages))  # fmt: skip

        def detach() -> None:
            with contextlib.suppress(ValueError):
                self.pages.remove(sink)
            if not self.pages:  # nobody to say it: stop waiting
                for waiting in self._pending.values():
                    if not waiting.done():
                        waiting.set_result(time.time())

        return detach

    def send(self, message: dict[str, Any]) -> None:
        for sink in list(self.pages):
            try:
                sink(message)
            except Exception:  # one broken page must not silence the others
                log.exception("phone page for board %s: could not send", self.board)

    def say(self, text: str, lang: str, rate: float) -> tuple[int, asyncio.Future[float]]:
        """Send one phrase; the future is done when a page has said it."""
        phrase_id = next(self._ids)
        done: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._pending[phrase_id] = done
        self.send({"type": "say", "id": phrase_id, "text": text, "lang": lang,
                   "rate": round(rate, 2), "sent": time.time()})  # fmt: skip
        return phrase_id, done

    def spoken(self, phrase_id: int) -> bool:
        """A page has said the phrase (its speech ended); False if not waited for."""
        waiting = self._pending.get(phrase_id)
        if waiting is None or waiting.done():
            return False
        waiting.set_result(time.time())
        return True

    def forget(self, phrase_id: int) -> None:
        self._pending.pop(phrase_id, None)

    def close(self) -> None:
        """The daemon stops: every page's stream ends (``bye``), nothing is waited for."""
        self.send({"type": "bye"})
        for waiting in self._pending.values():
            if not waiting.done():
                waiting.set_result(time.time())
