"""The daemon in-process on the emulated board while human hands play a game on it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from daemon.app import Daemon
from drivers.sensors import SensorEvent
from drivers.simulators.emulator import BoardEmulator


async def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait, generously, for something that should happen soon."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def play_on_emulator(
    settings: Any,
    emulator: BoardEmulator,
    hands: list[SensorEvent],
    storage: Path,
    *,
    speed: float,
    moves: int,
    record: Callable[[SensorEvent], None] | None = None,
) -> list[dict]:
    """The daemon's feed of ``hands`` played on ``emulator`` ``speed`` times faster
    (the daemon's game time runs as fast), once ``moves`` moves are in it.
    ``record`` hears each sensor event the board's link hands the daemon, as the
    ``record`` command writes them."""
    feed: list[dict] = []
    daemon = Daemon(
        settings,
        port=emulator.port_path,
        speech=False,
        storage_dir=storage,
        resume=False,
        on_event=feed.append,
        time_scale=speed,
    )
    if record is not None:
        submit = daemon._submit[daemon.board.id]  # where the board's link hands its events

        def recorded(event: SensorEvent) -> None:
            record(event)
            submit(event)

        daemon._submit[daemon.board.id] = recorded
    await daemon.start()
    try:
        await wait_for(lambda: daemon.link.connected)
        emulator.play(hands, speed=speed)
        assert await asyncio.to_thread(emulator.wait_played, 60)
        await wait_for(lambda: sum(e["type"] == "move" for e in feed) >= moves)
    finally:
        daemon.stop()
        await daemon.close()
    return feed
