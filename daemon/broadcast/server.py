"""The broadcaster the daemon holds: a hub, its web server, its MQTT publisher.

The daemon calls ``publish(board_id, event_dict)`` for each feed event and
``set_status`` when the link or battery changes; both return at once. Requests
from the arbiter's page come back through ``on_request(board_id, Request)``,
which the daemon feeds to the rules core.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from daemon.broadcast.hub import Hub
from daemon.broadcast.settings import BroadcastSettings
from daemon.broadcast.web import RequestCallback, build_app

log = logging.getLogger(__name__)


def restart_safe_seq() -> int:
    """Where the feed's numbering starts: milliseconds since 2020, so a viewer
    resuming with an id from before a daemon restart is never served the new
    run's events under old numbers (its id is lower than anything new and falls
    out of the history, or higher after a clock reset: either way a snapshot)."""
    return max(0, int(time.time() * 1000) - 1_577_836_800_000)


class Broadcaster:
    """The live page and feed of this daemon's boards (and MQTT, if configured)."""

    def __init__(
        self,
        settings: BroadcastSettings | None = None,
        on_request: RequestCallback | None = None,
        *,
        now: Callable[[], float] | None = None,
        hub: Hub | None = None,
        start_seq: int | None = None,
    ) -> None:
        self.settings = settings or BroadcastSettings()
        if start_seq is None:
            start_seq = restart_safe_seq()
        self.hub = hub or Hub(self.settings, start_seq=start_seq)
        self.on_request = on_request
        started = time.monotonic()
        self.now = now or (lambda: time.monotonic() - started)
        self.port: int | None = None
        self._runner: web.AppRunner | None = None
        self.mqtt: list[Any] = []  # MqttPublisher, one per board
        self.lichess: Any = None  # LichessPusher, when configured

    def publish(self, board_id: str, event: dict[str, Any]) -> None:
        """One feed event; never blocks, whatever the viewers or the broker do."""
        self.hub.publish(board_id, event)

    def set_status(
        self,
        board_id: str,
        *,
        connected: bool | None = None,
        battery: float | None = None,
        detail: str | None = None,
    ) -> None:
        self.hub.set_status(board_id, connected=connected, battery=battery, detail=detail)

    async def start(self) -> None:
        """Start the web server (and the MQTT publishers); ``port`` is then known."""
        self.hub.bind_loop(asyncio.get_running_loop())
        if self.settings.mqtt.enabled:
            from daemon.broadcast.mqtt import MqttPublisher, MqttSetupError

            for board_id in self.hub.boards:
                try:
                    publisher = MqttPublisher(self.settings, board_id, self.hub)
                except MqttSetupError as exc:  # a certificate missing: the game goes on
                    log.error("MQTT NOT AVAILABLE for board %s: broadcast.%s", board_id, exc)
                    continue
                publisher.start()
                self.mqtt.append(publisher)
        if self.settings.lichess.enabled:
            from daemon.broadcast.lichess import LichessPusher

            pusher = LichessPusher(self.hub, self.settings.lichess)
            try:
                pusher.start()
                self.lichess = pusher
            except ValueError as exc:  # no token, a bad round id: the game goes on
                log.error("LICHESS PUSH NOT AVAILABLE: broadcast.%s", exc)
        if not self.settings.enabled:
            return
        app = build_app(self.hub, self.on_request, self.now)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.settings.address, self.settings.port)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else self.settings.port
        log.info("live page on http://%s:%s/", self.settings.address, self.port)

    async def stop(self) -> None:
        """Close every viewer, the server and the publishers."""
        for subscriber in list(self.hub.subscribers):
            subscriber.drop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        for publisher in self.mqtt:
            await asyncio.to_thread(publisher.stop)
        self.mqtt.clear()
        if self.lichess is not None:
            await self.lichess.stop()
            self.lichess = None

    async def __aenter__(self) -> Broadcaster:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
