"""Bounded connections on the real server: limits, time-outs, refusals, logs.

The attacker connects from 127.0.0.2 (Linux routes all of 127/8 to loopback), the
honest viewers from 127.0.0.1, as two machines of a hall would.
"""

from __future__ import annotations

import asyncio
import logging
import time

import aiohttp
import pytest
from broadcast_feed import OPERA_GAME, game_feed
from broadcast_sse import read_sse

from daemon.game import events

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
    assert (
        server.broadcaster.status()["refused_or_closed"]["too many connections from one address"]
        == 40
    )
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


class FromAddress:
    """One client machine: an aiohttp session whose sockets leave from ``source``."""

    def __init__(self, server, source: str) -> None:
        self.server = server
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(local_addr=(source, 0), limit=0)
        )

    async def viewer(self) -> aiohttp.ClientWebSocketResponse:
        """A WebSocket viewer that has its first message (the snapshot)."""
        ws = await self.session.ws_connect(self.server.url + "/ws")
        assert (await ws.receive_json(timeout=10))["kind"] == "snapshot"
        return ws

    async def close(self) -> None:
        await self.session.close()


async def test_viewers_of_one_address_are_capped_below_its_connections(live):
    server = await live()  # 64 connections, 16 viewers per address
    machine = FromAddress(server, "127.0.0.3")
    try:
        held = [await machine.viewer() for _ in range(16)]
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await machine.session.ws_connect(server.url + "/ws")
        assert refused.value.status == 503
        async with machine.session.get(server.url + "/events") as response:
            assert response.status == 503
            assert "viewers" in (await response.json())["error"]
        async with machine.session.get(server.url + "/state.json") as response:
            assert response.status == 200  # the address may still use the page
            status = (await response.json())["status"]
        assert status["limits"]["max_viewers_per_address"] == 16
        assert status["refused_or_closed"]["too many viewers from one address"] == 2
        async with server.session.ws_connect(server.url + "/ws") as other:  # 127.0.0.1
            assert (await other.receive_json(timeout=10))["kind"] == "snapshot"
        await held.pop().close()  # a page closed frees its place
        for _ in range(50):  # the server ends the feed a moment after the close
            try:
                held.append(await machine.viewer())
                break
            except aiohttp.WSServerHandshakeError:
                await asyncio.sleep(0.1)
        assert len(held) == 16
    finally:
        await machine.close()


async def test_a_server_full_of_viewers_takes_a_newcomer_in_place_of_the_heaviest_s_oldest(live):
    """The issue's attack, scaled down: WebSockets from 15 addresses fill the server."""
    server = await live(max_connections=62)
    server.publish(game_feed(OPERA_GAME[:2]))
    machines = [FromAddress(server, f"127.0.0.{10 + i}") for i in range(15)]
    try:
        feeds = [[await m.viewer() for _ in range(6 if i == 0 else 4)]
                 for i, m in enumerate(machines)]  # fmt: skip
        newcomer = await server.session.ws_connect(server.url + "/ws")  # 127.0.0.1
        assert (await newcomer.receive_json(timeout=10))["kind"] == "snapshot"
        oldest = feeds[0].pop(0)  # 127.0.0.10 held the most: its first viewer goes
        assert (await oldest.receive(timeout=10)).type in (
            aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR,
        )  # fmt: skip
        # An attacker's address reconnecting cannot push the newcomer out.
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await machines[1].session.ws_connect(server.url + "/ws")
        assert refused.value.status == 503
        end = events.GameEnd(t=99.0, result="1-0", reason="resignation").to_dict()
        server.publish([end])
        for ws in [newcomer] + [ws for feed in feeds for ws in feed]:
            assert (await ws.receive_json(timeout=10))["event"] == end
        counts = server.broadcaster.status()["refused_or_closed"]
        assert counts["a viewer evicted for a newcomer"] == 1
        await newcomer.close()
    finally:
        for machine in machines:
            await machine.close()


def test_an_ipv6_client_counts_as_its_whole_slash_64():
    """An IPv6 home or phone has a /64 to rotate through: without this every
    per-address limit (connections, feeds, wrong tokens) was one of 2^64. (The
    guard itself: this machine's loopback has one IPv6 address, ::1.)"""
    from daemon.broadcast.connections import ConnectionGuard, Limits, client_key

    limits = Limits(max_connections=100, per_address=4, viewers_per_address=2,
                    header_timeout=10, idle_timeout=30, body_timeout=10)  # fmt: skip
    guard = ConnectionGuard(limits, inner_factory=asyncio.Protocol)
    for i in range(4):
        assert not isinstance(guard.admit(f"2001:db8:1:2::{i + 1:x}"), str)
    assert (
        guard.admit("2001:db8:1:2:ffff:ffff:ffff:ffff") == "too many connections from one address"
    )
    assert not isinstance(guard.admit("2001:db8:1:3::1"), str)  # the next /64: another client
    assert guard.status()["addresses"] == 2
    assert client_key("::ffff:192.168.1.20") == "192.168.1.20"  # a dual-stack socket's IPv4
    assert client_key("192.168.1.20") == "192.168.1.20" and client_key("::1") == "::1"
    assert client_key("fe80::1%eth0") == "fe80::/64" and client_key("?") == "?"


async def test_the_time_out_timer_sleeps_while_every_connection_is_a_viewer(live):
    """A hall's screens are feeds under way, with no time-out to watch: the guard's
    timer must not wake the daemon for them (each wake is CPU a Pi's budget counts),
    yet a connection made meanwhile is cut at its own time-out."""
    server = await live(header_timeout=0.5, idle_timeout=0.5)
    guard = server.broadcaster.server.guard
    sweeps = []
    real_sweep = guard.sweep
    guard.sweep = lambda: (sweeps.append(time.monotonic()), real_sweep())
    async with server.session.get(server.url + "/events") as viewer:
        await read_sse(viewer)  # the snapshot: the feed is under way
        await asyncio.sleep(2.0)  # a fixed period of a quarter time-out: 16 sweeps
        assert len(sweeps) <= 2
        assert guard.due() is None
        started = time.monotonic()
        silent, _ = await connect(server, send=b"")
        await closed_within(silent, 5)
        assert time.monotonic() - started < 1.5


@pytest.mark.parametrize("turns_before_cancel", [0, 1, 2, 3])
async def test_the_time_out_timer_stops_when_cancelled_as_it_wakes(turns_before_cancel):
    """The server's stop cancels the timer; a connection that comes in the same turns
    wakes it. In Python 3.11 ``asyncio.wait_for`` could swallow such a cancellation,
    and the daemon's stop then hung (a CI run's teardown timed out)."""
    from daemon.broadcast.connections import ConnectionGuard, Limits

    limits = Limits(max_connections=8, per_address=8, viewers_per_address=4,
                    header_timeout=10.0, idle_timeout=30.0, body_timeout=10.0)  # fmt: skip
    for _ in range(20):
        guard = ConnectionGuard(limits, asyncio.Protocol)
        timer = asyncio.create_task(guard.run())
        await asyncio.sleep(0.01)  # asleep: nothing to time
        guard.admit("127.0.0.1")  # its headers are timed: sooner than the sleep
        for _ in range(turns_before_cancel):
            await asyncio.sleep(0)
        timer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(timer, 2)


async def test_a_storm_of_new_connections_wakes_the_time_out_timer_once():
    """A hall's phones reconnecting together: the first one wakes the sleeping timer,
    and the others' headers time out later than it will sweep anyway, so they do not
    wake it again (each wake reads every connection)."""
    from daemon.broadcast.connections import ConnectionGuard, Limits

    limits = Limits(max_connections=200, per_address=200, viewers_per_address=200,
                    header_timeout=10.0, idle_timeout=30.0, body_timeout=10.0)  # fmt: skip
    guard = ConnectionGuard(limits, asyncio.Protocol)
    reads = []
    real_due = guard.due
    guard.due = lambda: (reads.append(1), real_due())[1]
    timer = asyncio.create_task(guard.run())
    await asyncio.sleep(0.01)
    asleep = len(reads)
    for _ in range(100):
        guard.admit("127.0.0.1")
        await asyncio.sleep(0)
    assert len(reads) - asleep <= 2
    timer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await timer
