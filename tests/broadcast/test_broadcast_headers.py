"""Security headers on every response, and the Origin check, on the real server."""

from __future__ import annotations

import base64
import hashlib
import re

import aiohttp
import pytest

AUTH = {"Authorization": "Bearer s3cret"}
PATHS = ["/", "/board.svg", "/state.json", "/game.pgn", "/no/such/page", "/board.svg?board=9"]


@pytest.mark.parametrize("path", PATHS)
async def test_every_response_carries_the_security_headers(live, path):
    server = await live()
    async with server.session.get(server.url + path) as response:
        headers = response.headers
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    policy = headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy


async def test_the_feed_and_the_controls_carry_them_too(live):
    server = await live(token="s3cret")
    async with server.session.get(server.url + "/events") as response:
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    async with server.session.post(server.url + "/control/takeback", headers=AUTH) as response:
        assert response.headers["X-Frame-Options"] == "DENY"


async def test_the_page_s_own_script_is_allowed_by_its_hash_and_no_other(live):
    server = await live()
    async with server.session.get(server.url + "/") as response:
        html = await response.read()
        policy = response.headers["Content-Security-Policy"]
    scripts = re.findall(rb"<script>(.*?)</script>", html, re.S)
    assert scripts
    for script in scripts:
        digest = base64.b64encode(hashlib.sha256(script).digest()).decode()
        assert f"'sha256-{digest}'" in policy
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]


@pytest.mark.parametrize(
    ("origin", "hosts", "allowed"),
    [
        (None, [], True),  # curl, a script: no Origin
        ("same", [], True),  # the page itself
        ("http://evil.example", [], False),
        ("null", [], False),
        ("http://pi.local:8080", ["pi.local"], True),
        ("http://evil.example", ["pi.local"], False),
    ],
)
async def test_controls_check_the_origin(live, origin, hosts, allowed):
    server = await live(token="s3cret", hosts=hosts)
    headers = dict(AUTH)
    if origin == "same":
        origin = server.url
    if origin is not None:
        headers["Origin"] = origin
    if hosts:
        headers["Host"] = "pi.local:8080"
    async with server.session.post(
        server.url + "/control/result", json={"result": "1-0"}, headers=headers
    ) as response:
        assert (response.status == 202) is allowed, await response.text()
        if not allowed:
            assert response.status == 403 and "Origin" in (await response.json())["error"]
    assert len(server.requests) == (1 if allowed else 0)


async def test_with_hosts_configured_a_rebound_dns_name_is_refused(live):
    server = await live(token="s3cret", hosts=["pi.local"])
    headers = {**AUTH, "Host": "evil.example:8080", "Origin": "http://evil.example:8080"}
    async with server.session.post(
        server.url + "/control/result", json={"result": "1-0"}, headers=headers
    ) as response:
        assert response.status == 403 and "Host" in (await response.json())["error"]
    assert server.requests == []


async def test_the_websocket_refuses_a_foreign_page(live):
    server = await live()
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await server.session.ws_connect(
            server.url + "/ws", headers={"Origin": "http://evil.example"}
        )
    assert refused.value.status == 403
    async with server.session.ws_connect(server.url + "/ws", origin=server.url) as ws:
        message = await ws.receive_json(timeout=10)
    assert message["kind"] == "snapshot"


def _network_address() -> str | None:
    """This machine's address towards the network, found without our code."""
    import socket

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


async def test_listening_on_every_address_prints_the_network_address_not_loopback():
    from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings

    settings = BroadcastSettings(address="0.0.0.0", port=0, boards=[BoardSettings(id="1")])
    async with Broadcaster(settings, start_seq=0) as broadcaster, aiohttp.ClientSession() as s:
        urls = broadcaster.urls
        network = _network_address()
        if network is not None:
            assert urls[0] == f"http://{network}:{broadcaster.port}/"
        assert urls[-1] == f"http://127.0.0.1:{broadcaster.port}/"
        for url in urls:  # each one really serves the page
            async with s.get(url + "state.json") as response:
                assert response.status == 200


async def test_a_malformed_request_s_400_carries_the_headers_too(live):
    """aiohttp answers it before any route (found by the property tests)."""
    import asyncio

    server = await live()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.broadcaster.port)
    writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nLast-Event-ID: \x1f\r\n\r\n")
    head = (await asyncio.wait_for(reader.read(), 10)).split(b"\r\n\r\n")[0].decode()
    writer.close()
    assert head.startswith(("HTTP/1.0 400", "HTTP/1.1 400"))
    assert "X-Content-Type-Options: nosniff" in head and "X-Frame-Options: DENY" in head
