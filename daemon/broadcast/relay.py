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

Every message is checked first (``relaycheck``: schema, sizes, the board it
names, a state's moves legal); a bad one is dropped and counted per board and
reason, shown in ``/relay.json``, and never reaches a record. The broker's login,
TLS and ACL (``config/mosquitto/``) decide who may write a board's topics. With
the hall's key (``boardkeys``) a message counts only when signed with its board's
own key, so the login alone forges nothing; without it, the rules
(``relayrules``) keep a login to what a board could do, and hold what only the
arbiter may (a restart, a deep takeback) for the relay's console.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as mqtt
from aiohttp import web

from daemon.broadcast import arbitersig, boardkeys
from daemon.broadcast.hub import BOARD_ID, Hub
from daemon.broadcast.lichess import RELAY_SETTLE, LichessPusher
from daemon.broadcast.listen import WebServer
from daemon.broadcast.mqtt import new_client, topic_level
from daemon.broadcast.relaycheck import (
    MAX_EVENT_BYTES,
    MAX_STATE_BYTES,
    MAX_STATUS_BYTES,
    Rejected,
    check_envelope,
    check_state,
    check_status,
)
from daemon.broadcast.relayrules import (
    EXTRA_TAGS,
    GameRules,
    HeldForArbiter,
    canonical_state,
)
from daemon.broadcast.settings import BroadcastSettings, LichessSettings, MqttSettings
from daemon.broadcast.web import GUARD_KEY, build_app, json_response
from daemon.game.record import GameHeaders
from drivers.records import Record

log = logging.getLogger(__name__)

#: Events held per board after a hole, waiting for the missing ones or a state.
MAX_HELD = 10000
#: How far one event's ``seq`` may be after its ``prev``: the daemon numbers all
#: its boards with one counter, so a board's step is the events of the others in
#: between; a forged 2**53 would make every later real event look a duplicate.
MAX_SEQ_STEP = 1_000_000
#: A run's numbering starts at the milliseconds since 2020 (``hub``): no real
#: ``seq`` is beyond that of now by more than a day's events.
EPOCH_2020 = 1577836800.0


def seq_bound() -> int:
    return int((time.time() - EPOCH_2020) * 1000) + 86_400_000


#: Seqs remembered per board (applied, and what followed each), to tell a
#: duplicate from a fork; far more than the events between two states.
MEMORY = 4096
#: The largest message of each kind that is worth checking a signature of (a larger
#: one is refused for its size, ``relaycheck``).
LIMITS = {"events": MAX_EVENT_BYTES, "state": MAX_STATE_BYTES, "status": MAX_STATUS_BYTES}
#: Why a message is dropped when the relay has the hall's key.
UNSIGNED = "not signed with the board's key (broadcast.mqtt.board_key_file)"
MISSIGNED = (
    "the board's signature does not match (its board_key_file is not this hall's key "
    "for this board and tournament)"
)


def _digest(event: dict[str, Any]) -> str:
    """What one event said (its ``arbiter`` mark aside: dropped when unsigned)."""
    text = json.dumps({k: v for k, v in event.items() if k != "arbiter"}, sort_keys=True,
                      default=str)  # fmt: skip
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(eq=False, repr=False)
class BoardSync(Record):
    """How far one board's record is known to be complete, for one origin.

    ``last`` is the ``seq`` of the last event folded into the record (or of the
    state loaded), None while the relay holds no base for this origin yet.
    ``held`` maps an event's ``prev`` to ``(seq, event, signed)`` for events after
    a hole. ``followed`` remembers, for each recent seq, the seq taken right after
    it: the daemon numbers a board's events as one chain, so a second event naming
    the same ``prev`` is a fork (one of them forged, with the board's public origin).
    ``resync`` is set on a fork: the record waits for a state whose ``seq`` is one of
    the events held since, i.e. the daemon's own state after its own event.
    """

    origin: str
    last: int | None = None
    held: dict[int, tuple[int, dict[str, Any], str | None]] = field(default_factory=dict)
    followed: dict[int, int] = field(default_factory=dict)
    preceded: dict[int, int | None] = field(default_factory=dict)  # seq -> the one before
    digests: dict[int, str] = field(default_factory=dict)  # seq -> the event taken under it
    top: int = 0  # the highest seq taken for this origin
    resync: bool = False

    def hold(self, prev: int, seq: int, event: dict[str, Any], signed: str | None = None) -> None:
        self.held[prev] = (seq, event, signed)
        while len(self.held) > MAX_HELD:
            del self.held[min(self.held)]
            log.error("relay: too many events after a hole; the oldest was dropped")

    def took(self, seq: int, event: dict[str, Any] | None = None) -> None:
        """``seq`` (an ``event``, or without one a state) is now the last one folded
        into the record. Only events chain: a state may come before the events it
        covers (retained, on a reconnect) and is no fork of them."""
        if self.last != seq:
            if self.last is not None and event is not None:
                self.followed[self.last] = seq
            self.preceded[seq] = self.last
        if event is not None:
            self.digests[seq] = _digest(event)
        for memory in (self.followed, self.preceded, self.digests):
            while len(memory) > MEMORY:
                del memory[next(iter(memory))]
        self.last, self.top = seq, max(self.top, seq)

    def taken(self, seq: int, event: dict[str, Any]) -> bool:
        """``seq`` was folded into the record already, as this very event (a
        duplicate; another event under a seq taken is a fork, ``forks``)."""
        known = self.digests.get(seq)
        same = known is None or known == _digest(event)
        return same and (seq == self.last or seq in self.preceded)

    def forks(self, seq: int, prev: int | None, event: dict[str, Any]) -> bool:
        """Another event than this one was taken under ``seq``, or right after
        ``prev``: the daemon numbers a board's events as one chain, so one of the
        two was forged."""
        known = self.digests.get(seq)
        if known is not None and known != _digest(event):
            return True
        return prev is not None and self.followed.get(prev, seq) != seq

    def forget_through(self, seq: int) -> None:
        """Drop what a state up to ``seq`` already covers."""
        self.held = {p: held for p, held in self.held.items() if held[0] > seq}

    def next_ready(self) -> tuple[int, dict[str, Any], str | None] | None:
        """The held event that follows the last one applied, if it came."""
        if self.last is None:
            return None
        return self.held.pop(self.last, None)

    def holds_seq(self, seq: int) -> bool:
        return any(held[0] == seq for held in self.held.values())


@dataclass(eq=False, repr=False)
class HeldRestart(Record):
    """A new game a board started over its finished one without the arbiter (and,
    without the hall's key, over one with moves, or a deep takeback): its events
    and latest state are checked and kept here, never shown, until the arbiter
    starts a game (a signed ``game_start``) or shows it (the relay's console)."""

    rules: GameRules
    events: int = 0
    since: float = field(default_factory=time.time)

    def status(self) -> dict[str, Any]:
        return {"plies": len(self.rules.board.move_stack), "events": self.events,
                "result": self.rules.result}  # fmt: skip


def _game_key(rules: GameRules) -> str:
    """The name a signed event gives the game it is about (``arbitersig.game_key``)."""
    return arbitersig.game_key(rules.board.root().fen(), [m.uci() for m in rules.board.move_stack])


class Relay:
    """One round of a hall, from the broker to one web app (see the module)."""

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
        mqtt_settings: MqttSettings | None = None,
        lichess: LichessSettings | None = None,
        token: str | None = None,
        hall_key: str | None = None,
    ) -> None:
        self.broker, self.broker_port = broker, broker_port
        self.event = event or tournament
        self.round = round_
        self.settings = BroadcastSettings(
            address=address, port=port, boards=[], event=self.event, round=round_, token=token
        )
        self.hub = Hub(self.settings)
        # the relay's console: "New game" shows a board's new game held for the arbiter
        self.hub.show_held_game = self.show_held_game  # type: ignore[attr-defined]
        self.hub.sort_boards = True
        self.base = "/".join(topic_level(p) for p in (prefix, tournament, round_))
        self.client = new_client(
            client_id or f"dgt-bridge-relay-{topic_level(tournament)}-{topic_level(round_)}",
            mqtt_settings,
            clean_session=False,
        )
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_connect_fail = self._on_connect_fail
        self.failed_connects = 0  # attempts in a row that found no broker
        self.sync: dict[str, BoardSync] = {}
        self.games: dict[str, GameRules] = {}  # what the relay believes of each game
        self.live: set[tuple[str, str]] = set()  # (board, origin) heard live this round
        self.pending: dict[str, dict[str, Any]] = {}  # a retained state not yet live
        #: a board's new game over its finished one, not the arbiter's: held, not shown
        self.restarts: dict[str, HeldRestart] = {}
        #: the hall's key (``boardkeys``): with it every message must be signed with
        #: its board's key, and the arbiter's decisions are the signed ones marked so
        self.hall_key = hall_key
        self.tournament = topic_level(tournament)
        self._board_keys: dict[str, str] = {}
        #: the deprecated hall-wide arbiter key (``arbitersig``), without a hall key
        legacy = mqtt_settings.arbiter_key if mqtt_settings else None
        self.arbiter_key = None if hall_key else legacy
        #: (board, origin) -> the highest status number taken, and whether a last
        #: will (numbered when its client was made) was taken since
        self.statuses: dict[tuple[str, str], tuple[int, bool]] = {}
        self.duplicates = 0
        self.connected = False
        self.refusal = ""  # why the broker refused us, if it did
        self.rejected: Counter[tuple[str, str]] = Counter()  # (board, reason) -> count
        self._lock = threading.RLock()  # _apply_held counts a refusal while it holds it
        self.port: int | None = None
        self.urls: list[str] = []  # every URL the page is reached at
        self._server: WebServer | None = None
        # the first push once every running board has been heard (lichess.RELAY_SETTLE)
        self.lichess = LichessPusher(self.hub, lichess, settle=RELAY_SETTLE) if lichess else None

    async def start(self) -> None:
        self.hub.bind_loop(asyncio.get_running_loop())
        if self.lichess is not None:
            self.lichess.start()  # ValueError: the settings cannot push
        app = build_app(self.hub)
        app.router.add_get("/relay.json", self._status_view)
        self._server = WebServer(app, self.settings, GUARD_KEY)
        await self._server.start()  # the daemon's limits, time-outs and headers
        self.port, self.urls = self._server.port, self._server.urls
        self.client.connect_async(self.broker, self.broker_port, keepalive=30)
        self.client.loop_start()

    async def stop(self) -> None:
        for subscriber in list(self.hub.subscribers):
            subscriber.drop()
        await asyncio.to_thread(self._stop_client)
        if self.lichess is not None:
            await self.lichess.stop()
        if self._server is not None:
            await self._server.stop()
            self._server = None

    def _stop_client(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    # -- the relay's own status ----------------------------------------------------

    def status(self) -> dict[str, Any]:
        """What ``/relay.json`` shows: the broker link, and per board how far its
        record is complete and how many messages were dropped, and why."""
        with self._lock:
            rejected = dict(self.rejected)
            boards: dict[str, dict[str, Any]] = {
                board: {
                    "origin": sync.origin,
                    "last_seq": sync.last,
                    "held": len(sync.held),
                    "resync": sync.resync,
                }
                for board, sync in self.sync.items()
            }
            for board, restart in self.restarts.items():
                boards.setdefault(board, {"origin": None, "last_seq": None, "held": 0})[
                    "restart_held"
                ] = restart.status()
        for (board, reason), count in rejected.items():
            entry = boards.setdefault(board, {"origin": None, "last_seq": None, "held": 0})
            entry.setdefault("rejected", {})[reason] = count
        return {
            "broker": f"{self.broker}:{self.broker_port}",
            "connected": self.connected,
            "signatures": self.signatures,
            "refused": self.refusal or None,
            "topics": f"{self.base}/+/(state|events|status)",
            "event": self.event,
            "round": self.round,
            "rejected": sum(rejected.values()),
            "duplicates": self.duplicates,
            "boards": dict(sorted(boards.items())),
            "lichess": self.lichess.status() if self.lichess else None,
        }

    @property
    def signatures(self) -> str:
        """What the relay authenticates, for ``/relay.json``."""
        if self.hall_key:
            return "board keys"
        return "arbiter key (deprecated)" if self.arbiter_key else "none"

    async def _status_view(self, request: web.Request) -> web.Response:
        return json_response(self.status(), headers={"Cache-Control": "no-cache"})

    def _reject(self, board: str, reason: str) -> None:
        with self._lock:
            self.rejected[(board, reason)] += 1
            count = self.rejected[(board, reason)]
        if count == 1 or count % 100 == 0:  # said once, then every hundredth time
            log.warning("relay: dropped a message for board %s (%s; %d so far)",
                        board, reason, count)  # fmt: skip

    # -- paho's thread -------------------------------------------------------------

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any,
                    properties: Any) -> None:  # fmt: skip
        if reason.is_failure:
            self.refusal = str(reason)
            log.warning("MQTT broker refused the relay: %s", reason)
            self.hub.set_source_problem(f"the MQTT broker refused the relay: {reason}")
            return
        if self.failed_connects:
            log.warning(
                "relay: connected to the MQTT broker at %s:%s", self.broker, self.broker_port
            )
        self.connected, self.refusal, self.failed_connects = True, "", 0
        self.hub.set_source_problem(None)
        client.subscribe([(f"{self.base}/+/{leaf}", 1) for leaf in ("state", "events", "status")])

    def _on_connect_fail(self, client: mqtt.Client, userdata: Any) -> None:
        """No broker answered (paho retries by itself): said at once, then once a
        minute or so, so that a relay showing nothing says why."""
        self.failed_connects += 1
        self.hub.set_source_problem(
            f"the MQTT broker at {self.broker}:{self.broker_port} cannot be reached; still trying"
        )
        if self.failed_connects == 1 or self.failed_connects % 30 == 0:
            log.warning(
                "relay: the MQTT broker at %s:%s cannot be reached; still trying (%d attempts)",
                self.broker,
                self.broker_port,
                self.failed_connects,
            )

    def _on_disconnect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any,
                       properties: Any) -> None:  # fmt: skip
        self.connected = False
        self.hub.set_source_problem(
            f"lost the MQTT broker at {self.broker}:{self.broker_port}; reconnecting"
        )

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        if not message.topic.startswith(self.base + "/"):
            return
        board, _, leaf = message.topic[len(self.base) + 1 :].partition("/")
        if not BOARD_ID.match(board) or leaf not in ("state", "events", "status"):
            self._reject(board if BOARD_ID.match(board) else "?", "not a board's topic")
            return
        payload = bytes(message.payload)
        try:
            if self.hall_key is not None and len(payload) <= LIMITS[leaf]:
                self._authenticate(board, message.topic, payload)
            if leaf == "events":
                origin, seq, prev, event = check_envelope(payload, board)
                self._check_seq(seq, prev)
                self._went_live(board, origin)
                signed = self._arbiter_signed(payload, board, event)
                self._on_events(board, origin, seq, prev, event, signed)
            elif leaf == "state":
                state = check_state(payload, board)
                self._check_seq(int(state.get("seq") or 0), None)
                origin = str(state.get("origin", ""))
                if message.retain and (board, origin) not in self.live:
                    # from before this relay heard the board: it counts only once
                    # the board says it is live in this round (a planted game)
                    with self._lock:
                        self.pending[board] = state
                    return
                self._went_live(board, origin)
                self._on_state(board, state)
            else:
                status = check_status(payload, board)
                self._check_status_order(board, status)
                if not message.retain:
                    self._went_live(board, str(status.get("origin", "")))
                self._on_status(board, status)
        except Rejected as exc:
            self._reject(board, str(exc))
        except Exception:  # a check missed something: drop it, keep the relay up
            log.exception("relay: a message for board %s could not be applied", board)
            self._reject(board, "could not be applied")

    def _authenticate(self, board: str, topic: str, payload: bytes) -> None:
        """``Rejected`` unless the message is signed with its board's key, derived
        from the hall's (``boardkeys``), for the very topic it came on."""
        key = self._board_keys.get(board)
        if key is None:
            assert self.hall_key is not None
            key = self._board_keys[board] = boardkeys.board_key(self.hall_key, self.tournament,
                                                                board)  # fmt: skip
        tail = boardkeys.signature(payload)
        if tail is None:
            raise Rejected(UNSIGNED)
        if not boardkeys.verify(key, topic, payload, tail):
            raise Rejected(MISSIGNED)

    def _arbiter_signed(self, payload: bytes, board: str, event: dict[str, Any]) -> str | None:
        """An arbiter's event, authenticated: signed with its board's key (the
        relay has the hall's key), or with the deprecated key the relay shares with
        every daemon (``arbitersig``). It may change a result or start a game over a
        finished one. Returns the game it names (``arbitersig.game_key``; "" for
        none), or None when it is not the arbiter's."""
        if event.get("arbiter") is not True:
            return None
        envelope = json.loads(payload)
        if self.hall_key is not None:  # the whole message was authenticated
            return str(envelope.get("game") or "")
        if "sig" not in envelope:
            return None  # a daemon without the key: taken as the board's own
        if envelope.get("board") == board and arbitersig.signed(envelope, self.arbiter_key):
            return str(envelope.get("game") or "")
        self._reject(board, "the arbiter's signature does not match (--arbiter-key-file "
                            "and broadcast.mqtt.arbiter_key must be the same)")  # fmt: skip
        return None

    @staticmethod
    def _check_seq(seq: int, prev: int | None) -> None:
        if seq > seq_bound():
            raise Rejected("seq is beyond any run's numbering")
        if prev and seq - prev > MAX_SEQ_STEP:
            raise Rejected("seq jumps too far after prev")

    def _check_status_order(self, board: str, status: dict[str, Any]) -> None:
        """``Rejected`` for a status older than one taken (a replay, maybe of a
        signed one): of an older run, or numbered (``n``) at or before the last one
        of its run. A board's last will is numbered when its client is made, so an
        offline status may come numbered lower; an online one after it must be newer."""
        origin, n, seq = str(status.get("origin", "")), status.get("n"), status.get("seq")
        with self._lock:
            if isinstance(seq, int) and self._older_run(self.sync.get(board), origin, seq):
                raise Rejected("a status of an older run")
            if not isinstance(n, int) or isinstance(n, bool):
                return  # a daemon that does not number them
            top, will_taken = self.statuses.get((board, origin), (0, False))
            if n > top:
                self.statuses[(board, origin)] = (n, False)
            elif status.get("online") is False:
                self.statuses[(board, origin)] = (top, True)
            elif n < top or will_taken:
                raise Rejected("a status older than one taken (a replay)")

    def _went_live(self, board: str, origin: str) -> None:
        """A message the board sent now (not a retained one): a retained state of
        that run, held back, counts from now on."""
        with self._lock:
            if (board, origin) in self.live:
                return
            self.live.add((board, origin))
            pending = self.pending.get(board)
            if pending is None or str(pending.get("origin", "")) != origin:
                return
            del self.pending[board]
        self._on_state(board, pending)

    def _older_run(self, sync: BoardSync | None, origin: str, seq: int) -> bool:
        """A message of another run than the one shown, numbered before what is
        shown: an older run's (a replay), never to replace the newer one."""
        return sync is not None and sync.origin != origin and 0 < seq <= sync.top

    def _on_state(self, board: str, state: dict[str, Any]) -> None:
        origin, seq = str(state.get("origin", "")), int(state.get("seq") or 0)
        with self._lock:
            sync = self.sync.get(board)
            if self._older_run(sync, origin, seq):
                raise Rejected("a state of an older run")
            same_run = sync is not None and sync.origin == origin
            # the daemon's own state after the arbiter's signed event, held after a
            # hole or a fork: the game as the arbiter left it
            arbiter = (
                same_run
                and sync is not None
                and any(held[2] is not None and held[0] <= seq for held in sync.held.values())
            )
            if same_run and sync is not None and sync.resync:
                if not sync.holds_seq(seq):
                    # after a fork only the daemon's own state, the one after an
                    # event held since, is believed
                    raise Rejected("a state not after an event held since a fork")
            elif same_run and sync is not None and sync.last is not None and sync.last >= seq:
                # The record is complete up to a later event already; but the names
                # (set at the board, or changed for the next game) come with states only.
                if sync.last == seq and board not in self.restarts:
                    headers = self._house_headers(board, state)["headers"]
                    self.hub._call(self._take_headers, board, headers)
                return
            # only now: a state that is loaded must be a real game, by the rules
            rules = GameRules.from_state(state)
            shown = self.games.get(board)
            trusted = self.hall_key is not None
            held_why = None if arbiter or shown is None else shown.held_why(rules, trusted=trusted)
            if arbiter or (held_why is None and shown is not None and shown.result is None):
                # the daemon's game, as the arbiter left it; or the board's own game
                # going on (a restart held over it was not the board's, or is over)
                self.restarts.pop(board, None)
            left_out: list[str] = []
            if held_why is None:
                canonical, left_out = canonical_state(state, rules)
                canonical = self._house_headers(board, canonical)
            if sync is None or sync.origin != origin:
                sync = self.sync[board] = BoardSync(origin)
            sync.took(seq)
            sync.resync = False
            sync.forget_through(seq)
            new = held_why is not None and board not in self.restarts
            if held_why is not None:
                # another game than the one shown: the board's own restart (or a
                # login's forgery, a replay to another result), kept for the arbiter
                self.restarts[board] = HeldRestart(rules)
            else:
                self.games[board] = rules
                self.hub.load_state(board, canonical)
            self._apply_held(board, sync)
        if held_why is not None and new:
            self._reject(board, held_why)
        for tag in left_out:
            self._reject(board, f"the tag {tag[:40]!r} is not one a board may set")

    def show_held_game(self, board: str) -> bool:
        """The arbiter, on the relay's console (``/control/new_game`` with the
        relay's token): the board's new game held over its finished one is shown
        from now on. False when none is held."""
        with self._lock:
            restart = self.restarts.pop(board, None)
            if restart is None or board not in self.hub.boards:
                return False
            rules = restart.rules
            record = self.hub.boards[board].record
            state = {
                "origin": self.sync[board].origin if board in self.sync else None,
                "seq": self.sync[board].last if board in self.sync else 0,
                "headers": record.headers.to_dict(),
                "moves": [{"t": 0.0, "clock": None} for _ in rules.board.move_stack],
            }
            canonical, _ = canonical_state(state, rules)
            self.games[board] = rules
            self.hub.load_state(board, self._house_headers(board, canonical))
        return True

    def _house_headers(self, board: str, state: dict[str, Any]) -> dict[str, Any]:
        """The state with the headers the relay owns: one Event and Round for the
        whole round (a board's own daemon may say "?" or last year's name), and
        the Board tag from the topic the state came on."""
        headers = dict(state.get("headers") or {})
        extra = {k: v for k, v in (headers.get("extra") or {}).items() if k in EXTRA_TAGS}
        extra["Board"] = board
        headers.update(event=self.event, round=self.round, extra=extra)
        return {**state, "headers": headers}

    def _take_headers(self, board: str, headers: dict[str, Any]) -> None:
        """On the loop: the board's names from a state whose moves we hold already."""
        if board not in self.hub.boards:
            return
        record = self.hub.boards[board].record
        names = GameHeaders.from_dict(headers)
        if names != record.headers:  # set at the board during the round: redraw
            record.headers = names
            self.hub.changed(board)

    def _on_events(
        self,
        board: str,
        origin: str,
        seq: int,
        prev: int | None,
        event: dict[str, Any],
        signed: str | None = None,
    ) -> None:
        with self._lock:
            sync = self.sync.get(board)
            if self._older_run(sync, origin, seq):
                raise Rejected("an event of an older run")
            if sync is None or sync.origin != origin:
                sync = self.sync[board] = BoardSync(origin)
            if sync.last is None and not sync.resync and prev in (0, None):
                # The first event of a daemon's run (or from a publisher that does
                # not say): it continues what we show. Any later one waits for its state.
                sync.last = 0
            if sync.taken(seq, event):
                self.duplicates += 1
                return
            stale = sync.last is not None and seq < sync.last
            if sync.forks(seq, prev, event) or (stale and self._beyond(board, event)):
                # Two events name the same one before them, or a move the game
                # does not hold yet comes numbered before what was taken: one of
                # them was forged (the origin is public), numbered far ahead.
                # Whichever was taken, the daemon's next state after its own event
                # says where the record stands: wait for it, so that a forged seq
                # cannot make every real event "old".
                sync.last, sync.resync = None, True
                sync.hold(prev if prev is not None else seq, seq, event, signed)
                raise Rejected("two events follow the same one (one forged?): "
                               "waiting for the board's next state")  # fmt: skip
            if stale:
                self.duplicates += 1  # covered by a state loaded already
                return
            if sync.last is None or (prev is not None and prev != sync.last):
                sync.hold(prev if prev is not None else seq, seq, event, signed)
                return
            held: HeldForArbiter | None = None
            try:
                # Rejected: nothing moves (the board's state after it says where
                # the record stands; a login's, numbered as the board's next event,
                # leaves that number to the board's own)
                self._apply(board, sync, seq, event, signed)
            except HeldForArbiter as exc:
                held = exc  # taken aside: the chain goes on after it
            self._apply_held(board, sync)
            if held is not None:
                raise held

    def _beyond(self, board: str, event: dict[str, Any]) -> bool:
        """A move after the last one of the game held: not covered by any state
        taken (a state covering it would hold it)."""
        restart = self.restarts.get(board)
        rules = restart.rules if restart is not None else self.games.get(board)
        ply = event.get("ply")
        return (
            event.get("type") == "move" and rules is not None and isinstance(ply, int)
            and not event.get("correction") and ply > len(rules.board.move_stack)
        )  # fmt: skip

    def _game(self, board: str) -> GameRules:
        if board not in self.games:
            self.games[board] = GameRules()
        return self.games[board]

    def _apply(
        self, board: str, sync: BoardSync, seq: int, event: dict[str, Any], signed: str | None
    ) -> None:
        """One event that follows the record, by the rules of the game held (or of
        a restart held for the arbiter); ``Rejected`` when they refuse it.

        ``signed``: the arbiter's, about the game it names. While a restart is
        held, the arbiter's new game shows at once, and the arbiter's event about
        the game shown (a result corrected) is applied to it, not to the restart."""
        if signed is None:
            event.pop("arbiter", None)
        kind = event.get("type")
        restart = self.restarts.get(board)
        shown = self._game(board)
        to_restart = restart is not None and not (
            signed is not None and (kind == "game_start" or signed == _game_key(shown))
        )
        if restart is not None and to_restart:
            restart.rules.take(event, signed=signed is not None or kind == "game_start",
                               trusted=True)  # fmt: skip
            restart.events += 1
            sync.took(seq, event)
            return
        try:
            shown.take(event, signed=signed is not None, trusted=self.hall_key is not None)
        except HeldForArbiter as held:
            restart = self.restarts[board] = HeldRestart(held.held)
            restart.events = 1
            sync.took(seq, event)
            raise
        if kind == "game_start":
            self.restarts.pop(board, None)
        sync.took(seq, event)
        self.hub.publish(board, event)

    def _apply_held(self, board: str, sync: BoardSync) -> None:
        while (ready := sync.next_ready()) is not None:
            seq, event, signed = ready
            try:
                self._apply(board, sync, seq, event, signed)
            except Rejected as exc:
                sync.took(seq, event)  # refused, but the chain goes on after it
                self._reject(board, str(exc))

    def _on_status(self, board: str, status: dict[str, Any]) -> None:
        online = bool(status.get("online"))
        connected = status.get("connected")
        self.hub.set_status(
            board,
            connected=bool(online and connected is not False),
            battery=status.get("battery"),
            detail="" if online else "board offline",
        )
