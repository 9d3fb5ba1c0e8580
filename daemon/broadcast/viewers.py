"""Writing the feed straight to viewers' sockets, never waiting for one.

With hundreds of viewers, a task woken per viewer per message (and a timer for
each write's time-out) cost more than the feed itself. Instead the hub hands
each viewer's ``TransportSink`` the frames of the events of one turn of the event
loop, joined once for all viewers of the same boards and format
(``Hub._write_out``), and the sink writes them into the connection's transport at
once: one write a viewer a turn, however many boards moved in it. The kernel and
asyncio's write buffer carry it from there.

A viewer that does not read lets its transport buffer grow. The sink measures
that buffer before each write and refuses the message (the hub then drops the
viewer and closes its connection) when more than ``max_messages`` messages or
``max_bytes`` bytes are still waiting in it. A connection whose buffer has not
moved for ``write_timeout`` seconds is dropped by the periodic ``tick``, which
also writes the keep-alives of idle streams: one timer for all viewers.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from daemon.broadcast.hub import Message

VIEWER_BUFFER_LIMIT = 1 << 20
"""Bytes that may wait in one viewer's write buffer before it is dropped: a
stalled phone costs the Pi at most this much memory."""


SSE_PLAIN: Callable[[Message], bytes] = Message.sse
SSE_CHUNKED: Callable[[Message], bytes] = Message.sse_chunk
WS_TEXT: Callable[[Message], bytes] = Message.ws_frame


def http_chunk(frame: bytes) -> bytes:
    """One HTTP/1.1 chunk, for frames written outside the message cache (keep-alives)."""
    return b"%x\r\n%b\r\n" % (len(frame), frame)


class TransportSink:
    """One viewer's connection, written to directly."""

    __slots__ = (
        "encode",
        "idle",
        "last_delivered",
        "max_bytes",
        "max_messages",
        "pending",
        "pending_messages",
        "ping",
        "stalled",
        "transport",
        "written",
        "wrote",
    )

    def __init__(
        self,
        transport: asyncio.WriteTransport,
        encode: Callable[[Message], bytes],
        *,
        ping: bytes | None,
        max_messages: int,
        max_bytes: int = VIEWER_BUFFER_LIMIT,
    ) -> None:
        self.transport = transport
        self.encode = encode
        self.ping = ping  # None: the protocol keeps itself alive (WebSocket heartbeat)
        self.max_messages = max(1, max_messages)
        self.max_bytes = max_bytes
        self.written = 0  # bytes handed to the transport since the start
        #: (end offset, messages) of the writes not yet passed on to the kernel
        self.pending: deque[tuple[int, int]] = deque()
        self.pending_messages = 0
        self.wrote = False  # since the last tick
        self.idle = 0.0  # seconds without a write, counted by ticks
        self.stalled = 0.0  # seconds with a buffer that did not move
        self.last_delivered = 0

    def gone(self) -> bool:
        """The viewer closed its connection (or it was aborted)."""
        return self.transport.is_closing()

    def _delivered(self) -> tuple[int, int]:
        """(bytes waiting in the transport, bytes it passed on to the kernel)."""
        buffered = self.transport.get_write_buffer_size()
        delivered = self.written - buffered
        pending = self.pending
        while pending and pending[0][0] <= delivered:
            self.pending_messages -= pending.popleft()[1]
        return buffered, delivered

    def send(self, message: Message) -> bool:
        """Write the message's frame now; False when the viewer is gone or too far behind."""
        return self.send_frames(self.encode(message), 1)

    def send_frames(self, frames: bytes, count: int) -> bool:
        """Write ``count`` messages' frames, already joined, now; False when the viewer
        is gone or too far behind."""
        transport = self.transport
        if transport.is_closing():
            return False
        buffered, _ = self._delivered()
        if self.pending_messages >= self.max_messages or buffered > self.max_bytes:
            return False
        self._write(frames, count)
        return True

    def send_backlog(self, messages: list[Message]) -> bool:
        """What a new viewer gets first (snapshot, or the events it missed): written
        whatever its size, counted as one message."""
        if self.transport.is_closing():
            return False
        if messages:
            self._write(b"".join(self.encode(m) for m in messages))
        return True

    def _write(self, frame: bytes, count: int = 1) -> None:
        self.transport.write(frame)
        self.written += len(frame)
        self.pending.append((self.written, count))
        self.pending_messages += count
        self.wrote = True

    def tick(self, period: float, keepalive: float, write_timeout: float) -> bool:
        """Every ``period`` seconds: False when the buffer has not moved for
        ``write_timeout`` s; a keep-alive when the stream would otherwise stay
        silent ``keepalive`` s. (A closed connection is the caller's check.)"""
        buffered, delivered = self._delivered()
        if buffered and delivered == self.last_delivered:
            self.stalled += period
            if self.stalled >= write_timeout:
                return False
        else:
            self.stalled = 0.0
        self.last_delivered = delivered
        if self.wrote:
            self.wrote = False
            self.idle = 0.0
        else:
            self.idle += period
        if self.ping is not None and self.idle + period >= keepalive - 1e-9:
            self._write(self.ping)
            self.wrote = False
            self.idle = 0.0
        return True
