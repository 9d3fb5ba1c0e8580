"""Whether the board is there, told to systemd (``systemctl status``) and the page."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from daemon.notify import Notifier
from drivers.sensors import ConnectionChange

if TYPE_CHECKING:
    from drivers.dgt.protocol import BatteryStatus


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

    def battery(self, battery: BatteryStatus) -> None:
        """A Bluetooth board's battery, for the page and ``/state.json``: the link asks
        at each connection and tells this when the board answers (no timer: an idle
        daemon on a Pi's budget pays for every wake-up). Before the page is up the
        daemon gives the page the link's last report itself."""
        hub = self._hub()
        if hub is not None and battery.percent is not None:
            hub.set_status(self.board_id, battery=battery.percent)
