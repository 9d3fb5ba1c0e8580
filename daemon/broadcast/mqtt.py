"""Publishing one board's feed to an MQTT broker (tournament scale).

Topics, one set per board::

    <prefix>/<tournament>/<round>/<board>/events   each feed event, QoS 1
    <prefix>/<tournament>/<round>/<board>/state    the display state, retained, QoS 0
    <prefix>/<tournament>/<round>/<board>/pgn      the live PGN, retained, QoS 0
    <prefix>/<tournament>/<round>/<board>/status   {"online": ...}, retained, QoS 0;
                                                    the last will says offline

An event payload is ``{"origin", "seq", "prev", "board", "event"}``: ``origin``
names this run of the daemon (its numbering restarts with it), ``seq`` orders the
events, so a subscriber drops the duplicates a reconnect can bring; ``prev`` is
the ``seq`` of this board's previous event of this run (0 for its first), so a
subscriber knows whether it holds everything before an event.

Nothing is lost while the broker is away, and the events reach the broker in
their order. An event is handed to paho only while connected: paho keeps it
until the broker acknowledges it and sends it again after a reconnect. While
not connected the events wait in our own bounded queue (``buffer`` messages)
and go out, oldest first, once connected and as acknowledgements free room in
paho's (``buffer`` unacknowledged messages). Handing them to paho while not
connected would reorder them: paho 2.x stores a message published before its
socket exists and sends it only after the CONNACK, but writes one published
while CONNACK is awaited at once, so a burst around the connect arrived with
its later events first (and a relay dropped the earlier ones as duplicates).
Each event also names the board's previous ``seq`` (``prev``), so a subscriber
can tell a gap from a duplicate. State and PGN are "latest wins": they are
published again on every connect, never queued, and at QoS 0 (``LATEST_QOS``).

The hub calls ``on_feed`` on the event loop; it only hands messages to paho, which
never waits for the network: the loop writes them when the socket takes them and
reads the broker's answers (``daemon.broadcast.mqttloop``: no thread a board).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import logging
import re
import ssl
import time
import uuid
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from daemon.broadcast import arbitersig, boardkeys, strictjson
from daemon.broadcast.hub import Hub
from daemon.broadcast.mqttloop import PahoOnLoop
from daemon.broadcast.settings import BroadcastSettings, MqttSettings

log = logging.getLogger(__name__)

#: Seconds between two status messages of a connected board: a relay takes a
#: retained game only once its board says it is live (issue 24), and a check that
#: the broker still acknowledges.
HEARTBEAT = 10.0
#: paho's delays between two connects, doubling from the first to the second (s).
RECONNECT_DELAYS = (1, 5)
#: An event the broker has not acknowledged for this long means a stuck client.
ACK_TIMEOUT = 60.0
#: A clock report's retained state goes at most this often (s) a board, the newest
#: at most this late: each report is an event of its own on ``events``, and the
#: whole state (every move) at every report of every board was much of a Pi Zero's
#: budget (issue 28). A move, a result, anything else goes at once.
STATE_EVERY = 2.0

#: The QoS of the retained "latest wins" messages (state, PGN, status). Not 1:
#: paho keeps a QoS 1 message until the broker acknowledges it and sends it
#: again after a reconnect, after the newest state ``_publish_latest`` sends
#: then, so a broker that hung and came back retained an old game for good. At
#: QoS 0 paho keeps nothing; what a lost connection drops, the reconnect replaces.
LATEST_QOS = 0

_UNSAFE = re.compile(r"[/+#\s]+")


def topic_level(name: str) -> str:
    """One topic level from a free-form name: no ``/``, ``+``, ``#`` or blanks."""
    return _UNSAFE.sub("_", name.strip()) or "_"


def board_topic(prefix: str, tournament: str, round_: str, board: str, leaf: str) -> str:
    levels = (prefix, tournament, round_, board)
    return "/".join(topic_level(level) for level in levels) + "/" + leaf


class MqttSetupError(ValueError):
    """The broker settings cannot be used (a certificate file missing...): said
    before connecting, with the setting to fix."""


def new_client(
    client_id: str, settings: MqttSettings | None = None, *, clean_session: bool = True
) -> mqtt.Client:
    """A paho client with the login and TLS of ``settings`` (``username_pw_set``, and
    the TLS context ``tls_context`` made as paho's ``tls_set`` makes it), so the
    board's publisher and the relay are secured the same way."""
    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2,
        client_id=client_id,
        protocol=mqtt.MQTTv311,
        clean_session=clean_session,
    )
    client.reconnect_delay_set(*RECONNECT_DELAYS)
    if settings is not None:
        if settings.username:
            client.username_pw_set(settings.username, settings.password or None)
        if settings.tls or settings.ca_file or settings.cert_file:
            _set_tls(client, settings)
    return client


def _set_tls(client: mqtt.Client, settings: MqttSettings) -> None:
    if settings.key_file and not settings.cert_file:
        raise MqttSetupError("mqtt.key_file (relay: --key) is set without a certificate")
    for key, option in (("ca_file", "--ca"), ("cert_file", "--cert"), ("key_file", "--key")):
        path = getattr(settings, key)
        if path and not Path(path).is_file():
            raise MqttSetupError(f"mqtt.{key} (relay: {option}): no such file {path!r}")
    try:
        context = tls_context(settings.ca_file, settings.cert_file, settings.key_file)
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise MqttSetupError(f"mqtt TLS files cannot be used: {exc}") from None
    client.tls_set_context(context)
    client.tls_insecure_set(False)


def tls_context(ca_file: str, cert_file: str, key_file: str) -> ssl.SSLContext:
    """The client TLS context of these files (the system's CAs without ``ca_file``),
    as paho's ``tls_set`` makes it (``PROTOCOL_TLS_CLIENT``: the broker's certificate
    and name checked). One context serves every client of the same files: making one
    reads the CA store, 17 ms of CPU with the system's CAs on a desktop core, and a
    hall's daemon makes one client per board in one turn of its loop (26 at a Pi 4's
    budget were seconds without the boards read, issue 28). A context is safe to
    share between connections; each keeps its own session. Each file's modification
    time is part of the key: a certificate renewed on disk is read again by the next
    client made."""
    files = (ca_file, cert_file, key_file)
    return _context_of(files, tuple(Path(p).stat().st_mtime_ns if p else 0 for p in files))


@functools.lru_cache(maxsize=1)  # only the newest: a renewed file's old context is let go
def _context_of(files: tuple[str, str, str], mtimes: tuple[int, ...]) -> ssl.SSLContext:
    """The context of ``files``; ``mtimes`` only keys the cache (``tls_context``)."""
    ca_file, cert_file, key_file = files
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, names checked
    if cert_file:
        context.load_cert_chain(cert_file, key_file or None)
    if ca_file:
        context.load_verify_locations(ca_file)
    else:
        context.load_default_certs()
    return context


class MqttPublisher:
    """One board's feed to the broker; ``start`` after the hub's loop is bound."""

    def __init__(
        self, settings: BroadcastSettings, board_id: str, hub: Hub, *, board_key: str | None = None
    ) -> None:
        self.settings = settings
        self.mqtt = settings.mqtt
        if self.mqtt.username and "{board}" in self.mqtt.username:
            # a daemon of several boards: each its own login (and so its own
            # connection, where the broker binds the client id to the login)
            login = self.mqtt.username.replace("{board}", topic_level(board_id))
            self.mqtt = dataclasses.replace(self.mqtt, username=login)
        self.board_id = board_id
        self.hub = hub
        #: this board's key (``boardkeys``), read with the configuration: every
        #: message is signed with it
        self.board_key = board_key
        self.origin = uuid.uuid4().hex[:12]
        self.statuses = 0  # the status messages numbered so far (``n``, the will's too)
        round_ = hub.boards[board_id].settings.round or settings.round
        self.topics = {
            leaf: board_topic(self.mqtt.topic_prefix, self.mqtt.tournament, round_, board_id, leaf)
            for leaf in ("events", "state", "pgn", "status")
        }
        self.client = self._new_client()
        self.driver: PahoOnLoop | None = None  # drives the client on the loop, from start()
        self.connected = False
        self.problem = ""  # why the broker does not get the events, if it does not
        self.restarts = 0  # clients started again after paho failed or no acks
        self.unacked: dict[int, tuple[float, bytes]] = {}  # mid -> (handed at, event)
        self.clock = time.monotonic  # the watchdog's time (a test gives its own)
        #: called on the loop when ``summary()`` changes (``systemctl status`` then
        #: says it at once, not at its next 30 s refresh)
        self.on_health: Any = None
        self._said = ""
        self._timer: Any = None
        self.stopping = False  # our own goodbye: its disconnect is no loss
        self.waiting: deque[bytes] = deque()  # events paho had no room for
        self.lost = 0  # events dropped because even our buffer was full
        self.published = 0
        # the seq of this board's last event: each event names it as its ``prev``
        self.last_seq = hub.boards[board_id].seq
        self._pgn_sent: str | None = None  # the PGN last published
        self._state_at = float("-inf")  # when (``clock``) the state was last published
        self._state_later: Any = None  # the newest state's timer (``STATE_EVERY``)

    def _new_client(self) -> mqtt.Client:
        # the login is the client id when there is one: a broker with
        # use_username_as_clientid binds them anyway (config/mosquitto/)
        name = self.mqtt.username or f"dgt-bridge-{topic_level(self.board_id)}-{self.origin}"
        client = new_client(name, self.mqtt)
        client.will_set(
            self.topics["status"], self._status_payload(online=False), qos=1, retain=True
        )
        client.max_queued_messages_set(max(1, self.mqtt.buffer))
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        return client

    # -- life cycle -------------------------------------------------------------

    def start(self) -> None:
        """Connect (on the running loop, which then drives the client) and follow the feed."""
        self.hub.listeners.append(self.on_feed)
        self._drive()
        self._timer = self._loop().call_later(HEARTBEAT, self._beat)

    def _loop(self) -> asyncio.AbstractEventLoop:
        return self.hub._loop or asyncio.get_running_loop()

    def _drive(self) -> None:
        self.client.connect_async(self.mqtt.host, self.mqtt.port, keepalive=self.mqtt.keepalive)
        self.driver = PahoOnLoop(
            self.client,
            self._loop(),
            on_failure=self._failed,
            min_delay=RECONNECT_DELAYS[0],
            max_delay=RECONNECT_DELAYS[1],
        )
        self.driver.start()

    def _failed(self, error: BaseException) -> None:
        """paho raised (a bug, a library it cannot use): a new client, at once."""
        self._restart(f"the MQTT client failed ({type(error).__name__}: {error}); started again")

    def summary(self) -> str:
        """The board's MQTT link in a few words (``systemctl status``, the page)."""
        if self.problem:
            return f"MQTT board {self.board_id}: {self.problem}"
        return f"MQTT board {self.board_id}: {'connected' if self.connected else 'connecting'}"

    def _set_problem(self, problem: str) -> None:
        if problem != self.problem:
            self.problem = problem
            self.hub.set_status(self.board_id, detail=f"MQTT: {problem}" if problem else "")
        self._health_changed()

    def _health_changed(self) -> None:
        """On the loop: tell ``on_health`` when the summary is not what it last heard."""
        summary = self.summary()
        if self.on_health is not None and summary != self._said:
            self._said = summary
            self.on_health()

    def _beat(self) -> None:
        """On the loop, every ``HEARTBEAT``: a live status, and the watchdog: an
        event unacknowledged for ``ACK_TIMEOUT`` is shown and the client started
        again, its unacknowledged events first (paho failing does so at once:
        ``_failed``)."""
        if self.stopping:
            return
        oldest = min((at for at, _ in list(self.unacked.values())), default=None)
        if oldest is not None and self.clock() - oldest > ACK_TIMEOUT:
            self._restart(f"no acknowledgement for {ACK_TIMEOUT:.0f} s; started again")
        elif self.connected:
            if self.problem and not self.unacked:
                self._set_problem("")
            self.client.publish(
                self.topics["status"],
                self._status_payload(online=True),
                qos=LATEST_QOS,
                retain=True,
            )
        loop = self.hub._loop
        if loop is not None and not self.stopping:
            self._timer = loop.call_later(HEARTBEAT, self._beat)

    def _restart(self, why: str) -> None:
        log.error("MQTT: board %s: %s", self.board_id, why)
        self.restarts += 1
        self._set_problem(why)
        old, self.client = self.client, self._new_client()
        self.connected = False
        resend = [payload for _, (_, payload) in sorted(self.unacked.items())]
        self.unacked.clear()
        self.waiting.extendleft(reversed(resend))
        old.on_connect = old.on_disconnect = old.on_publish = None
        if self.driver is not None:
            self.driver.close()  # no goodbye: its last will says offline until the new one connects
        self._drive()

    async def stop(self, timeout: float = 2.0) -> None:
        """Say goodbye (status offline) and close, waiting at most ``timeout`` s for it."""
        if self.on_feed in self.hub.listeners:
            self.hub.listeners.remove(self.on_feed)
        if self.connected:  # written before the disconnect, in order
            self.client.publish(
                self.topics["status"],
                self._status_payload(online=False),
                qos=LATEST_QOS,
                retain=True,
            )
        self.stopping = True
        if self._timer is not None:
            self._timer.cancel()
        if self._state_later is not None:
            self._state_later.cancel()
        if self.driver is not None:
            await self.driver.goodbye(timeout)

    # -- paho's callbacks (on the loop, inside paho's loop_read) ---------------------

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any,
                    properties: Any) -> None:  # fmt: skip
        if reason.is_failure:
            log.warning("MQTT broker refused board %s: %s", self.board_id, reason)
            return
        self.connected = True
        log.info("MQTT: board %s connected to %s", self.board_id, self.mqtt.host)
        # after paho's own handling of the CONNACK, not inside it
        self._loop().call_soon(self._publish_latest)
        self._loop().call_soon(self._health_changed)

    def _on_disconnect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any,
                       properties: Any) -> None:  # fmt: skip
        self.connected = False
        if self.stopping:  # the daemon stops: not a warning at every shutdown
            log.info("MQTT: board %s disconnected from %s", self.board_id, self.mqtt.host)
            return
        self._loop().call_soon(self._health_changed)
        log.warning("MQTT: board %s lost the broker (%s); buffering", self.board_id, reason)

    def _on_publish(self, client: mqtt.Client, userdata: Any, mid: int, reason: Any,
                    properties: Any) -> None:  # fmt: skip
        self.unacked.pop(mid, None)
        if self.waiting:
            self._loop().call_soon(self._flush)

    # -- the event loop -------------------------------------------------------------

    def on_feed(
        self,
        board_id: str,
        seq: int,
        event: dict[str, Any],
        state: Callable[[], dict[str, Any]],
    ) -> None:
        if board_id != self.board_id:
            return
        if not event.get("type", "").startswith("_"):
            envelope = {
                "origin": self.origin,
                "seq": seq,
                "prev": self.last_seq,
                "board": board_id,
                "event": event,
            }
            self.last_seq = seq
            arbiter = event.get("arbiter") is True
            if arbiter and (self.board_key or self.mqtt.arbiter_key):
                # the game the arbiter's decision is about (a relay holding a
                # restart aside applies it to the game the arbiter meant)
                record = self.hub.boards[board_id].record
                envelope["game"] = arbitersig.game_key(
                    record.start_fen, [move.uci for move in record.moves]
                )
            payload = self._sign("events", strictjson.dumps(envelope, separators=(",", ":")))
            if arbiter and self.mqtt.arbiter_key and not self.board_key:
                payload = self._arbiter_signed(payload, self.mqtt.arbiter_key)
            self._send_event(payload)
        elif self.connected:  # the link or battery changed
            self.client.publish(
                self.topics["status"],
                self._status_payload(online=True),
                qos=LATEST_QOS,
                retain=True,
            )
        if self.connected and not (event.get("type") == "clock" and self._state_soon()):
            self._publish_state(state())

    def _state_soon(self) -> bool:
        """Whether a clock report's state waits: the newest goes by a timer,
        ``STATE_EVERY`` after the last one published (else it goes now)."""
        wait = self._state_at + STATE_EVERY - self.clock()
        loop = self.hub._loop
        if wait <= 0 or loop is None:
            return False
        if self._state_later is None:
            self._state_later = loop.call_later(wait, self._publish_state_later)
        return True

    def _publish_state_later(self) -> None:
        self._state_later = None
        if not self.stopping and self.board_id in self.hub.boards:
            self._publish_state(self.hub.page_state(self.board_id))

    def _sign(self, leaf: str, text: str) -> bytes:
        """A message for topic ``leaf``, signed with the board's key when it has
        one (``boardkeys``: over the topic and these very bytes)."""
        payload = text.encode()
        if self.board_key is None:
            return payload
        return boardkeys.sign(self.board_key, self.topics[leaf], payload)

    @staticmethod
    def _arbiter_signed(payload: bytes, key: str) -> bytes:
        """An arbiter's event signed with the deprecated hall-wide arbiter key
        (``arbitersig``), as the relay will read it: from the JSON as sent
        (strictjson made NaN null)."""
        envelope = json.loads(payload)
        envelope["sig"] = arbitersig.sign(envelope, key)
        return json.dumps(envelope, separators=(",", ":"), allow_nan=False).encode()

    def _send_event(self, payload: bytes) -> None:
        if self.waiting:
            self._flush()
        if not self.waiting and self.connected and self._hand_to_paho(payload):
            return
        self.waiting.append(payload)
        while len(self.waiting) > max(1, self.mqtt.buffer):
            self.waiting.popleft()
            self.lost += 1
            log.error("MQTT buffer full for board %s: an event was lost", self.board_id)

    def _hand_to_paho(self, payload: bytes) -> bool:
        info = self.client.publish(self.topics["events"], payload, qos=1)
        if info.rc in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
            self.published += 1
            self.unacked[info.mid] = (self.clock(), payload)
            return True  # paho holds it until the broker acknowledges it
        return False

    def _flush(self) -> None:
        """Hand the waiting events to paho in order, while connected (see the
        module's docstring: paho reorders what it is given before the CONNACK)."""
        while self.waiting and self.connected and self._hand_to_paho(self.waiting[0]):
            self.waiting.popleft()

    def _publish_state(self, state: dict[str, Any]) -> None:
        """The retained state, and the PGN when it changed. Nothing while not
        connected (nor made: a state is signed whole, up to a megabyte):
        ``_publish_latest`` publishes the newest on connect, the latest state wins."""
        if not self.connected:
            return
        if self._state_later is not None:  # this one is newer
            self._state_later.cancel()
            self._state_later = None
        self._state_at = self.clock()
        self.client.publish(
            self.topics["state"], self.state_message(state), qos=LATEST_QOS, retain=True
        )
        # kept by the hub until the game changes (``Hub.board_pgn``, made once for
        # /game.pgn too): a clock tick hands back the same text, not published again
        pgn = self.hub.board_pgn(self.board_id)
        if pgn != self._pgn_sent:
            self._pgn_sent = pgn
            self.client.publish(self.topics["pgn"], pgn.encode(), qos=LATEST_QOS, retain=True)

    def state_message(self, state: dict[str, Any] | None = None) -> bytes:
        """The retained state message as this publisher sends it (signed when the
        board has a key): of ``state`` (a ``page_state``), by default the board's
        state now. What a never-connected publisher would send, for a test."""
        if state is None:
            state = self.hub.page_state(self.board_id)
        if state and "origin" not in state:
            # {**state, "origin": ...} as dumps() writes it, the state's text made once
            # for the page's viewers and here (``Hub.state_text``)
            origin = strictjson.dumps(self.origin)
            text = f'{self.hub.state_text(state)[:-1]},"origin":{origin}}}'
        else:
            text = strictjson.dumps({**state, "origin": self.origin})
        return self._sign("state", text)

    def _publish_latest(self) -> None:
        self.client.publish(
            self.topics["status"], self._status_payload(online=True), qos=LATEST_QOS, retain=True
        )
        if self.board_id in self.hub.boards:
            self._pgn_sent = None  # published again, whatever it was
            self._publish_state(self.hub.page_state(self.board_id))
        self._flush()

    def _status_payload(self, *, online: bool) -> bytes:
        """A status message, numbered: ``n`` counts this run's statuses (the last
        will's is fixed when its client is made) and ``seq`` is the hub's numbering
        then, so a relay tells a replayed status from a new one (``relay``)."""
        status = self.hub.boards[self.board_id].status if self.board_id in self.hub.boards else None
        self.statuses += 1
        text = strictjson.dumps(
            {
                "online": online,
                "origin": self.origin,
                "board": self.board_id,
                "connected": status.connected if status else None,
                "battery": status.battery if status else None,
                "n": self.statuses,
                "seq": self.hub.seq,
            },
            separators=(",", ":"),
        )
        return self._sign("status", text)
