"""Waiting on a printer's "something changed" for a condition: the game demo and the
hall demo both watch the daemon's events this way, and give up after a time-out."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def wait_until(changed: asyncio.Event, condition: Any, timeout: float) -> bool:
    """Wait for ``condition()``, looking again each time ``changed`` is set (or every
    0.5 s): False when ``timeout`` seconds pass first. The demo's printers set it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), min(remaining, 0.5))
    return True
