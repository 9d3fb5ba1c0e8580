"""The fan-out writes each message straight to every viewer's connection.

What a viewer notices: keep-alives on an idle stream, messages of any size intact
over SSE (HTTP/1.1 chunks or a plain HTTP/1.0 stream) and WebSocket, and a
connection that stops moving being closed even when no further event comes. The
slow-viewer rule itself (how many messages or bytes may wait) is checked on a
transport that never sends anything on.
"""

from __future__ import annotations

import asyncio
import json
import socket

from broadcast_feed import OPERA_GAME, game_feed
from broadcast_sse import WAIT, read_sse

from daemon.broadcast.hub import Message
from daemon.broadcast.viewers import SSE_CHUNKED, SSE_PLAIN, TransportSink
from daemon.game import events

BIG = "♘" * 40_000  # 120,000 bytes of UTF-8: the WebSocket's 64-bit length, many TCP segments


async def test_an_idle_sse_stream_gets_keepalives(live):
    server = await live(keepalive=0.2)
    async with server.session.get(server.url + "/events") as response:
        await read_sse(response)  # the snapshot
        comments = 0
        while comments < 2:
            line = await asyncio.wait_for(response.content.readline(), WAIT)
            assert line, "the stream ended"
            comments += line.startswith(b":")


async def test_an_idle_page_stream_gets_ping_events(live):
    server = await live(keepalive=0.2)
    async with server.session.get(server.url + "/events?state=1") as response:
        await read_sse(response)
        ping = await read_sse(response)
    assert ping.event == "ping" and ping.id is None


async def test_large_messages_arrive_intact_over_sse_and_websocket(live):
    server = await live()
    big = events.Notice(t=1, code="pad", message=BIG).to_dict()
    async with (
        server.session.get(server.url + "/events") as response,
        server.session.ws_connect(server.url + "/ws") as ws,
    ):
        await read_sse(response)
        json.loads(await ws.receive_str(timeout=WAIT))  # the snapshot
        feed = game_feed(OPERA_GAME[:2])
        server.publish([feed[0], big, *feed[1:]])
        over_sse = [await read_sse(response) for _ in range(len(feed) + 1)]
        over_ws = [json.loads(await ws.receive_str(timeout=WAIT)) for _ in range(len(feed) + 1)]
    expected = [feed[0], big, *feed[1:]]
    assert [m.data["event"] for m in over_sse] == expected
    assert [m["event"] for m in over_ws] == expected
    assert [m.id for m in over_sse] == [m["seq"] for m in over_ws]


async def test_an_http10_viewer_gets_a_plain_event_stream(live):
    server = await live()
    feed = game_feed(OPERA_GAME[:2])
    reader, writer = await asyncio.open_connection("127.0.0.1", server.broadcaster.port)
    writer.write(b"GET /events HTTP/1.0\r\nHost: localhost\r\n\r\n")
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT)
    assert head.startswith(b"HTTP/1.0 200") and b"chunked" not in head.lower()
    for _ in range(int(WAIT * 20)):  # registered once the snapshot is written
        if server.broadcaster.hub.subscribers:
            break
        await asyncio.sleep(0.05)
    server.publish(feed)
    ids: list[int] = []
    while len(ids) < 1 + len(feed):  # the snapshot (its id: the number it is at), the events
        line = await asyncio.wait_for(reader.readline(), WAIT)
        assert line, "the stream ended"
        if line.startswith(b"id: "):
            ids.append(int(line[4:]))
        elif line.startswith(b"data: ") and ids:
            assert json.loads(line[6:])["seq"] == ids[-1]
    writer.close()
    assert ids == list(range(len(feed) + 1))


async def test_a_connection_that_stops_moving_is_closed_after_write_timeout(live):
    server = await live(write_timeout=0.5, client_queue=100_000)
    hub = server.broadcaster.hub
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.connect(("127.0.0.1", server.broadcaster.port))
    stalled.sendall(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")  # and never reads
    for _ in range(int(WAIT * 100)):
        if hub.subscribers:
            break
        await asyncio.sleep(0.01)
    (viewer,) = hub.subscribers
    pad = events.Notice(t=0, code="pad", message="x" * 4000).to_dict()
    published = 0  # until something waits in the server's buffer, far below 1 MiB
    while viewer.sink.transport.get_write_buffer_size() == 0 and published < 2000:
        server.broadcaster.publish("1", pad)
        published += 1
        await asyncio.sleep(0.001)
    assert not viewer.dropped, "dropped before the time-out"
    for _ in range(int(WAIT * 100)):  # no further event: only the time-out can drop it
        if viewer.dropped:
            break
        await asyncio.sleep(0.01)
    stalled.close()
    assert viewer.dropped and hub.dropped_viewers == 1


class StuckTransport:
    """A transport whose peer never reads: everything written stays buffered."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    def get_write_buffer_size(self) -> int:
        return len(self.data)

    def is_closing(self) -> bool:
        return False

    def flush(self, size: int) -> None:
        del self.data[:size]


def _event(seq: int, size: int = 10) -> Message:
    return Message("event", json.dumps({"seq": seq, "pad": "x" * size}), seq, "1")


def test_a_viewer_may_fall_client_queue_messages_behind_and_no_further():
    transport = StuckTransport()
    sink = TransportSink(transport, SSE_PLAIN, ping=None, max_messages=3)
    assert sink.send_backlog([_event(1), _event(2), _event(3), _event(4)])  # counts as one
    assert [sink.send(_event(seq)) for seq in (5, 6, 7)] == [True, True, False]
    transport.flush(len(transport.data))  # the viewer read everything
    assert sink.send(_event(7))
    assert transport.data == _event(7).sse()


def test_a_viewer_may_hold_max_bytes_and_no_more():
    transport = StuckTransport()
    sink = TransportSink(transport, SSE_CHUNKED, ping=None, max_messages=1000, max_bytes=5000)
    sent = 0
    while sink.send(_event(sent, size=1000)):
        sent += 1
    assert 4 <= sent <= 6
    assert transport.get_write_buffer_size() > 5000


def test_ticks_send_keepalives_only_on_idle_streams_and_drop_a_stuck_one():
    transport = StuckTransport()
    sink = TransportSink(transport, SSE_PLAIN, ping=b": keep-alive\n\n", max_messages=10)
    assert sink.tick(1.0, keepalive=2.0, write_timeout=100.0)
    assert transport.data == b": keep-alive\n\n"  # a second tick would pass 2 s of silence
    transport.flush(len(transport.data))
    sink.send(_event(1))
    transport.flush(len(transport.data))
    assert sink.tick(1.0, keepalive=2.0, write_timeout=100.0)
    assert transport.data == b""  # it wrote during this tick: no keep-alive
    sink.send(_event(2))  # now stuck in the buffer
    assert sink.tick(1.0, keepalive=100.0, write_timeout=2.5)
    assert sink.tick(1.0, keepalive=100.0, write_timeout=2.5)
    assert not sink.tick(1.0, keepalive=100.0, write_timeout=2.5)
