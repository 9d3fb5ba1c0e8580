"""The hub: one place the feed enters, many viewers it leaves by.

The daemon calls ``publish`` for every feed event. The hub numbers it (the
sequence number is the SSE event id), folds it into that board's
``GameRecord`` (a board the daemon ``attach``-ed is read from the daemon's own
record of it instead, never folded twice), keeps it in a bounded history for
viewers that resume, and
offers it to every subscriber: the web app's viewers have it written at once to
their connection (``viewers.TransportSink``), others get a bounded queue.
Offering never waits: a viewer too far behind is dropped on the spot (it
reconnects and resumes with ``Last-Event-ID``), so a thousand viewers or one
stalled phone cannot slow the rules core. Listeners (the MQTT publisher) are
called synchronously and must not block either.

Messages are serialised once per event, not once per viewer, and each wire
format (SSE frame, HTTP chunk, WebSocket frame) is encoded once per message. The
web app's viewers (those with a sink) get the events of a moment together:
``publish`` keeps them, and each viewer is written once for all of them, the frames
joined once for all viewers of the same boards and format: at the event loop's next
turn when the last write-out is ``WRITE_EVERY`` old, else ``WRITE_EVERY`` after it. A
hall's 26 boards make some 40 events a second, clock reports mostly, and a write to
each of 100 viewers for each of them was half of a Pi 4's core (issue 28); with the
clocks kept, a write-out for each move and press was still some 15 a second,
1,500 socket writes a second for 100 viewers, the largest item of the hall's
syscalls. A viewer so waits at most a tenth of a second for any event, and a board
with a quiet hall around it has its move at once. Every message is still the
viewer's in the feed's order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from daemon.broadcast.movelist import ShownMoves, figurine
from daemon.broadcast.settings import BoardSettings, BroadcastSettings
from daemon.broadcast.strictjson import dumps
from daemon.clock.ticks import ClockTicks
from daemon.game.record import GameHeaders, GameRecord, today_pgn_date
from drivers.records import Record

log = logging.getLogger(__name__)

BOARD_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
CHECK_KEPT_TEXTS = os.environ.get("DGT_BRIDGE_CHECK_KEPT_TEXTS") == "1"
"""Make every board's page state afresh and compare it with the one kept
(``Hub.board_text``): the tests run so, in their daemons too, and fail on a stale one."""
STALE_TEXTS: list[str] = []
"""The boards whose kept page state differed from a fresh one (``CHECK_KEPT_TEXTS``)."""
KEPT_SNAPSHOTS = 8
"""Snapshots kept at most, one for each choice of boards the viewers made (all of
them, the wall's, one phone's board): more choices are made afresh."""
WRITE_EVERY = 0.1
"""Seconds between two write-outs to the web app's viewers, at least: a whole hall
costs at most ten writes a second a viewer, and an event waits at most this long
(a move or a clock report alike: nobody at a screen tells a tenth of a
second, and the page counts the clocks down itself)."""


def _natural_key(board_id: str) -> list[Any]:
    return [(0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in re.split(r"(\d+)", board_id) if part]  # fmt: skip


@dataclass(eq=False, repr=False, slots=True)
class Message(Record):
    """One message for viewers, already serialised; each wire format is encoded
    on first use and then shared by every viewer of that format."""

    kind: str  # "event", "snapshot", "status", "source"
    data: str  # JSON
    seq: int | None = None  # the SSE id: a feed event's, or the number a snapshot is at
    board: str | None = None
    _sse: bytes | None = field(default=None, repr=False, compare=False)
    _chunk: bytes | None = field(default=None, repr=False, compare=False)
    _ws: bytes | None = field(default=None, repr=False, compare=False)

    def sse(self) -> bytes:
        """The Server-Sent Events frame (``id:`` when it has a number, then ``data:``)."""
        if self._sse is None:
            head = f"id: {self.seq}\n" if self.seq is not None else ""
            self._sse = f"{head}data: {self.data}\n\n".encode()
        return self._sse

    def sse_chunk(self) -> bytes:
        """The SSE frame as one HTTP/1.1 chunk (a streamed response's framing)."""
        if self._chunk is None:
            frame = self.sse()
            self._chunk = b"%x\r\n%b\r\n" % (len(frame), frame)
        return self._chunk

    def ws_frame(self) -> bytes:
        """An unmasked, uncompressed WebSocket text frame, as a server sends it."""
        if self._ws is None:
            payload = self.data.encode()
            size = len(payload)
            if size < 126:
                head = bytes((0x81, size))
            elif size < 1 << 16:
                head = bytes((0x81, 126)) + size.to_bytes(2, "big")
            else:
                head = bytes((0x81, 127)) + size.to_bytes(8, "big")
            self._ws = head + payload
        return self._ws


def _with_state(lean: str, state_text: str) -> str:
    """An event's lean message with the board's page state: what ``dumps`` of the
    whole writes (the live feed's, and a resumed page's last event of a board)."""
    return f'{lean[:-1]},"state":{state_text}}}'


def _kept_or_made(kept: str | None, make: Callable[[], str], what: str) -> str:
    """``kept`` if there is one, else ``make()``. With ``CHECK_KEPT_TEXTS`` (the tests)
    made afresh all the same, and a kept one that differs is noted stale (``what``)."""
    if kept is not None and not CHECK_KEPT_TEXTS:
        return kept
    text = make()
    if kept is not None and kept != text:
        STALE_TEXTS.append(what)
        log.error("%s: the kept one was stale", what)
    return text


class _KeptText(NamedTuple):
    """A board's page state text and what it was made of (``Hub.board_text``)."""

    seq: int
    version: int
    record: GameRecord
    text: str


@dataclass(eq=False, repr=False, slots=True)
class _KeptSnapshot(Record):
    """A snapshot message and what it was made of (``Hub.snapshot``)."""

    seq: int
    problem: str | None
    boards: list[str]
    texts: list[str]
    message: Message


class Sink(Protocol):
    """Where a viewer's messages go when they are written at once (see viewers.py)."""

    encode: Callable[[Message], bytes]

    def send(self, message: Message) -> bool: ...

    def send_frames(self, frames: bytes, count: int) -> bool: ...

    def send_backlog(self, messages: list[Message]) -> bool: ...

    def gone(self) -> bool: ...


@dataclass(eq=False, repr=False, slots=True)
class BoardStatus(Record):
    connected: bool | None = None
    battery: float | None = None  # percent, when the board reports it
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"connected": self.connected, "battery": self.battery, "detail": self.detail}


class BoardFeed:
    """One board as the hub keeps it. Its ``record`` is the hub's own (folded from
    what it hears: a relay's boards), or, once ``source`` is set, the record the
    daemon's board holds, as the page may show it (``daemon.boards.pageview``)."""

    __slots__ = ("_record", "clock_by_hand", "clock_ticks", "moves_shown", "pgn", "seq",
                 "settings", "source", "status", "status_at", "text", "touched_at",
                 "version")  # fmt: skip

    def __init__(
        self, settings: BoardSettings, record: GameRecord, status: BoardStatus | None = None
    ) -> None:
        self.settings = settings
        self._record = record
        self.source: Callable[[], GameRecord] | None = None
        self.status = status or BoardStatus()
        self.seq = 0  # the last feed event of this board
        #: why a penalty's time must be put on this board's clock by hand (the daemon's
        #: word, ``Board.penalty_clock``); empty: not said (a relay's board)
        self.clock_by_hand = ""
        #: the clock readings its viewers are sent: those their own count does not foresee
        self.clock_ticks = ClockTicks()
        #: its moves as its page state shows them, each made once (``movelist``)
        self.moves_shown = ShownMoves()
        #: counts the changes to what its page shows that come outside the feed to the
        #: same record (names, link status, a penalty's word, the arbiter's change)
        self.version = 0
        #: the hub's number at its last change outside the feed other than its link
        #: status (added, names, a penalty's word, a loaded state, the arbiter's
        #: change), and at its last status: what a viewer resuming from a number
        #: before them has missed besides events (``Hub.resumed``)
        self.touched_at = -1
        self.status_at = -1
        #: its page state's text as last made (``Hub.board_text``), and what it is of:
        #: seq, version and the record (a new one: a relay's loaded state, the page's
        #: view of a daemon's board once an event is on the card)
        self.text: _KeptText | None = None
        #: its game's PGN as last made (``Hub.board_pgn``), and what it was made of
        self.pgn: tuple[tuple[Any, ...], str] | None = None

    @property
    def record(self) -> GameRecord:
        return self.source() if self.source is not None else self._record

    @record.setter
    def record(self, record: GameRecord) -> None:
        self._record = record

    def kept_text(self, record: GameRecord) -> str | None:
        """Its page state's text as last made, if still of ``record`` as it stands."""
        kept = self.text
        if kept is None or (kept.seq, kept.version) != (self.seq, self.version):
            return None
        return kept.text if kept.record is record else None

    def keep_text(self, record: GameRecord, text: str) -> None:
        """``text`` is its page state's now, made of ``record``."""
        self.text = _KeptText(self.seq, self.version, record, text)


class Subscriber:
    """One viewer. With a ``sink`` (the web app's viewers) each message is written
    at once; without one it waits in a bounded queue for ``get``. Either way a
    viewer too far behind is ``dropped`` on the spot, never waited for."""

    def __init__(
        self,
        boards: frozenset[str] | None,
        with_state: bool,
        limit: int,
        sink: Sink | None = None,
    ) -> None:
        self.boards = boards
        self.with_state = with_state
        self.limit = max(1, limit)
        self.queue: deque[Message] = deque()
        self.sink = sink
        self.dropped = False
        self.closed = False
        self._wakeup = asyncio.Event()
        self.on_drop: Callable[[], None] | None = None
        #: the feed's number when it subscribed: it had every event up to it already
        self.since = 0

    def wants(self, board: str | None) -> bool:
        return board is None or self.boards is None or board in self.boards

    def offer(self, message: Message) -> bool:
        """Deliver or queue without waiting; False (and dropped) when the viewer is
        gone or too far behind."""
        if self.dropped or self.closed:
            return False
        if self.sink is not None:
            return self.offer_frames(self.sink.encode(message), 1)
        if len(self.queue) >= self.limit:
            self.drop()
            return False
        self.queue.append(message)
        self._wakeup.set()
        return True

    def offer_frames(self, frames: bytes, count: int) -> bool:
        """``offer`` for a sink's viewer: ``count`` messages' frames joined."""
        if self.dropped or self.closed or self.sink is None:
            return False
        if self.sink.send_frames(frames, count):
            return True
        self.closed = self.sink.gone()  # it left by itself: not counted as dropped
        self.drop()
        return False

    def drop(self) -> None:
        if self.dropped:
            return
        self.dropped = True
        self.queue.clear()
        self._wakeup.set()
        if self.on_drop is not None:
            try:
                self.on_drop()
            except Exception:
                log.debug("closing a dropped viewer failed", exc_info=True)

    async def wait_dropped(self) -> None:
        """Until the viewer is dropped (it went away, fell behind, or the server stops)."""
        while not self.dropped:
            self._wakeup.clear()
            await self._wakeup.wait()

    async def get(self, timeout: float) -> Message | None:
        """The next queued message, or None after ``timeout`` seconds of silence or a drop."""
        if not self.queue and not self.dropped:
            self._wakeup.clear()
            try:
                async with asyncio.timeout(timeout):
                    await self._wakeup.wait()
            except TimeoutError:
                return None
        if self.dropped or not self.queue:
            return None
        return self.queue.popleft()


Listener = Callable[[str, int, dict[str, Any], Callable[[], dict[str, Any]]], None]
#   (board id, seq, event dict, the board's page state now) -> None; must not block.
#   The state is made on the first call only: a clock report, most of a hall's
#   events, needs none for MQTT most times (``mqtt.STATE_EVERY``), and making it
#   (every move as a dict) was much of a Pi Zero's budget (issue 28).


class Hub:
    """Fans the event feed out to viewers; also the read side of the web app."""

    def __init__(self, settings: BroadcastSettings | None = None, *, start_seq: int = 0) -> None:
        self.settings = settings or BroadcastSettings()
        self.seq = start_seq
        self.boards: dict[str, BoardFeed] = {}
        self.history: deque[tuple[int, str, dict[str, Any], str]] = deque(
            maxlen=max(1, self.settings.history)
        )
        self.subscribers: set[Subscriber] = set()
        self._viewer_came = asyncio.Event()  # for the web app's timer (``a_viewer``)
        self.listeners: list[Listener] = []
        self.dropped_viewers = 0
        self.on_board_added: list[Callable[[str], None]] = []
        self.sort_boards = False  # a relay hears boards in any order: show 1, 2, ..., 10
        #: why the feed itself may be stale (a relay that cannot reach its broker):
        #: every viewer is told, so a page never shows "live" over nothing
        self.source_problem: str | None = None
        self._source_at = -1  # the feed's number when it last changed
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._state_text: tuple[dict[str, Any], str] | None = None  # see state_text
        #: the last snapshot of each choice of boards (``snapshot``)
        self._snapshots: dict[frozenset[str] | None, _KeptSnapshot] = {}
        self._newcomers = asyncio.Lock()  # see newcomer
        #: this turn's events for the sinks' viewers, (seq, board, lean, with state)
        self._outbox: list[tuple[int, str, Message, Message | None]] = []
        self._writing: asyncio.Handle | None = None
        self._written_at = -WRITE_EVERY  # the loop's time of the last write-out
        for board in self.settings.boards:
            if board.id in self.boards:
                raise ValueError(f"board id {board.id!r} appears twice in broadcast.boards")
            if (board.orientation or self.settings.orientation) not in ("white", "black"):
                raise ValueError(f"board {board.id!r}: orientation must be white or black")
            self.add_board(board)

    # -- boards ---------------------------------------------------------------

    def _headers_for(self, board: BoardSettings) -> GameHeaders:
        return GameHeaders(
            event=self.settings.event,
            site=self.settings.site,
            date=self.settings.date or today_pgn_date(),
            round=board.round or self.settings.round,
            white=board.white,
            black=board.black,
            extra={"Board": board.id},
        )

    def add_board(self, board: BoardSettings) -> BoardFeed:
        if not BOARD_ID.match(board.id):
            raise ValueError(
                f"board id {board.id!r}: use 1-32 letters, digits, '-' or '_' "
                "(it appears in URLs and MQTT topics)"
            )
        if board.id in self.boards:
            return self.boards[board.id]
        feed = BoardFeed(settings=board, record=GameRecord(self._headers_for(board)))
        feed.touched_at = self.seq
        self.boards[board.id] = feed
        for callback in list(self.on_board_added):
            callback(board.id)
        return feed

    def board_ids(self) -> list[str]:
        """The boards in display order: as configured, or naturally sorted."""
        if not self.sort_boards:
            return list(self.boards)
        return sorted(self.boards, key=_natural_key)

    def ensure_board(self, board_id: str) -> BoardFeed:
        """The board, created with default settings when a relay first hears of it."""
        if board_id in self.boards:
            return self.boards[board_id]
        return self.add_board(BoardSettings(id=board_id))

    def set_players(self, board_id: str, *, white: str | None = None, black: str | None = None,
                    round: str | None = None) -> None:  # fmt: skip
        """New names for a board (the next game's pairing)."""
        feed = self.boards[board_id]
        self._touch(feed)
        if white is not None:
            feed.settings.white = feed.record.headers.white = white
        if black is not None:
            feed.settings.black = feed.record.headers.black = black
        if round is not None:
            feed.settings.round = feed.record.headers.round = round

    @staticmethod
    def _keep_names(feed: BoardFeed) -> None:
        """The names a ``players`` event put in the record are the board's pairing
        now (its title, and the next game's headers)."""
        headers = feed.record.headers
        feed.settings.white, feed.settings.black = headers.white, headers.black
        feed.settings.round = headers.round

    def note_clock(self, board_id: str, why: str) -> None:
        """Say why this board's clock takes a penalty by hand (the penalty's answer)."""
        if board_id in self.boards:
            feed = self.boards[board_id]
            feed.clock_by_hand = why
            self._touch(feed)

    def _touch(self, feed: BoardFeed) -> None:
        """What the board's page shows changed outside the feed (not its status)."""
        feed.version += 1
        feed.touched_at = self.seq

    def attach(self, board_id: str, source: Callable[[], GameRecord]) -> GameHeaders:
        """The daemon's board: the hub reads its game from ``source`` (the board's one
        record, as the page may show it) and folds none of its own. Returns the
        headers the page names this board's games with (its event, site, round,
        players and board tag), for the daemon's record to carry."""
        feed = self.ensure_board(board_id)
        feed.source = source
        return feed._record.headers

    def orientation(self, board_id: str) -> str:
        board = self.boards[board_id].settings
        return board.orientation or self.settings.orientation

    # -- the write side: called by the daemon ------------------------------------

    def bind_loop(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Remember the event loop the viewers live on (``start`` does this)."""
        self._loop = loop or asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()

    def _call(self, func: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is not None and threading.get_ident() != self._loop_thread:
            if loop.is_closed():
                return
            loop.call_soon_threadsafe(func, *args)
        else:
            func(*args)

    def publish(self, board_id: str, event: dict[str, Any], *, seq: int | None = None) -> None:
        """One feed event of one board; returns at once, whatever the viewers do.

        Safe from any thread (a relay's MQTT thread): it then runs on the loop.
        ``seq`` is for relays that keep the origin's numbering.
        """
        self._call(self._publish_now, board_id, event, seq)

    def _publish_now(self, board_id: str, event: dict[str, Any], seq: int | None) -> None:
        feed = self.ensure_board(board_id)
        self.seq = seq if seq is not None and seq > self.seq else self.seq + 1
        feed.seq = self.seq
        if feed.source is None:  # an attached board's record folds in the daemon
            feed.record.apply(event)
        if event.get("type") == "players":  # the arbiter's names, through the core
            self._keep_names(feed)
        if event.get("type") == "connection" and event.get("state") in ("connected", "lost"):
            feed.status.connected = event["state"] == "connected"
        lean = dumps(
            {"kind": "event", "seq": self.seq, "board": board_id, "event": event},
            separators=(",", ":"),
        )
        if event.get("type") == "game_start":
            self._forget_games_before(board_id)
        self.history.append((self.seq, board_id, event, lean))
        lean_message = Message("event", lean, self.seq, board_id)
        full_message: Message | None = None
        page_state: dict[str, Any] | None = None
        # A clock reading the viewers' own count foresees is not sent them (their state
        # and a newcomer's snapshot have it); the listeners (MQTT) hear every one.
        news = feed.clock_ticks.is_news(event)
        queued, sinks, with_state = self._audience(board_id) if news else ([], False, False)
        if with_state:  # made once for every viewer that wants it
            page_state = self.page_state(board_id)
            text = self.state_text(page_state)
            feed.keep_text(feed.record, text)  # a newcomer's too
            full = _with_state(lean, text)
            full_message = Message("event", full, self.seq, board_id)
        for subscriber in queued:  # each its bounded queue, now
            message = full_message if subscriber.with_state and full_message else lean_message
            if not subscriber.offer(message):
                self._forget(subscriber)
        if sinks:  # written at the next write-out, with the events kept before it
            self._outbox.append((self.seq, board_id, lean_message, full_message))
            self._write_soon()
        self._tell_listeners(board_id, self.seq, event, page_state)

    def _tell_listeners(
        self,
        board_id: str,
        seq: int,
        event: dict[str, Any],
        made: dict[str, Any] | None = None,
    ) -> None:
        """Each listener hears the event, with the board's page state (``made`` for
        the viewers already, else made at the first listener's call, once)."""
        if not self.listeners:
            return
        kept: list[dict[str, Any]] = [made] if made is not None else []

        def page_state() -> dict[str, Any]:
            if not kept:
                kept.append(self.page_state(board_id))
            return kept[0]

        for listener in list(self.listeners):
            try:
                listener(board_id, seq, event, page_state)
            except Exception:
                log.exception("a feed listener failed; the feed goes on")

    def _audience(self, board_id: str) -> tuple[list[Subscriber], bool, bool]:
        """Who wants this board's event, by how it reaches them: the viewers with a
        queue (offered it at once), whether any viewer has a sink (``_write_out``
        writes them all) and whether any wants the board's state with it."""
        queued: list[Subscriber] = []
        sinks = with_state = False
        for subscriber in self.subscribers:
            if subscriber.wants(board_id):
                if subscriber.sink is None:
                    queued.append(subscriber)
                else:
                    sinks = True
                with_state = with_state or subscriber.with_state
        return queued, sinks, with_state

    def _write_soon(self) -> None:
        """A write-out at the next turn when the last one is ``WRITE_EVERY`` old, else
        ``WRITE_EVERY`` after it (one already due takes this event too)."""
        if self._writing is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a caller outside the daemon's): at once
            self._write_out()
            return
        wait = self._written_at + WRITE_EVERY - loop.time()
        if wait > 0:
            self._writing = loop.call_later(wait, self._write_out)
        else:
            self._writing = loop.call_soon(self._write_out)

    def _write_out(self) -> None:
        """The events kept to every sink's viewer: one write each, the frames joined
        once for every viewer of the same boards, state or not, format and start."""
        if self._writing is not None:
            self._writing.cancel()
            self._writing = None
        outbox, self._outbox = self._outbox, []
        if not outbox:
            return
        with contextlib.suppress(RuntimeError):  # no loop: nothing to space out
            self._written_at = asyncio.get_running_loop().time()
        first = outbox[0][0]
        joined: dict[tuple[Any, ...], tuple[bytes, int]] = {}
        for subscriber in list(self.subscribers):
            sink = subscriber.sink
            if sink is None or subscriber.dropped:
                continue
            since = subscriber.since if subscriber.since >= first else -1
            key = (subscriber.boards, subscriber.with_state, sink.encode, since)
            frames = joined.get(key)
            if frames is None:
                wanted = [
                    sink.encode(full if subscriber.with_state and full is not None else lean)
                    for seq, board, lean, full in outbox
                    if seq > since and subscriber.wants(board)
                ]
                frames = joined[key] = (b"".join(wanted), len(wanted))
            if frames[1] and not subscriber.offer_frames(*frames):
                self._forget(subscriber)

    def set_status(
        self,
        board_id: str,
        *,
        connected: bool | None = None,
        battery: float | None = None,
        detail: str | None = None,
    ) -> None:
        """The board link's state and battery, for the page and ``/state.json``."""
        self._call(self._set_status_now, board_id, connected, battery, detail)

    def _set_status_now(
        self, board_id: str, connected: bool | None, battery: float | None, detail: str | None
    ) -> None:
        feed = self.ensure_board(board_id)
        feed.version += 1
        feed.status_at = self.seq
        if connected is not None:
            feed.status.connected = connected
        if battery is not None:
            feed.status.battery = battery
        if detail is not None:
            feed.status.detail = detail
        message = self._status_message(board_id, feed)
        self._write_out()  # after the events before it
        for subscriber in list(self.subscribers):
            if subscriber.wants(board_id) and not subscriber.offer(message):
                self._forget(subscriber)
        self._tell_listeners(board_id, feed.seq, {"type": "_status"})

    @staticmethod
    def _status_message(board_id: str, feed: BoardFeed) -> Message:
        data = dumps({"kind": "status", "board": board_id, "status": feed.status.to_dict()},
                     separators=(",", ":"))  # fmt: skip
        return Message("status", data, None, board_id)

    def _source_message(self) -> Message:
        data = dumps({"kind": "source", "problem": self.source_problem}, separators=(",", ":"))
        return Message("source", data, None, None)

    def set_source_problem(self, problem: str | None) -> None:
        """Where the feed comes from is out of reach (``problem``) or back (None).
        Safe from any thread; viewers hear it only when it changes."""
        self._call(self._set_source_problem_now, problem)

    def _set_source_problem_now(self, problem: str | None) -> None:
        if problem == self.source_problem:
            return
        self.source_problem = problem
        self._source_at = self.seq
        message = self._source_message()
        self._write_out()
        for subscriber in list(self.subscribers):
            if not subscriber.offer(message):
                self._forget(subscriber)

    def load_state(self, board_id: str, state: dict[str, Any], seq: int = 0) -> None:
        """Start a board from a whole state (a relay hearing a retained state)."""
        self._call(self._load_state_now, board_id, state, seq)

    def _load_state_now(self, board_id: str, state: dict[str, Any], seq: int) -> None:
        feed = self.ensure_board(board_id)
        headers = feed.record.headers
        feed.record = GameRecord.from_state(state)
        if headers.white != "?" and feed.record.headers.white == "?":
            feed.record.headers = headers
        status = state.get("status") or {}
        feed.status.connected = status.get("connected")
        feed.status.battery = status.get("battery")
        feed.seq = seq
        self.seq = max(self.seq, seq)
        self._touch(feed)
        self._broadcast_snapshot()

    def changed(self, board_id: str) -> None:
        """The board's record changed outside the feed (the arbiter set the names,
        rejected a signalled result): every viewer gets a snapshot, the listeners
        (MQTT) the new state."""
        self._call(self._changed_now, board_id)

    def _changed_now(self, board_id: str) -> None:
        feed = self.boards[board_id]
        self._touch(feed)
        self._broadcast_snapshot()
        self._tell_listeners(board_id, feed.seq, {"type": "_changed"})

    def _broadcast_snapshot(self) -> None:
        self._write_out()
        for subscriber in list(self.subscribers):
            if not subscriber.offer(self.snapshot(subscriber.boards)):
                self._forget(subscriber)

    # -- the read side: viewers ---------------------------------------------------

    def subscribe(
        self,
        boards: Iterable[str] | None = None,
        *,
        with_state: bool = False,
        last_seq: int | None = None,
        sink: Sink | None = None,
    ) -> Subscriber:
        """A new viewer. With ``last_seq`` it first gets what it missed (``resumed``),
        where that can be told, else (and without ``last_seq``) a snapshot. With a
        ``sink`` that backlog is written at once, and every message after it."""
        subscriber = Subscriber(
            frozenset(boards) if boards is not None else None,
            with_state,
            self.settings.client_queue,
            sink,
        )
        subscriber.since = self.seq  # what the snapshot or backlog below holds
        backlog = self.resumed(subscriber, last_seq) if last_seq is not None else None
        first = backlog if backlog is not None else [self.snapshot(subscriber.boards)]
        if sink is None:
            subscriber.queue.extend(first)
        elif not sink.send_backlog(first):
            subscriber.drop()
            return subscriber
        self.subscribers.add(subscriber)
        self._viewer_came.set()
        return subscriber

    def resumed(self, subscriber: Subscriber, last_seq: int) -> list[Message] | None:
        """What a viewer resuming after ``last_seq`` (SSE's ``Last-Event-ID``) missed,
        for it to stand as if it had never left; None when only a snapshot can tell
        (the history does not reach back so far, or a board changed outside the feed
        meanwhile: names, a penalty's word, a loaded state, the arbiter's change, a
        new board).

        Every event it missed, as it was published, and the link status and the
        source's word when they changed; a viewer of page states has each board's
        state as it is now on that board's last event. A hall's phones back from a
        Wi-Fi blip were each sent every board's whole game again (172 kB for 26
        boards: 17 MB for 100 phones on the hall's Wi-Fi); now the boards that moved
        meanwhile, a few kB (``benchmarks.snapshot_cost``)."""
        backlog = self.since(last_seq)
        if backlog is None:
            return None
        feeds = [(b, f) for b, f in self.boards.items() if subscriber.wants(b)]
        if any(feed.touched_at >= last_seq for _b, feed in feeds):
            return None
        first = [self._source_message()] if self._source_at >= last_seq else []
        first.extend(self._status_message(board_id, feed)
                     for board_id, feed in feeds if feed.status_at >= last_seq)  # fmt: skip
        missed = [entry for entry in backlog if subscriber.wants(entry[1])]
        last = {board: seq for seq, board, _e, _l in missed} if subscriber.with_state else {}
        for seq, board, _event, lean in missed:
            if last.get(board) == seq:
                lean = _with_state(lean, self.board_text(board))
            first.append(Message("event", lean, seq, board))
        return first

    async def a_viewer(self) -> None:
        """Returns once a viewer is subscribed: the web app's timer (keep-alives, stalled
        connections) sleeps while there is none, so an idle daemon does not wake for it."""
        while not self.subscribers:
            self._viewer_came.clear()
            await self._viewer_came.wait()

    def unsubscribe(self, subscriber: Subscriber) -> None:
        subscriber.closed = True
        self.subscribers.discard(subscriber)

    def drop_viewer(self, subscriber: Subscriber, why: str) -> None:
        """Drop a viewer the web app found stuck (counted like one fallen behind)."""
        subscriber.drop()
        if subscriber in self.subscribers:
            self.subscribers.discard(subscriber)
            self.dropped_viewers += 1
            log.info("dropped a viewer: %s", why)

    def _forget(self, subscriber: Subscriber) -> None:
        if subscriber.closed:
            self.subscribers.discard(subscriber)
        elif subscriber in self.subscribers:
            self.subscribers.discard(subscriber)
            self.dropped_viewers += 1
            log.info("dropped a viewer that fell behind (%d messages or its buffer's bound)",
                     subscriber.limit)  # fmt: skip

    def _forget_games_before(self, board_id: str) -> None:
        """A board's new game: its earlier games leave the history (a viewer resuming
        from one of them gets a snapshot, as from an event too old), so that a day
        of games holds only the current ones (issue 19: it grew 55 kB a game, up to
        the 5000 events of ``history``)."""
        kept = [entry for entry in self.history if entry[1] != board_id]
        if len(kept) < len(self.history):
            self.history = deque(kept, maxlen=self.history.maxlen)

    def since(self, last_seq: int) -> list[tuple[int, str, dict[str, Any], str]] | None:
        """Feed entries after ``last_seq``; None when the history cannot tell
        (too old, or from before a restart that reset the numbering)."""
        if last_seq > self.seq:
            return None
        if last_seq == self.seq:
            return []
        if not self.history or self.history[0][0] > last_seq + 1:
            return None
        missed = []  # from the newest back: a phone away a second missed a few of 5000
        for entry in reversed(self.history):
            if entry[0] <= last_seq:
                break
            missed.append(entry)
        missed.reverse()
        return missed

    def page_state(self, board_id: str) -> dict[str, Any]:
        """``state()`` of the board plus what a display adds: figurines, names,
        orientation, link status and the sequence number."""
        feed = self.boards[board_id]
        record = feed.record
        state = record.state(with_moves=False)
        state["moves"] = feed.moves_shown.update(record.moves)
        if state["last_move"]:  # the record's own dict of it, made for this state
            state["last_move"]["figurine"] = figurine(state["last_move"]["san"])
        state["board"] = board_id
        state["label"] = feed.settings.label or f"Board {board_id}"
        state["orientation"] = self.orientation(board_id)
        state["status"] = feed.status.to_dict()
        state["seq"] = feed.seq
        state["clock_by_hand"] = feed.clock_by_hand  # the console's word on penalties
        return state

    def state_text(self, state: dict[str, Any]) -> str:
        """``state`` (a ``page_state``) as compact JSON, made once for the viewers and
        MQTT's retained state of the same event (a state holds every move: the
        largest text an event makes)."""
        made = self._state_text
        if made is not None and made[0] is state:
            return made[1]
        board = state.get("board")
        feed = self.boards.get(board) if isinstance(board, str) else None
        moves = feed.moves_shown.json_of(state["moves"]) if feed and "moves" in state else None
        if moves is None:
            text = dumps(state, separators=(",", ":"))
        else:  # the moves' text kept a move (``movelist``), last in the state's text
            rest = dumps({k: v for k, v in state.items() if k != "moves"}, separators=(",", ":"))
            text = f'{rest[:-1]},"moves":{moves}}}'
        self._state_text = (state, text)
        return text

    def board_text(self, board_id: str) -> str:
        """The board's page state as ``state_text`` writes it, kept until the board's
        next event or a change the hub is told of (``BoardFeed.version``).

        A viewer that connects (or reconnects: the page asks for the state) is sent
        every board's; made afresh each time, 26 boards of 30 moves were 1.4 ms of a
        fast core, and 100 viewers coming back together after a Wi-Fi blip held a Pi
        4's event loop for a second, mid-round (issue 28). Kept, a board's is made
        once per change, most times by the event's own viewers' state already.
        """
        feed = self.boards[board_id]
        record = feed.record
        kept = feed.kept_text(record)
        text = _kept_or_made(kept, lambda: self.state_text(self.page_state(board_id)),
                             f"board {board_id}'s page state at seq {feed.seq}")  # fmt: skip
        if text is not kept:
            feed.keep_text(record, text)
        return text

    def snapshot(self, boards: frozenset[str] | None = None) -> Message:
        """Every chosen board's page state in one message, for a new viewer: what
        ``dumps`` of the whole would write, each board's text as kept. The message
        itself is kept while no board's text changes, so the viewers that come
        together share it, and its wire formats are encoded once for them all."""
        chosen = [b for b in self.board_ids() if boards is None or b in boards]
        texts = [self.board_text(b) for b in chosen]
        kept = self._snapshots.get(boards)
        if (kept is not None and kept.seq == self.seq and kept.problem == self.source_problem
                and kept.boards == chosen
                and all(a is b or (CHECK_KEPT_TEXTS and a == b)  # the tests: each made anew
                        for a, b in zip(kept.texts, texts, strict=True))):  # fmt: skip
            return kept.message
        # a board id is letters, digits, '-' and '_' (``BOARD_ID``): quoted as it is
        states = ",".join(f'"{b}":{text}' for b, text in zip(chosen, texts, strict=True))
        data = (f'{{"kind":"snapshot","seq":{self.seq},"boards":{{{states}}},'
                f'"source_problem":{dumps(self.source_problem)}}}')  # fmt: skip
        message = Message("snapshot", data, self.seq, None)  # resumed from: its id
        if len(self._snapshots) >= KEPT_SNAPSHOTS:  # viewers of many board choices
            self._snapshots.clear()
        self._snapshots[boards] = _KeptSnapshot(self.seq, self.source_problem, chosen, texts,
                                                message)  # fmt: skip
        return message

    @contextlib.asynccontextmanager
    async def newcomer(self) -> AsyncIterator[None]:
        """A new viewer's turn to be served its first response: one a loop turn.

        When a hall's phones come back together (a Wi-Fi blip: 100 feeds reopened at
        once), each one's response was made in the same turn of the event loop, and
        the bus replies, the presses and the blind player's phrase waited for all of
        them (a Pi 4 hall's worst press -> move 5 s, a phrase 2.4 s: issue 28). In
        turns, the loop reads the line between two newcomers; the last viewer waits
        a little longer for its page."""
        async with self._newcomers:
            yield
            await asyncio.sleep(0)  # the next newcomer after the loop's next turn

    def pgn(self, boards: Iterable[str] | None = None) -> str:
        chosen = list(boards) if boards is not None else self.board_ids()
        return "\n".join(self.board_pgn(b) for b in chosen if b in self.boards)

    def board_pgn(self, board_id: str) -> str:
        """The board's game as PGN, kept until what it is made of changes
        (``GameRecord.pgn_key``: not at a clock report, the most frequent event).

        ``/game.pgn`` is what a broadcast site polls every few seconds, and MQTT's
        retained PGN is the same text: made afresh for each, a hall's 26 games were
        0.7 ms of a fast core a request (issue 28)."""
        feed = self.boards[board_id]
        record = feed.record
        key = record.pgn_key()
        kept = feed.pgn[1] if feed.pgn is not None and feed.pgn[0] == key else None
        text = _kept_or_made(kept, record.pgn, f"board {board_id}'s PGN at seq {feed.seq}")
        if text is not kept:
            feed.pgn = (key, text)
        return text

    def state_json(self, boards: Iterable[str], status: dict[str, Any] | None = None) -> str:
        """``/state.json``: the chosen boards' page states, each board's text as kept
        (``board_text``), with the server's ``status`` when given; what ``dumps``
        of the whole would write. Made afresh, a hall's 26 boards were 2.6 ms of a
        fast core a request (issue 28)."""
        states = ",".join(f"{dumps(b)}:{self.board_text(b)}" for b in boards)
        tail = f',"status":{dumps(status)}' if status is not None else ""
        return f'{{"seq":{self.seq},"boards":{{{states}}}{tail}}}'
