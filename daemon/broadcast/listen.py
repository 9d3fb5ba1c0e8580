"""The listening side of the web app: sockets, limits, TLS, and where it is reached.

The daemon and the relay serve the same app the same way: every connection
through the ``ConnectionGuard`` (limits and time-outs, ``connections.py``),
optionally TLS, and every address the page can be reached at printed, so a
configuration that serves the whole network says so (``0.0.0.0`` is shown as
the machine's addresses, never as ``127.0.0.1``).

TLS is built in (``broadcast.tls_certificate`` and ``tls_key``, PEM files): a
hall's Pi has no reverse proxy, and a proxy in front would make every viewer
one address to the per-address limits and the token's lock-out.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import ipaddress
import logging
import socket
import struct
from typing import TYPE_CHECKING, Any

from aiohttp import web

from daemon.broadcast.connections import (
    REFUSAL,
    ConnectionGuard,
    GuardedConnection,
    effective_limits,
)
from daemon.broadcast.logthrottle import throttled
from daemon.broadcast.security import hardened_handler

if TYPE_CHECKING:  # a TLS context is made only when TLS is configured
    import ssl

log = logging.getLogger(__name__)

ANY_ADDRESS = ("0.0.0.0", "", "::")

ACCEPT_BATCH = 16
"""Connections accepted per wake-up of the listening socket: each is decided
(admitted or refused and closed) before the next, so the descriptors in use never
pass the guard's limit by more than this."""


class TlsError(ValueError):
    """The configured certificate or key cannot be used; the message says which."""


def tls_context(certificate: str, key: str) -> ssl.SSLContext | None:
    """A server context from PEM files, or None when TLS is not configured."""
    if not certificate and not key:
        return None
    if not certificate or not key:
        raise TlsError("broadcast.tls_certificate and broadcast.tls_key go together")
    import ssl

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(certificate, key)
    except (OSError, ssl.SSLError) as exc:
        raise TlsError(f"cannot use the TLS certificate {certificate} / key {key}: {exc}") from None
    return context


def interface_addresses() -> list[str]:
    """This machine's IPv4 addresses, the network's first and loopback last."""
    found: set[str] = set()
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for _index, name in socket.if_nameindex():
            with contextlib.suppress(OSError):
                packed = fcntl.ioctl(probe.fileno(), 0x8915,  # SIOCGIFADDR
                                     struct.pack("256s", name.encode()[:15]))  # fmt: skip
                found.add(socket.inet_ntoa(packed[20:24]))
    except OSError:
        pass
    finally:
        probe.close()
    found.add("127.0.0.1")
    return sorted(found, key=lambda a: (ipaddress.ip_address(a).is_loopback, a))


def reachable_urls(host: str, port: int, scheme: str) -> list[str]:
    """The URLs the page is reached at when listening on ``host``."""
    hosts = interface_addresses() if host in ANY_ADDRESS else [host]
    return [f"{scheme}://{f'[{h}]' if ':' in h else h}:{port}/" for h in hosts]


class Listener:
    """Our own accept loop on one listening socket. asyncio's accepts up to the
    backlog at once and only then lets the protocol decide, so a flood took every
    descriptor before the first refusal; here each socket is admitted or refused
    (a short 503, closed at once) as it is accepted."""

    def __init__(self, sock: socket.socket, guard: ConnectionGuard) -> None:
        self.sock = sock
        self.guard = guard
        self.loop = asyncio.get_running_loop()
        self._resume: asyncio.TimerHandle | None = None
        self._starting: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        self._resume = None
        self.loop.add_reader(self.sock.fileno(), self._accept)

    def _accept(self) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                client, peer = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # EMFILE, ENFILE, ENOBUFS: descriptors gone elsewhere
                throttled(log, "accept", logging.ERROR,
                          "cannot accept a connection: %s (pausing 1 s)", exc)  # fmt: skip
                self.loop.remove_reader(self.sock.fileno())
                self._resume = self.loop.call_later(1.0, self.start)
                return
            admitted = self.guard.admit(str(peer[0]) if peer else "?")
            if isinstance(admitted, str):
                self._refuse(client)
                continue
            client.setblocking(False)
            task = self.loop.create_task(self._serve(client, admitted))
            self._starting.add(task)
            task.add_done_callback(self._starting.discard)

    def _refuse(self, client: socket.socket) -> None:
        with contextlib.suppress(OSError):
            client.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                client.recv(65536)  # what it sent already: closing over it would reset
            if self.guard.tls is None:
                client.send(REFUSAL)
        client.close()

    async def _serve(self, client: socket.socket, conn: GuardedConnection) -> None:
        try:
            await self.loop.connect_accepted_socket(lambda: conn, client)
        except OSError:
            self.guard.release(conn)
            client.close()

    def close(self) -> None:
        if self._resume is not None:
            self._resume.cancel()
        with contextlib.suppress(ValueError, OSError):
            self.loop.remove_reader(self.sock.fileno())
        self.sock.close()
        for task in self._starting:
            task.cancel()


def listening_socket(host: str, port: int) -> socket.socket:
    """A non-blocking listening socket (``""`` and ``0.0.0.0``: every IPv4 address)."""
    host = host or "0.0.0.0"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=128)
    sock.setblocking(False)
    return sock


class WebServer:
    """One web app served on ``address``:``port`` with the guard in front."""

    def __init__(self, app: web.Application, settings: Any, guard_key: Any) -> None:
        self.settings = settings
        self.app = app
        self.tls = tls_context(settings.tls_certificate, settings.tls_key)
        self.runner = web.AppRunner(
            app, access_log=None, shutdown_timeout=2.0, keepalive_timeout=settings.idle_timeout
        )
        self.guard = ConnectionGuard(effective_limits(settings), self._handler, self.tls)
        app[guard_key] = self.guard
        self.port: int | None = None
        self.urls: list[str] = []
        self._listener: Listener | None = None
        self._sweeper: asyncio.Task[None] | None = None

    def _handler(self) -> asyncio.Protocol:
        server = self.runner.server
        assert server is not None
        return hardened_handler(server)

    async def start(self) -> None:
        sock = listening_socket(self.settings.address, self.settings.port)
        try:
            await self.runner.setup()
        except BaseException:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        self._listener = Listener(sock, self.guard)
        self._listener.start()
        self.urls = reachable_urls(self.settings.address, self.port,
                                   "https" if self.tls else "http")  # fmt: skip
        self._sweeper = asyncio.get_running_loop().create_task(self.guard.run())
        where = ("every address of this machine (the local network)"
                 if self.settings.address in ANY_ADDRESS else self.settings.address)  # fmt: skip
        log.info("live page on %s (listening on %s, port %s; %s)", " ".join(self.urls), where,
                 self.port, self.guard.summary())  # fmt: skip

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        await self.runner.cleanup()
        for conn in list(self.guard.connections):
            if conn.transport is not None:
                conn.transport.abort()
