"""Freed memory handed back to the system between games (a full collection, then
glibc's ``malloc_trim``).

A game's transient peaks (the PGN rewritten at every move, JSON frames, the speech's
buffers) are freed by Python, but glibc keeps the freed pages of its heap for the
process: a daemon that plays a tournament day then holds the largest peak it ever
had, and a little more after each game (fragmentation). On a Pi Zero 2 W with 512 MB
for 20 boards that matters; ``malloc_trim(0)`` after a game ends gives those pages
back (measured: ``benchmarks/growth.py``, issue 19). A no-op where glibc is not.

Before it, one full garbage collection (issue 28): the interpreter's own free lists
(tuples, dicts, lists, floats... kept for reuse) fill up over a day of speech and
are emptied only by a full collection, which the daemon otherwise almost never
makes (after ``gc.freeze`` few objects are tracked, so the thresholds are seldom
reached). A tournament day grew 15 kB a game over games 20-40 for it, all of it
given back at the next full collection (``growth.py --in-process --speech``). The
collection walks every object made since the start: 0.2 ms for one board, but 7-15
ms of a desktop core in a 26-board hall with 100 viewers, the event loop's whole
time meanwhile; so the daemon makes it once no board's game is under way
(``daemon.boards.outputs.MemoryBetweenGames``), not at each board's game.
"""

from __future__ import annotations

import functools
import gc
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    # ctypes here, at the first game's start or end: imported before READY it was
    # 1-2% of the start-up's CPU (issue 19), for a call made after it
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_freed_memory() -> bool:
    """Empty the free lists and collect the game's cycles, then give the heap's free
    pages back to the system; True if any pages were."""
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    released = bool(trim(0))
    log.debug("malloc_trim after the game: %s", "released" if released else "nothing to release")
    return released
