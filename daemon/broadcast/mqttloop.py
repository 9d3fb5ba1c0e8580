"""A paho client driven by the daemon's event loop, not by a thread of its own.

Each board publishes with its own login, so over its own connection (issue 24). With
paho's ``loop_start`` that was a thread a board, 26 in the Pi 4 hall, and every
event woke one: paho wrote a byte to its socket pair, its thread woke, took the
interpreter's lock from the event loop and wrote the TLS record. On a Pi's slow core
those hand-overs, several a second a board, were paid by the bus polls and the page
waiting behind them (issue 28).

Here the loop's selector watches each client's socket and paho's documented
external-loop calls do the rest (``loop_read`` when readable, ``loop_write`` when it
has something to send, ``loop_misc`` every quarter keepalive). Only the
connect runs on a thread: paho's ``reconnect`` is blocking (a TCP connect and a TLS
handshake), once a connection, on a small pool shared by every board. While it runs
the loop does not touch the client (the publisher hands paho nothing before the
broker's CONNACK, which the loop reads).

A connection lost is connected again after a delay that doubles from ``min_delay``
to ``max_delay`` (paho's own ``reconnect_delay_set`` semantics); an exception out of
paho (a bug, a library that cannot work) ends the driving and is handed to
``on_failure``, which starts a new client: it never reaches the event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt

log = logging.getLogger(__name__)

#: Seconds between two ``loop_misc`` calls (keepalive pings, a broker gone silent), at
#: least; a quarter of the keepalive when that is longer (``PahoOnLoop.misc_every``).
MISC_EVERY = 1.0
#: Connects at once: a broker that does not answer holds each for paho's connect
#: timeout (5 s), and the other boards' connects wait their turn, not the loop.
CONNECT_THREADS = 4

_connectors: concurrent.futures.ThreadPoolExecutor | None = None


def _connector() -> concurrent.futures.ThreadPoolExecutor:
    global _connectors
    if _connectors is None:
        _connectors = concurrent.futures.ThreadPoolExecutor(
            CONNECT_THREADS, thread_name_prefix="dgt-bridge-mqtt-connect"
        )
    return _connectors


class PahoOnLoop:
    """Drives ``client`` (after its ``connect_async``) from ``loop`` until ``close``."""

    def __init__(
        self,
        client: mqtt.Client,
        loop: asyncio.AbstractEventLoop,
        *,
        on_failure: Callable[[BaseException], None],
        min_delay: float = 1.0,
        max_delay: float = 5.0,
    ) -> None:
        self.client = client
        self.loop = loop
        self.on_failure = on_failure
        self.min_delay = min_delay
        self.max_delay = max_delay
        self.closed = False
        self.leaving = False  # our own goodbye: its end is not a loss
        self._warned = False  # a failed connect said once an outage, at warning level
        self._delay = min_delay
        self._loop_thread = threading.get_ident()
        self._sock: Any = None  # the socket the loop watches
        self._writing = False  # a writer is registered for it
        self._write_soon = False  # a loop_write is queued (call_soon)
        self._connecting: asyncio.Future[Any] | None = None
        self._timer: asyncio.TimerHandle | None = None  # the next connect, or loop_misc
        client.on_socket_register_write = self._wants_write
        client.on_socket_close = self._socket_closed

    # -- life cycle ---------------------------------------------------------------

    def start(self) -> None:
        """The first connect, at once."""
        self._connect()

    def close(self) -> None:
        """Stop driving: the socket is closed without a goodbye (``goodbye`` first
        for one), nothing is connected again."""
        if self.closed:
            return
        self.closed = True
        self._cancel_timer()
        self._forget_socket()
        if self._connecting is None:  # else closed when the connect returns
            self._close_socket()

    async def goodbye(self, timeout: float) -> None:
        """paho's ``disconnect`` written out (the broker then drops the last will),
        waiting at most ``timeout`` s; then ``close``."""
        self.leaving = True
        if self._connecting is None and self.client.socket() is not None:
            self.client.disconnect()
            deadline = self.loop.time() + timeout
            while self.client.socket() is not None and self.loop.time() < deadline:
                await asyncio.sleep(0.02)
        self.close()

    # -- connecting -----------------------------------------------------------------

    def _connect(self) -> None:
        self._timer = None
        if self.closed:
            return
        self._connecting = self.loop.run_in_executor(_connector(), self.client.reconnect)
        self._connecting.add_done_callback(self._connect_done)

    def _connect_done(self, connecting: asyncio.Future[Any]) -> None:
        self._connecting = None
        error = None if connecting.cancelled() else connecting.exception()
        if self.closed:
            self._close_socket()
            return
        if error is not None or connecting.cancelled():
            level = logging.DEBUG if self._warned else logging.WARNING
            self._warned = True
            log.log(level, "MQTT: no connection to %s:%s (%s); trying again",
                    self.client.host, self.client.port, error or "cancelled")  # fmt: skip
            self._reconnect_later()
            return
        self._delay = self.min_delay
        self._warned = False
        sock = self.client.socket()
        if sock is None:  # paho closed it at once (a refusal)
            self._reconnect_later()
            return
        self._sock = sock
        self.loop.add_reader(sock, self._readable)
        self._check_write()
        self._timer = self.loop.call_later(self.misc_every(), self._misc)

    def misc_every(self) -> float:
        """Seconds between two ``loop_misc`` calls: a quarter of the keepalive. A ping
        then goes at most that late, well inside the half keepalive more the broker
        allows (MQTT 3.1.1, 3.1.2.10), and a broker gone silent is noticed that much
        later. At every second, as paho's own loop calls it, the keepalive's check was
        one wake of the idle daemon's four a second (a Pi Zero's idle budget)."""
        return max(MISC_EVERY, self.client.keepalive / 4)

    def _reconnect_later(self) -> None:
        self._cancel_timer()
        if self.closed or self.leaving:
            return
        delay, self._delay = self._delay, min(self._delay * 2, self.max_delay)
        self._timer = self.loop.call_later(delay, self._connect)

    # -- the loop's side --------------------------------------------------------------

    def _readable(self) -> None:
        def read() -> None:
            # again while a TLS socket holds whole records already read off the wire
            while True:
                self.client.loop_read()
                sock = self.client.socket()
                if sock is None or getattr(sock, "pending", lambda: 0)() == 0:
                    return

        self._guarded(read)

    def _writable(self) -> None:
        self._write_soon = False
        self._guarded(self.client.loop_write)

    def _misc(self) -> None:
        self._timer = None
        self._guarded(self.client.loop_misc)
        if not self.closed and self._sock is not None:
            self._timer = self.loop.call_later(self.misc_every(), self._misc)

    def _guarded(self, step: Callable[[], Any]) -> None:
        """One paho step; then the writer as paho needs it, or the connection lost
        (connected again later), or paho failed (handed on, never raised here)."""
        if self.closed or self._sock is None:
            return
        try:
            step()
        except Exception as exc:  # paho's own bug or a library it cannot use
            log.debug("paho raised", exc_info=True)  # the publisher says it, in one line
            self.close()
            self.on_failure(exc)
            return
        if self.client.socket() is None:  # lost (paho said so through on_disconnect)
            self._forget_socket()
            self._reconnect_later()
        else:
            self._check_write()

    def _check_write(self) -> None:
        """A writer while paho has bytes it could not send, none otherwise."""
        sock = self._sock
        if sock is None:
            return
        wants = self.client.want_write()
        if wants and not self._writing:
            self.loop.add_writer(sock, self._writable)
            self._writing = True
        elif not wants and self._writing:
            self.loop.remove_writer(sock)
            self._writing = False

    # -- paho's callbacks (on the loop; register_write also from a connect) -------------

    def _wants_write(self, client: mqtt.Client, userdata: Any, sock: Any) -> None:
        """paho queued a packet: written at the loop's next turn (one write for
        every packet of this turn), the writer kept only if the socket is full."""
        if threading.get_ident() != self._loop_thread:
            return  # the connect's own CONNECT: looked at when it returns
        if not self._write_soon:
            self._write_soon = True
            self.loop.call_soon(self._writable)

    def _socket_closed(self, client: mqtt.Client, userdata: Any, sock: Any) -> None:
        if sock is self._sock and threading.get_ident() == self._loop_thread:
            self._forget_socket()

    def _forget_socket(self) -> None:
        sock, self._sock = self._sock, None
        if sock is None:
            return
        self.loop.remove_reader(sock)
        if self._writing:
            self.loop.remove_writer(sock)
            self._writing = False

    def _close_socket(self) -> None:
        """paho's socket closed under it, no goodbye (the driving is over)."""
        sock = self.client.socket()
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
