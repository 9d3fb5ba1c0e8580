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
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from daemon.broadcast.hub import Hub
from daemon.broadcast.listen import WebServer
from daemon.broadcast.logthrottle import throttle_library_logs
from daemon.broadcast.settings import BroadcastSettings
from daemon.broadcast.web import GUARD_KEY, RequestCallback, build_app

if TYPE_CHECKING:
    from daemon.game.record import GameHeaders, GameRecord

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
        notifier: Any = None,
        phone_lines: Callable[[str, str], Any] | None = None,
        phone_speech: dict[str, Any] | None = None,
        board_keys: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings or BroadcastSettings()
        #: each board's key as the configuration read it (``Settings.board_keys``);
        #: None: read from ``mqtt.board_key_file`` at ``start`` (built without a file)
        self.board_keys = board_keys
        if start_seq is None:
            start_seq = restart_safe_seq()
        self.hub = hub or Hub(self.settings, start_seq=start_seq)
        self.on_request = on_request
        started = time.monotonic()
        self.now = now or (lambda: time.monotonic() - started)
        self.port: int | None = None
        self.urls: list[str] = []
        """Every URL the page is reached at (the network's addresses first)."""
        self.notifier = notifier  # daemon.service.notify.Notifier: the limits in systemctl status
        self.server: WebServer | None = None
        self._status_task: asyncio.Task[None] | None = None
        self.mqtt: list[Any] = []  # MqttPublisher, one per board
        self.lichess: Any = None  # LichessPusher, when configured
        #: (board, side) -> that player's PhoneLine: the phone pages (``/listen``)
        self.phone_lines = phone_lines
        self.phone_speech = phone_speech  # the vocabulary's words for the page's buttons
        self.phones: Any = None  # daemon.broadcast.phone.Phones, once started

    def publish(self, board_id: str, event: dict[str, Any]) -> None:
        """One feed event; never blocks, whatever the viewers or the broker do."""
        self.hub.publish(board_id, event)

    def attach(self, board_id: str, source: Callable[[], GameRecord]) -> GameHeaders:
        """The page reads this board's game from the daemon's record (``Hub.attach``)."""
        return self.hub.attach(board_id, source)

    def set_status(
        self,
        board_id: str,
        *,
        connected: bool | None = None,
        battery: float | None = None,
        detail: str | None = None,
    ) -> None:
        self.hub.set_status(board_id, connected=connected, battery=battery, detail=detail)

    def _board_key(self, board_id: str) -> str | None:
        """The key board ``board_id`` signs with (``boardkeys``), None when it has
        none; ``MqttSetupError`` when its file cannot be used."""
        template = self.settings.mqtt.board_key_file
        if not template:
            return None
        from daemon.broadcast import boardkeys
        from daemon.broadcast.mqtt import MqttSetupError

        known = self.board_keys or {}
        if board_id in known:
            return known[board_id]
        try:
            return boardkeys.read_board_keys(template, [board_id])[board_id]
        except boardkeys.BoardKeyError as exc:
            raise MqttSetupError(f"mqtt.board_key_file: {exc}") from None

    async def start(self) -> None:
        """Start the web server (and the MQTT publishers); ``port`` is then known."""
        self.hub.bind_loop(asyncio.get_running_loop())
        if self.settings.mqtt.enabled:
            from daemon.broadcast.mqtt import MqttPublisher, MqttSetupError

            for board_id in self.hub.boards:
                try:
                    key = self._board_key(board_id)
                    publisher = MqttPublisher(self.settings, board_id, self.hub, board_key=key)
                except MqttSetupError as exc:  # a certificate missing: the game goes on
                    log.error("MQTT NOT AVAILABLE for board %s: broadcast.%s", board_id, exc)
                    continue
                publisher.start()
                self.mqtt.append(publisher)
                if self.notifier is not None:  # systemctl status: a stuck client shows
                    self.notifier.add_detail(f"mqtt {board_id}", publisher.summary)
                    publisher.on_health = self.notifier.refresh  # at once, not in 30 s
                # One board's client a turn of the loop: the boards' bytes are read
                # between them (a restarted hall's boards are already in play; what
                # they say meanwhile waits for the page in their backlogs).
                await asyncio.sleep(0)
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
        throttle_library_logs()
        if self.phone_lines is not None:
            from daemon.broadcast.phone import PhoneCodes, Phones

            codes = PhoneCodes(self.hub.board_ids(), self.settings.token or "")
            self.phones = Phones(codes, self.phone_lines, self.phone_speech)
        app = build_app(self.hub, self.on_request, self.now, phones=self.phones)
        self.server = WebServer(app, self.settings, GUARD_KEY)
        await self.server.start()
        self.port, self.urls = self.server.port, self.server.urls
        if self.phones is not None:
            log.info("phone pages (%sl, then the code): %s", self.urls[0] if self.urls else "/",
                     self.phones.codes.summary())  # fmt: skip
        if self.notifier is not None:
            self.notifier.add_detail("web", self.server.guard.summary)
            self._status_task = asyncio.create_task(self._refresh_status())

    async def _refresh_status(self, every: float = 30.0) -> None:
        """``systemctl status`` shows the connections as they are (every 30 s)."""
        last = ""
        while self.server is not None:
            await asyncio.sleep(every)
            summary = self.server.guard.summary() if self.server is not None else ""
            if summary != last:
                self.notifier.refresh()
                last = summary

    def status(self) -> dict[str, Any] | None:
        """The web server's limits and connections (as in ``/state.json``)."""
        return self.server.guard.status() if self.server is not None else None

    async def stop(self) -> None:
        """Close every viewer, the server and the publishers."""
        for subscriber in list(self.hub.subscribers):
            subscriber.drop()
        if self.phones is not None:  # the phone pages' streams end too
            for board, side in self.phones.codes.by_page:
                line = self.phones.line_of(board, side)
                if line is not None:
                    line.close()
        if self._status_task is not None:
            self._status_task.cancel()
            self._status_task = None
        if self.server is not None:
            await self.server.stop()
            self.server = None
        await asyncio.gather(*(publisher.stop() for publisher in self.mqtt))
        self.mqtt.clear()
        if self.lichess is not None:
            await self.lichess.stop()
            self.lichess = None

    async def __aenter__(self) -> Broadcaster:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
