"""Whether the board is there, told to systemd (``systemctl status``) and the page."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from daemon.notify import Notifier
from drivers.sensors import ConnectionChange


class BoardStatus:
    """One board's status line and the page's connected/battery flags.

    ``hub`` and ``link`` are read when needed: they are made after this object (the
    page starts with the daemon, the link last)."""

    def __init__(
        self,
        board_id: str,
        notifier: Notifier,
        hub: Callable[[], Any],
        link: Callable[[], Any],
    ) -> None:
        self.board_id = board_id
        self.notifier = notifier
        self._hub = hub
        self._link = link

    def connection(self, event: ConnectionChange) -> None:
        link = self._link()
        if event.state == "connected":
            self.notifier.status(f"board connected ({link.port_path if link else ''})")
        else:
            self.notifier.status(f"BOARD LOST: {event.detail or 'no answer'}; reconnecting")
        hub = self._hub()
        if hub is not None:
            hub.set_status(self.board_id, connected=event.state == "connected")

    async def report_battery(self, interval: float = 5.0) -> None:
        """A Bluetooth board's battery for the page and ``/state.json``: the link asks
        at start-up; the answer arrives whenever the board sends it."""
        last: int | None = None
        while True:
            await asyncio.sleep(interval)
            battery = getattr(self._link(), "battery", None)
            percent = battery.percent if battery is not None else None
            hub = self._hub()
            if percent is not None and percent != last and hub is not None:
                hub.set_status(self.board_id, battery=percent)
                last = percent
