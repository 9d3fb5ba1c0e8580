"""Bounded connections, whatever a client does.

One client with 1,100 half-sent requests used to take every file descriptor the
process had: new viewers timed out and the game's journal failed with "Too many
open files". aiohttp bounds the size of headers and the idle time between
requests (``keepalive_timeout``), but not the number of connections nor the time
a client may take to send its headers. So every connection passes through a
``GuardedConnection`` (an asyncio protocol in front of aiohttp's own), and the
``ConnectionGuard`` keeps:

- a limit on connections in total (``broadcast.max_connections``, lowered to
  what the process's descriptor limit allows, keeping ``RESERVED_DESCRIPTORS``
  for the journal, the PGN, the board, speech and MQTT) and per client address
  (``broadcast.max_connections_per_address``). A connection beyond them is
  refused at once, before anything is parsed: a short 503 and close.
- a lower limit on the viewers (live feeds, which are never idle) of one address
  (``broadcast.max_viewers_per_address``): the feed handlers ask ``start_viewer``,
  and a feed beyond it is answered 503. Without it, 940 WebSockets from 15
  addresses held the server full and every new viewer got 503.
- when the total is reached, a newcomer takes the place of a connection of the
  address holding the most (when it holds more than one more than the
  newcomer's): its oldest idle connection, or, when it has none, its oldest
  viewer. One machine with a few addresses cannot lock the others out, and a
  viewer alone on its address (a hall's screen, a phone) is never evicted.
- time-outs: a request's headers must arrive within ``header_timeout`` seconds
  (from the connection, or from the first byte of a next request), and an idle
  keep-alive connection is closed after ``idle_timeout``. One timer checks every
  connection (``sweep``), not one timer each, and it wakes only when a connection's
  time-out can have passed: a hall's viewers, whose feeds are requests under way,
  give it nothing to time, and an idle daemon on a Pi's budget is not woken for it.

What was refused or closed is logged one line per cause per minute, with a count.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from daemon.broadcast.logthrottle import throttled
from drivers.records import Record

if TYPE_CHECKING:  # a TLS context is made only when TLS is configured
    import ssl

log = logging.getLogger(__name__)

RESERVED_DESCRIPTORS = 64
"""Descriptors never given to connections, beyond those open when the server
starts: the journal and its PGN (3 while the PGN is rewritten), a board
reconnecting, the speech engine's pipes, MQTT, and the refusals themselves."""
RESERVED_PER_BOARD = 4
"""And for each board of the daemon: its port, its journal, its PGN being rewritten."""

REFUSAL = (  # written straight to the socket, then closed: nothing parsed
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
    b"Connection: close\r\nRetry-After: 5\r\nContent-Length: 28\r\n\r\n"
    b"too many connections: retry\n"
)


@dataclass(eq=False, repr=False, slots=True)
class Limits(Record):
    """The limits in force (the configured ones, as the descriptors allow)."""

    max_connections: int
    per_address: int
    viewers_per_address: int
    header_timeout: float
    idle_timeout: float
    body_timeout: float
    descriptors: int | None = None  # the process's limit (ulimit -n), None: unlimited
    configured_max: int = 0  # broadcast.max_connections before the descriptors lowered it
    reserved: int = 0  # descriptors kept back for the journal, the boards, speech

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_connections": self.max_connections,
            "max_connections_per_address": self.per_address,
            "max_viewers_per_address": self.viewers_per_address,
            "header_timeout": self.header_timeout,
            "body_timeout": self.body_timeout,
            "idle_timeout": self.idle_timeout,
            "descriptors": self.descriptors,
            "reserved_descriptors": self.reserved,
        }


def client_key(address: str) -> str:
    """The client an address counts as for every per-address limit (connections,
    viewers, wrong tokens): an IPv4 address as it is, an IPv6 one by its /64
    (a home, a phone or a server is given a whole /64: 2^64 addresses to
    rotate through), an IPv4-mapped one (``::ffff:192.168.1.20``) as its IPv4."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        if not ip.is_loopback:
            return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def open_descriptors() -> int:
    """Descriptors this process has open now (Linux; a guess elsewhere)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 32


def descriptor_limit(wanted: int) -> int | None:
    """The process's descriptor limit, first raised towards ``wanted`` as far as
    the hard limit allows (systemd's ``LimitNOFILE`` sets both). None: unlimited."""
    try:
        import resource
    except ImportError:  # not Unix
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        if target > soft:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
                soft = target
    return None if soft == resource.RLIM_INFINITY else int(soft)


def effective_limits(settings: Any) -> Limits:
    """The configured limits, the total lowered to what the descriptors allow."""
    configured = settings.max_connections
    in_use = open_descriptors()
    reserved = RESERVED_DESCRIPTORS + RESERVED_PER_BOARD * len(getattr(settings, "boards", []))
    descriptors = descriptor_limit(configured + in_use + reserved)
    allowed = configured
    if descriptors is not None:
        allowed = max(1, min(configured, descriptors - in_use - reserved))
    if allowed < configured:
        log.warning(
            "broadcast.max_connections %d lowered to %d: the process may open %d files "
            "(ulimit -n, or LimitNOFILE in the unit), %d are open and %d are kept for the "
            "journal, the board and speech",
            configured, allowed, descriptors, in_use, reserved,
        )  # fmt: skip
    return Limits(
        max_connections=allowed,
        per_address=max(1, settings.max_connections_per_address),
        viewers_per_address=max(
            1, min(settings.max_viewers_per_address, settings.max_connections_per_address)
        ),
        header_timeout=settings.header_timeout,
        idle_timeout=settings.idle_timeout,
        body_timeout=settings.body_timeout,
        descriptors=descriptors,
        configured_max=configured,
        reserved=reserved,
    )


class GuardedConnection(asyncio.Protocol):
    """One client connection, admitted by the guard when it was accepted, then
    handed to aiohttp's protocol (after the TLS handshake, when TLS is on)."""

    __slots__ = (
        "_early",
        "_tls_task",
        "address",
        "first_byte",
        "guard",
        "in_request",
        "inner",
        "requests",
        "since",
        "transport",
        "viewer",
    )

    def __init__(self, guard: ConnectionGuard, address: str) -> None:
        self.guard = guard
        self.inner: asyncio.Protocol | None = None
        self.transport: asyncio.Transport | None = None
        self.address = address
        self.since = guard.clock()  # accepted, or the end of its last request
        self.first_byte = 0.0  # of a request not yet handled; 0: none
        self.in_request = 0  # requests being handled (a viewer's feed stays one)
        self.requests = 0
        self.viewer = False  # its request under way is a live feed (SSE, WebSocket)
        self._tls_task: asyncio.Task[None] | None = None
        self._early: list[bytes] = []  # decrypted before the TLS handshake returned

    # -- asyncio's calls ------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if self not in self.guard.connections:  # evicted or swept before it started
            transport.abort()
        elif self.guard.tls is not None:
            self._tls_task = asyncio.get_running_loop().create_task(self._start_tls(transport))
        else:
            self._hand_over(transport)

    def data_received(self, data: bytes) -> None:
        if not self.in_request and not self.first_byte:
            self.first_byte = self.guard.clock()
            self.guard.timed(self.first_byte + self.guard.limits.header_timeout)
        if self.inner is not None:
            self.inner.data_received(data)
        elif len(self._early) < 64:
            self._early.append(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.inner is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.release(self)
        if self._tls_task is not None and not self._tls_task.done():
            self._tls_task.cancel()
        if self.inner is not None:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    # -- ours -----------------------------------------------------------------------

    def _hand_over(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self.guard.by_transport[transport] = self
        inner = self.guard.inner_factory()
        inner.connection_made(transport)
        self.inner = inner
        early, self._early = self._early, []
        for data in early:  # a request that came with the end of the handshake
            inner.data_received(data)

    async def _start_tls(self, transport: asyncio.Transport) -> None:
        """The TLS handshake, counted like a request's headers (``header_timeout``)."""
        loop = asyncio.get_running_loop()
        assert self.guard.tls is not None
        try:
            secure = await loop.start_tls(
                transport, self, self.guard.tls, server_side=True,
                ssl_handshake_timeout=self.guard.limits.header_timeout,
            )  # fmt: skip
        except OSError as exc:  # ssl.SSLError, TimeoutError, ConnectionError: all OSErrors
            throttled(log, "tls", logging.INFO, "a TLS handshake from %s failed: %s",
                      self.address, exc)  # fmt: skip
            secure = None
        if secure is None:
            self.guard.release(self)
            transport.abort()
            return
        self._hand_over(secure)

    def close(self, why: str) -> None:
        """Close it now (a slow or idle client, or one evicted)."""
        throttled(log, f"closed:{why}", logging.INFO, "closed a connection from %s: %s",
                  self.address, why)  # fmt: skip
        self.guard.counts[why] = self.guard.counts.get(why, 0) + 1
        self.guard.release(self)
        if self.transport is not None:
            self.transport.abort()


@dataclass(eq=False, repr=False)
class ConnectionGuard(Record):
    """Every connection of one server: counted, limited and timed."""

    limits: Limits
    inner_factory: Callable[[], asyncio.Protocol]
    tls: ssl.SSLContext | None = None
    clock: Callable[[], float] = time.monotonic
    connections: set[GuardedConnection] = field(default_factory=set)
    by_address: dict[str, dict[GuardedConnection, None]] = field(default_factory=dict)
    by_transport: dict[asyncio.BaseTransport, GuardedConnection] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # refused / closed, per cause
    #: the timer's sleep (``run``): its result is True when its time came, False when
    #: a connection's time-out fell sooner
    _wake: asyncio.Future[bool] | None = field(default=None, repr=False)
    #: the sleep under way sweeps a time-out from this one on in time (at most a
    #: quarter time-out late); only a sooner one wakes it (a storm's hundred new
    #: connections each woke it, and each wake read every connection)
    _in_time_from: float = float("-inf")

    def admit(self, address: str) -> GuardedConnection | str:
        """A new connection from ``address``: its record, or the cause of its refusal
        (decided before asyncio makes anything of the socket)."""
        # admitted, its headers are timed; refused, there is a count to write
        self.timed(self.clock() + self.limits.header_timeout)
        address = client_key(address)
        mine = self.by_address.get(address, {})
        if len(mine) >= self.limits.per_address:
            return self._refused(address, "too many connections from one address")
        if len(self.connections) >= self.limits.max_connections and not self._evict_for(address):
            return self._refused(address, "too many connections")
        conn = GuardedConnection(self, address)
        self.connections.add(conn)
        self.by_address.setdefault(address, {})[conn] = None
        return conn

    def _evict_for(self, address: str) -> bool:
        """Make room by closing a connection of the heaviest address, when that
        address holds more than one more than the newcomer's: its oldest idle
        connection, else its oldest viewer. (An address whose connections are all
        short requests under way is passed over for the next heaviest.)"""
        if not self.by_address:
            return False
        floor = len(self.by_address.get(address, {})) + 1
        heaviest = max(self.by_address, key=lambda a: len(self.by_address[a]))
        if len(self.by_address[heaviest]) <= floor:
            return False
        victim = self._victim(self.by_address[heaviest])
        if victim is None:  # rare: look further, heaviest first
            for other in sorted(self.by_address, key=lambda a: -len(self.by_address[a])):
                if len(self.by_address[other]) <= floor:
                    break
                victim = self._victim(self.by_address[other])
                if victim is not None:
                    break
        if victim is None:
            return False
        victim.close("evicted for a newcomer" if not victim.viewer
                     else "a viewer evicted for a newcomer")  # fmt: skip
        return True

    @staticmethod
    def _victim(theirs: dict[GuardedConnection, None]) -> GuardedConnection | None:
        """The oldest idle connection of one address, else its oldest viewer."""
        oldest_viewer = None
        for conn in theirs:  # oldest first
            if not conn.in_request:
                return conn
            if conn.viewer and oldest_viewer is None:
                oldest_viewer = conn
        return oldest_viewer

    def _refused(self, address: str, why: str) -> str:
        self.counts[why] = self.counts.get(why, 0) + 1
        throttled(log, f"refused:{why}", logging.WARNING, "refused a connection from %s: %s "
                  "(limits: %d in total, %d per address, %d viewers per address)", address,
                  why, self.limits.max_connections, self.limits.per_address,
                  self.limits.viewers_per_address)  # fmt: skip
        return why

    def release(self, conn: GuardedConnection) -> None:
        if conn not in self.connections:
            return
        self.connections.discard(conn)
        mine = self.by_address.get(conn.address)
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self.by_address[conn.address]
        if conn.transport is not None:
            self.by_transport.pop(conn.transport, None)

    # -- requests (the web app's middleware) -----------------------------------------

    def request_started(self, transport: asyncio.BaseTransport | None) -> GuardedConnection | None:
        conn = self.by_transport.get(transport) if transport is not None else None
        if conn is not None:
            conn.in_request += 1
            conn.requests += 1
        return conn

    def start_viewer(self, transport: asyncio.BaseTransport | None) -> str | None:
        """A request under way becomes a live feed: None, or why it is refused (its
        address has ``viewers_per_address`` already). It stops being one when the
        request ends."""
        conn = self.by_transport.get(transport) if transport is not None else None
        if conn is None:
            return None  # not a connection of ours (an app without the guard)
        theirs = self.by_address.get(conn.address, {})
        if sum(1 for other in theirs if other.viewer) >= self.limits.viewers_per_address:
            return self._refused(conn.address, "too many viewers from one address")
        conn.viewer = True
        return None

    def request_ended(self, conn: GuardedConnection | None) -> None:
        if conn is not None:
            conn.in_request -= 1
            conn.viewer = False
            conn.since = self.clock()  # idle from here
            conn.first_byte = 0.0
            if not conn.in_request:
                self.timed(conn.since + self.limits.idle_timeout)

    # -- the one timer ----------------------------------------------------------------

    def sweep(self) -> None:
        """Close connections whose headers are too slow or that idled too long."""
        now = self.clock()
        for conn in list(self.connections):
            due = self._time_out(conn)
            if due is not None and now > due[0]:
                conn.close(due[1])

    def due(self) -> float | None:
        """When the first of the connections' time-outs falls (None: none is timed,
        every connection being a request under way, a viewer's feed most often)."""
        times = [due[0] for due in map(self._time_out, self.connections) if due is not None]
        return min(times, default=None)

    def _time_out(self, conn: GuardedConnection) -> tuple[float, str] | None:
        """When ``conn`` is to be closed unless it moves on, and why (None: a request
        of it is under way, which its handler times)."""
        if conn.in_request:
            return None
        limits = self.limits
        if conn.requests == 0 or conn.first_byte:
            started = conn.first_byte if conn.requests and conn.first_byte else conn.since
            return started + limits.header_timeout, (
                f"no complete request within {limits.header_timeout:g} s"
            )
        return conn.since + limits.idle_timeout, f"idle for {limits.idle_timeout:g} s"

    def timed(self, at: float) -> None:
        """A time-out at ``at`` now counts: the timer is woken if it would sleep past it."""
        if at < self._in_time_from and self._wake is not None:
            _settle(self._wake, False)

    async def run(self) -> None:
        """Sweep until cancelled (the server's lifetime), each time a connection's
        time-out can have passed (a little after, so that connections made together
        are swept together: at most a quarter of the shorter time-out late, as the
        fixed period before). Between them it sleeps, at most the log throttle's
        interval (a count of left-out lines is still written). A hall's viewers are
        requests under way with no time-out, so on a Pi's budget the timer no longer
        wakes every 2.5 s for them (issue 28: an idle daemon's wakes)."""
        from daemon.broadcast.logthrottle import THROTTLE

        late = max(0.1, min(self.limits.header_timeout, self.limits.idle_timeout) / 4)
        loop = asyncio.get_running_loop()
        while True:
            now = self.clock()
            due = self.due()
            wait = THROTTLE.interval if due is None else min(THROTTLE.interval, due - now + late)
            wait = max(0.0, wait)
            # A future and a timer, not ``wait_for``: in Python 3.11 a ``wait_for`` whose
            # wait ends as the task is cancelled can swallow the cancellation, and the
            # server's stop then waited for this loop for good.
            self._wake = loop.create_future()
            self._in_time_from = now + wait - late
            alarm = loop.call_later(wait, _settle, self._wake, True)
            try:
                by_time = await self._wake
            finally:
                alarm.cancel()
                self._wake, self._in_time_from = None, float("-inf")
            if by_time:  # else a sooner time-out: sleep again, to it
                self.sweep()
                THROTTLE.flush()

    def status(self) -> dict[str, Any]:
        """What ``/state.json`` shows: the limits, the connections now, what was refused."""
        return {
            "connections": len(self.connections),
            "addresses": len(self.by_address),
            "limits": self.limits.to_dict(),
            "refused_or_closed": dict(self.counts),
        }

    def summary(self) -> str:
        """One line for ``systemctl status``."""
        limits = self.limits
        return (
            f"web {len(self.connections)}/{limits.max_connections} connections "
            f"({limits.per_address} per address, {limits.viewers_per_address} viewers, "
            f"{limits.descriptors or 'unlimited'} files)"
        )


def _settle(wake: asyncio.Future[bool], by_time: bool) -> None:
    """End the guard's sleep, the first time only (the alarm or a sooner time-out)."""
    if not wake.done():
        wake.set_result(by_time)
