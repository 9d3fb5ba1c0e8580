"""Bounded connections on the real server: limits, time-outs, refusals, logs.

The attacker connects from 127.0.0.2 (Linux routes all of 127/8 to loopback), the
honest viewers from 127.0.0.1, as two machines of a hall would.
"""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from broadcast_feed import OPERA_GAME, game_feed
from broadcast_sse import read_sse

from daemon import events

ATTACKER = "127.0.0.2"
PARTIAL = b"GET /state.json HTTP/1.1\r\nHost: x\r\n"  # headers never finished


async def connect(server, source: str = ATTACKER, send: bytes = PARTIAL):
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", server.broadcaster.port, local_addr=(source, 0)
    )
    if send:
        writer.write(send)
        await writer.drain()
    return reader, writer


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """What the server sent before closing (a reset counts as closed); fails if it
    is still open after ``seconds``."""
    try:
        return await asyncio.wait_for(reader.read(), seconds)
    except ConnectionResetError:
        return b""


async def drip_until_closed(reader, writer, seconds: float) -> float:
    """Send a header line every 0.1 s until the server closes; the seconds it took."""
    started = time.monotonic()

    async def drip() -> None:
        for _ in range(100):
            writer.write(b"X-A: b\r\n")
            await asyncio.sleep(0.1)

    dripping = asyncio.create_task(drip())
    try:
        await closed_within(reader, seconds)
    finally:
        dripping.cancel()
    return time.monotonic() - started


async def test_connections_beyond_the_per_address_limit_are_refused_at_once(live):
    server = await live(max_connections_per_address=5)
    held = [await connect(server) for _ in range(5)]
    reader, _ = await connect(server, send=b"")
    reply = await closed_within(reader, 5)
    assert reply.startswith(b"HTTP/1.1 503") and b"too many connections" in reply
    async with server.session.get(server.url + "/state.json") as response:  # 127.0.0.1
        assert response.status == 200
        status = (await response.json())["status"]
    assert status["limits"]["max_connections_per_address"] == 5
    assert status["refused_or_closed"]["too many connections from one address"] == 1
    for _, writer in held:
        writer.close()


async def test_a_full_server_makes_room_for_a_newcomer_and_keeps_its_viewers(live):
    server = await live(max_connections=12, max_connections_per_address=100)
    server.publish(game_feed(OPERA_GAME[:2]))
    async with server.session.get(server.url + "/events") as viewer:
        assert (await read_sse(viewer)).data["kind"] == "snapshot"
        held = [await connect(server) for _ in range(11)]  # the viewer + 11: full
        started = time.monotonic()
        async with server.session.get(server.url + "/state.json") as response:
            assert response.status == 200
        assert time.monotonic() - started < 2.0
        end = events.GameEnd(t=99.0, result="1-0", reason="resignation").to_dict()
        server.publish([end])  # the established viewer goes on
        assert (await read_sse(viewer)).data["event"] == end
    assert server.broadcaster.status()["refused_or_closed"] == {"evicted for a newcomer": 1}
    for _, writer in held:
        writer.close()


async def test_slow_headers_are_cut_off_after_the_header_timeout(live):
    server = await live(header_timeout=0.5)
    reader, writer = await connect(server, send=b"GET / HTTP/1.1\r\n")
    assert await drip_until_closed(reader, writer, 5) < 3.0
    silent, _ = await connect(server, send=b"")  # connects and says nothing
    await closed_within(silent, 5)


async def test_a_dripping_body_gets_408_after_the_body_timeout(live):
    server = await live(token="s3cret", body_timeout=0.5)
    reader, writer = await connect(
        server,
        send=b"POST /control/takeback HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\n"
        b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    )
    started = time.monotonic()
    reply = await asyncio.wait_for(reader.readline(), 5)
    assert reply.startswith(b"HTTP/1.1 408")
    assert time.monotonic() - started < 3.0
    writer.close()
    assert server.requests == []


async def test_an_idle_keep_alive_connection_is_closed(live):
    server = await live(idle_timeout=0.5)
    reader, writer = await connect(server, send=b"GET /state.json HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (await asyncio.wait_for(reader.readline(), 5)).startswith(b"HTTP/1.1 200")
    started = time.monotonic()
    await closed_within(reader, 5)
    assert 0.4 < time.monotonic() - started < 3.0
    writer.close()


async def test_a_flood_of_refusals_writes_one_log_line_with_a_count(live, caplog):
    server = await live(max_connections_per_address=2)
    held = [await connect(server) for _ in range(2)]
    with caplog.at_level(logging.INFO):
        for _ in range(40):
            reader, writer = await connect(server, send=b"")
            await closed_within(reader, 5)
            writer.close()
    lines = [r for r in caplog.records if "refused a connection" in r.getMessage()]
    assert len(lines) <= 1
    assert server.broadcaster.status()["refused_or_closed"][
        "too many connections from one address"
    ] == 40
    for _, writer in held:
        writer.close()


async def test_the_limits_are_in_state_json_and_follow_the_descriptor_limit(live):
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    server = await live(max_connections=10**6)
    async with server.session.get(server.url + "/state.json") as response:
        status = (await response.json())["status"]
    limits = status["limits"]
    assert limits["descriptors"] >= soft
    assert limits["reserved_descriptors"] == 64 + 4  # one board
    assert limits["max_connections"] < limits["descriptors"] - limits["reserved_descriptors"]
    assert status["connections"] >= 1
    assert server.broadcaster.server.guard.summary().startswith("web ")


@pytest.mark.parametrize("timeout", ["header_timeout", "body_timeout", "idle_timeout"])
def test_time_outs_must_be_sane(timeout):
    from daemon.broadcast import BroadcastSettings

    for bad in (0, -1, float("nan"), 1e9):
        with pytest.raises(ValueError, match=timeout):
            BroadcastSettings(**{timeout: bad})


async def test_slow_headers_of_a_second_request_on_a_kept_alive_connection_are_cut(live):
    server = await live(header_timeout=0.5, idle_timeout=30)
    reader, writer = await connect(server, send=b"GET /state.json HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (await asyncio.wait_for(reader.readline(), 5)).startswith(b"HTTP/1.1 200")
    writer.write(b"GET / HTTP/1.1\r\n")  # the next request starts, and drips
    assert await drip_until_closed(reader, writer, 10) < 3.0  # not the idle time-out
