"""Helpers shared by the DGT link tests."""

from __future__ import annotations

import asyncio

FAST = {
    "liveness_interval": 0.2,
    "liveness_timeout": 2.5,
    "quiet_dump_after": 0.3,
    "startup_timeout": 2.5,
    "clock_ack_timeout": 1.0,
    "backoff_initial": 0.05,
    "backoff_max": 0.2,
}


async def until(predicate, timeout: float = 20.0) -> None:
    """Wait (generously) for something the link should do soon."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out waiting for the link")
        await asyncio.sleep(0.02)
