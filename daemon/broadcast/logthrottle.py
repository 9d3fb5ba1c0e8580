"""One log line per cause per interval, with a count: a flood cannot fill the disk.

A client that opens a thousand bad connections used to write a line (often a
traceback) for each: about 10 MB of log in 14 s. Here each cause (our own, or the
message template of a library's logger) is logged the first time, then counted;
after ``interval`` seconds the next line says how many were left out, and
``flush()`` (called by the server's periodic timer) reports a count that no later
line would carry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from drivers.records import Record

INTERVAL = 60.0
"""Seconds between two lines of one cause."""

MAX_CAUSES = 1000
"""Causes remembered at once; the oldest are forgotten beyond (a bound on memory)."""


@dataclass(eq=False, repr=False, slots=True)
class _Cause(Record):
    logger: logging.Logger
    level: int
    message: str
    last: float
    left_out: int = 0


class LogThrottle:
    """Decides, per cause, whether a line is written now or only counted."""

    def __init__(self, interval: float = INTERVAL, clock: Callable[[], float] = time.monotonic):
        self.interval = interval
        self.clock = clock
        self._causes: dict[str, _Cause] = {}

    def admit(self, cause: str, logger: logging.Logger, level: int, message: str) -> int | None:
        """None: only count this line. Otherwise write it now, adding the number
        returned (the lines of this cause left out since the last one)."""
        now = self.clock()
        known = self._causes.get(cause)
        if known is None:
            if len(self._causes) >= MAX_CAUSES:
                self._causes.pop(next(iter(self._causes)))
            self._causes[cause] = _Cause(logger, level, message, now)
            return 0
        if now - known.last < self.interval:
            known.left_out += 1
            return None
        left_out, known.left_out, known.last = known.left_out, 0, now
        return left_out

    def flush(self) -> None:
        """Write the count of every cause whose interval has passed in silence."""
        now = self.clock()
        for cause in list(self._causes.values()):
            if cause.left_out and now - cause.last >= self.interval:
                cause.logger.log(cause.level, "%s (%d more such lines in %.0f s)",
                                 cause.message, cause.left_out, now - cause.last)  # fmt: skip
                cause.left_out, cause.last = 0, now


THROTTLE = LogThrottle()
"""The process's throttle: one count per cause whoever logs it."""


def throttled(logger: logging.Logger, cause: str, level: int, message: str, *args: Any) -> None:
    """Log ``message % args`` unless ``cause`` was logged in the last interval."""
    text = message % args if args else message
    left_out = THROTTLE.admit(cause, logger, level, text)
    if left_out is None:
        return
    if left_out:
        logger.log(level, "%s (and %d more such lines in the last %.0f s)", text, left_out,
                   THROTTLE.interval)  # fmt: skip
    else:
        logger.log(level, "%s", text)


class ThrottleFilter(logging.Filter):
    """For a library's logger (aiohttp, asyncio): its lines, throttled by their
    message template. A traceback is kept only on the first line of a cause."""

    def filter(self, record: logging.LogRecord) -> bool:
        cause = f"{record.name}:{record.msg}"
        left_out = THROTTLE.admit(cause, logging.getLogger(record.name), record.levelno,
                                  record.getMessage())  # fmt: skip
        if left_out is None:
            return False
        if left_out:
            record.msg = f"{record.getMessage()} (and {left_out} more such lines)"
            record.args = ()
            record.exc_info = record.exc_text = None
        return True


LIBRARY_LOGGERS = ("aiohttp.server", "aiohttp.web", "aiohttp.access", "aiohttp.websocket",
                   "asyncio")  # fmt: skip


def throttle_library_logs() -> None:
    """Throttle the network libraries' loggers (idempotent)."""
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, ThrottleFilter) for f in logger.filters):
            logger.addFilter(ThrottleFilter())
