"""What the game demo and the hall demo both wait for: a printer's "something
changed" for a condition (given up after a time-out), and the demo's game, then the
daemon serving on until it is stopped."""

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


async def play_then_serve(
    daemon: Any, play: asyncio.Task[int], once: bool, serving: str, played: str = ""
) -> int:
    """The demo's game (``play``, its exit code) until it ends or the daemon stops;
    ``played`` is printed when it ends. Then, unless ``once`` or a move was missed,
    the daemon serves on (``serving`` says where) until it is stopped. 0 when the
    game was not played to its end."""
    code = 0
    stopped = asyncio.create_task(daemon.wait_stopped())
    await asyncio.wait({play, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if play.done():
        code = play.result()
        if played:
            print(played, flush=True)
        if not once and code == 0 and not stopped.done():
            print(f"dgt-bridge demo: still serving {serving}; Ctrl-C to stop.", flush=True)
            await stopped
    play.cancel()
    stopped.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await play
    return code
