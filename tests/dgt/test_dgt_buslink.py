"""The bus link against the emulated chain over a real pseudo-terminal: a board added
to the chain later is found. (A chain of boards playing real games with corrupted
replies and a board unplugged from its middle, through the whole daemon, is in
tests/daemon/test_hall.py.)"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from drivers.dgt.bus import BusTimings
from drivers.dgt.busemulator import BusChainEmulator
from drivers.dgt.buslink import BusLink


async def _until(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.05)
    return bool(condition())


async def test_a_board_plugged_onto_the_chain_later_is_found_by_the_broadcast_ping(
    tmp_path: Path,
) -> None:
    timings = BusTimings(reply_timeout=0.4, discovery_interval=1.0)
    found: list[int] = []
    with BusChainEmulator(tmp_path, serials=["01025"]) as chain:
        link = BusLink(chain.port_path, timings=timings, on_new_board=found.append)
        link.add_board(1025, lambda event: None)
        task = asyncio.create_task(link.run())
        try:
            assert await _until(lambda: link.connected(1025))
            chain.add_board("03000")
            assert await _until(lambda: found == [3000], 10)
        finally:
            link.close()
            await task
