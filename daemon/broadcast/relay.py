"""The relay: one round of a hall's boards from MQTT, on one page and one PGN.

Subscribes to ``<prefix>/<tournament>/<round>/+/{events,state,status}`` and
feeds a hub of its own, so it serves exactly the daemon's web app: the grid
page, ``/events``, ``/game.pgn`` with every board as one game (the URL a
lichess broadcast polls), ``/state.json``.

A retained ``state`` gives a board joining late its whole game; ``events``
then continue it. The relay keeps a persistent session (fixed client id, clean
session off), so events published while it reconnects after a broker restart
wait at the broker for it.

The relay joins at any moment and messages may come in any order (a relay
subscribing in the middle of a burst, a resend after a reconnect), so a board's
record only ever grows without a hole: an event is applied when it follows the
last one applied (its ``prev`` is that ``seq``, or 0 for the first event of a
daemon's run); one after a hole waits until the missing events or a ``state``
covering them arrive; one at or below the last applied ``seq`` is a duplicate.
A ``state`` is loaded unless the record, complete, is already that far.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as mqtt
from aiohttp import web

from daemon.broadcast.hub import BOARD_ID, Hub
from daemon.broadcast.mqtt import new_client, topic_level
from daemon.broadcast.settings import BroadcastSettings
from daemon.broadcast.web import build_app
from daemon.gamerecord import GameHeaders

log = logging.getLogger(__name__)

#: Events held per board after a hole, waiting for the missing ones or a state.
MAX_HELD = 10000


@dataclass
class BoardSync:
    """How far one board's record is known to be complete, for one origin.

    ``last`` is the ``seq`` of the last event folded into the record (or of the
    state loaded), None while the relay holds no base for this origin yet.
    ``held`` maps an event's ``prev`` to ``(seq, event)`` for events after a hole.
    """

    origin: str
    last: int | None = None
    held: dict[int, tuple[int, dict[str, Any]]] = field(default_factory=dict)

    def hold(self, prev: int, seq: int, event: dict[str, Any]) -> None:
        self.held[prev] = (seq, event)
        while len(self.held) > MAX_HELD:
            del self.held[min(self.held)]
            log.error("relay: too many events after a hole; the oldest was dropped")

    def forget_through(self, seq: int) -> None:
        """Drop what a state up to ``seq`` already covers."""
        self.held = {p: held for p, held in self.held.items() if held[0] > seq}

    def next_ready(self) -> tuple[int, dict[str, Any]] | None:
        """The held event that follows the last one applied, if it came."""
        if self.last is None:
            return None
        return self.held.pop(self.last, None)


class Relay:
    def __init__(
        self,
        broker: str,
        broker_port: int,
        tournament: str,
        round_: str,
        *,
        address: str = "0.0.0.0",
        port: int = 8080,
        prefix: str = "dgt-bridge",
        client_id: str | None = None,
        event: str | None = None,
    ) -> None:
        self.broker, self.broker_port = broker, broker_port
        self.event = event or tournament
        self.round = round_
        self.settings = BroadcastSettings(
            address=address, port=port, boards=[], event=self.event, round=round_
        )
        self.hub = Hub(self.settings)
        self.hub.sort_boards = True
        self.base = "/".join(topic_level(p) for p in (prefix, tournament, round_))
        self.client = new_client(
            client_id or f"dgt-bridge-relay-{topic_level(tournament)}-{topic_level(round_)}",
            clean_session=False,
        )
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.sync: dict[str, BoardSync] = {}
        self.duplicates = 0
        self.port: int | None = None
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        self.hub.bind_loop(asyncio.get_running_loop())
        app = build_app(self.hub)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.settings.address, self.settings.port)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else self.settings.port
        self.client.connect_async(self.broker, self.broker_port, keepalive=30)
        self.client.loop_start()

    async def stop(self) -> None:
        for subscriber in list(self.hub.subscribers):
            subscriber.drop()
        await asyncio.to_thread(self._stop_client)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _stop_client(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    # -- paho's thread -------------------------------------------------------------

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any,
                    properties: Any) -> None:  # fmt: skip
        if reason.is_failure:
            log.warning("MQTT broker refused the relay: %s", reason)
            return
        client.subscribe([(f"{self.base}/+/{leaf}", 1) for leaf in ("state", "events", "status")])

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        rest = message.topic[len(self.base) + 1 :]
        board, _, leaf = rest.partition("/")
        if not BOARD_ID.match(board) or leaf not in ("state", "events", "status"):
            return
        try:
            payload = json.loads(message.payload)
        except (ValueError, UnicodeDecodeError):
            log.warning("relay: ignoring a malformed message on %s", message.topic)
            return
        if not isinstance(payload, dict):
            return
        try:
            getattr(self, f"_on_{leaf}")(board, payload)
        except (KeyError, TypeError, ValueError):
            log.warning("relay: ignoring a malformed message on %s", message.topic)

    def _on_state(self, board: str, state: dict[str, Any]) -> None:
        origin, seq = str(state.get("origin", "")), int(state.get("seq") or 0)
        sync = self.sync.get(board)
        state = self._house_headers(board, state)
        if sync and sync.origin == origin and sync.last is not None and sync.last >= seq:
            # The record is complete up to a later event already; but the names
            # (set at the board, or changed for the next game) come with states only.
            self.hub._call(self._take_headers, board, state["headers"])
            return
        if sync is None or sync.origin != origin:
            sync = self.sync[board] = BoardSync(origin)
        sync.last = seq
        sync.forget_through(seq)
        self.hub.load_state(board, state)
        self._apply_held(board, sync)

    def _house_headers(self, board: str, state: dict[str, Any]) -> dict[str, Any]:
        """The state with the headers the relay owns: one Event and Round for the
        whole round (a board's own daemon may say "?" or last year's name), and
        the Board tag from the topic the state came on."""
        headers = dict(state.get("headers") or {})
        extra = dict(headers.get("extra") or {})
        extra["Board"] = board
        headers.update(event=self.event, round=self.round, extra=extra)
        return {**state, "headers": headers}

    def _take_headers(self, board: str, headers: dict[str, Any]) -> None:
        """On the loop: the board's names from a state whose moves we hold already."""
        if board in self.hub.boards:
            self.hub.boards[board].record.headers = GameHeaders.from_dict(headers)

    def _on_events(self, board: str, envelope: dict[str, Any]) -> None:
        origin, seq, event = str(envelope["origin"]), int(envelope["seq"]), envelope["event"]
        if not isinstance(event, dict):
            raise TypeError("event must be an object")
        raw_prev = envelope.get("prev")
        prev = int(raw_prev) if raw_prev is not None else None
        sync = self.sync.get(board)
        if sync is None or sync.origin != origin:
            sync = self.sync[board] = BoardSync(origin)
        if sync.last is None and prev in (0, None):
            # The first event of a daemon's run (or from a publisher that does not
            # say): it continues what we show. Any later one waits for its state.
            sync.last = 0
        if sync.last is not None and seq <= sync.last:
            self.duplicates += 1
            return
        if sync.last is None or (prev is not None and prev != sync.last):
            sync.hold(prev if prev is not None else seq, seq, event)
            return
        sync.last = seq
        self.hub.publish(board, event)
        self._apply_held(board, sync)

    def _apply_held(self, board: str, sync: BoardSync) -> None:
        while (ready := sync.next_ready()) is not None:
            seq, event = ready
            sync.last = seq
            self.hub.publish(board, event)

    def _on_status(self, board: str, status: dict[str, Any]) -> None:
        online = bool(status.get("online"))
        connected = status.get("connected")
        self.hub.set_status(
            board,
            connected=bool(online and connected is not False),
            battery=status.get("battery"),
            detail="" if online else "board offline",
        )
