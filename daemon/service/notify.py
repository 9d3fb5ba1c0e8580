"""sd_notify: tell systemd the daemon is ready, alive, stopping (``Type=notify``).

Written with the socket module alone (no libsystemd binding to install on a Pi). The
watchdog matters for a blind player: a daemon wedged in a loop must be restarted by
systemd, not left silently running while moves go unannounced. So the ping comes from
the event loop itself: when the loop stalls, the pings stop and systemd restarts us.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)


class Notifier:
    """Sends datagrams to ``$NOTIFY_SOCKET``; a no-op when not run by systemd."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET", "")
        if address.startswith("@"):  # abstract namespace (Linux)
            address = "\0" + address[1:]
        self._address = address or None
        self._socket: socket.socket | None = None
        self.watchdog_interval = _watchdog_interval(env)
        self._status = ""
        self._details: dict[str, Callable[[], str]] = {}

    @property
    def enabled(self) -> bool:
        return self._address is not None

    def send(self, *states: str) -> bool:
        """Send ``READY=1``, ``WATCHDOG=1``, ``STATUS=...``; False when it could not
        (never raises: a notification must not take the daemon down)."""
        if self._address is None:
            return False
        message = "\n".join(states).encode("utf-8")
        try:
            if self._socket is None:
                self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                self._socket.setblocking(False)
            self._socket.sendto(message, self._address)
        except OSError as exc:
            log.warning("sd_notify to %s failed: %s", self._address, exc)
            return False
        return True

    def ready(self, status: str = "") -> bool:
        self._status = status
        line = self._status_line()
        return self.send("READY=1", *((f"STATUS={line}",) if line else ()))

    def status(self, status: str) -> bool:
        self._status = status
        return self.send(f"STATUS={self._status_line()}")

    def add_detail(self, name: str, describe: Callable[[], str]) -> None:
        """A part's own words after the status line (the web server's limits), read
        whenever the line is sent."""
        self._details[name] = describe

    def refresh(self) -> bool:
        """Send the status line again, with the details as they are now."""
        return self.send(f"STATUS={self._status_line()}") if self._status else False

    def _status_line(self) -> str:
        parts = [self._status] if self._status else []
        for describe in self._details.values():
            try:
                parts.append(describe())
            except Exception:  # a detail must never stop the status
                log.debug("a status detail failed", exc_info=True)
        return "; ".join(parts)

    def stopping(self) -> bool:
        return self.send("STOPPING=1")

    def ping(self) -> bool:
        return self.send("WATCHDOG=1")

    async def watchdog(self) -> None:
        """Ping at half the watchdog time-out until cancelled (only under a watchdog)."""
        if self.watchdog_interval is None or not self.enabled:
            return
        while True:
            self.ping()
            await asyncio.sleep(self.watchdog_interval)

    def close(self) -> None:
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.close()
            self._socket = None


def _watchdog_interval(env: Mapping[str, str]) -> float | None:
    """Half of ``WATCHDOG_USEC`` in seconds, when the watchdog is meant for this process."""
    usec = env.get("WATCHDOG_USEC")
    if not usec:
        return None
    pid = env.get("WATCHDOG_PID")
    if pid and pid.isdigit() and int(pid) != os.getpid():
        return None
    try:
        value = int(usec)
    except ValueError:
        return None
    if value <= 0:
        return None
    return value / 1_000_000 / 2
