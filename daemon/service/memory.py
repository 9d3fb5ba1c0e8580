"""Freed memory handed back to the system between games (glibc's ``malloc_trim``).

A game's transient peaks (the PGN rewritten at every move, JSON frames, the speech's
buffers) are freed by Python, but glibc keeps the freed pages of its heap for the
process: a daemon that plays a tournament day then holds the largest peak it ever
had, and a little more after each game (fragmentation). On a Pi Zero 2 W with 512 MB
for 20 boards that matters; ``malloc_trim(0)`` after a game ends gives those pages
back (measured: ``benchmarks/growth.py``, issue 19). A no-op where glibc is not.
"""

from __future__ import annotations

import functools
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
    """Give the heap's free pages back to the system; True if anything was."""
    trim = _malloc_trim()
    if trim is None:
        return False
    released = bool(trim(0))
    log.debug("malloc_trim after the game: %s", "released" if released else "nothing to release")
    return released
