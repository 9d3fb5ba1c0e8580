"""``Origin`` is compared as browsers compare origins: scheme, host and port, on
the real server. A page of the same machine on another port or scheme is
another site (a second web app on the Pi, a router's or printer's page)."""

from __future__ import annotations

import aiohttp
import pytest
from test_broadcast_tls import certificate, client_context  # noqa: F401  (a fixture)

AUTH = {"Authorization": "Bearer s3cret"}


async def control_status(session: aiohttp.ClientSession, url: str, headers: dict[str, str]):
    async with session.post(url + "/control/check", json={}, headers={**AUTH, **headers}) as r:
        return r.status, await r.text()


async def ws_status(session: aiohttp.ClientSession, url: str, origin: str) -> int:
    try:
        async with session.ws_connect(url + "/ws", origin=origin) as ws:
            assert (await ws.receive_json(timeout=10))["kind"] == "snapshot"
            return 101
    except aiohttp.WSServerHandshakeError as refused:
        return refused.status


def elsewhere(port: int) -> list[str]:
    """Origins of other sites on this very host."""
    return [
        f"http://127.0.0.1:{port + 1}",  # another port
        "http://127.0.0.1",  # port 80
        f"https://127.0.0.1:{port}",  # the other scheme
        f"ws://127.0.0.1:{port}",  # not a page's scheme
        f"http://127.0.0.1:{port}/arbiter",  # an Origin has no path
    ]


async def test_the_same_host_on_another_port_or_scheme_is_refused(live):
    server = await live(token="s3cret")
    port = server.broadcaster.port
    for origin in elsewhere(port):
        status, text = await control_status(server.session, server.url, {"Origin": origin})
        assert status == 403 and "Origin" in text, origin
        assert await ws_status(server.session, server.url, origin) == 403, origin
    assert (await control_status(server.session, server.url, {"Origin": server.url}))[0] == 200
    assert await ws_status(server.session, server.url, server.url) == 101


async def test_the_port_a_browser_sees_is_the_host_header_s(live):
    """Behind a port redirect (80 -> 8080) the page's origin has no port: the
    ``Host`` it sends has none either, and both mean port 80."""
    server = await live(token="s3cret", hosts=["pi.local"])
    assert (
        await control_status(
            server.session, server.url, {"Host": "pi.local", "Origin": "http://pi.local"}
        )
    )[0] == 200
    for origin in ("http://pi.local:8080", "https://pi.local", "http://pi.local:80x"):
        status, _ = await control_status(server.session, server.url,
                                         {"Host": "pi.local", "Origin": origin})  # fmt: skip
        assert status == 403, origin


async def test_over_tls_only_the_https_origin_is_the_page_s(live, certificate):  # noqa: F811
    cert, key = certificate
    server = await live(token="s3cret", tls_certificate=str(cert), tls_key=str(key))
    secure = f"https://127.0.0.1:{server.broadcaster.port}"
    connector = aiohttp.TCPConnector(ssl=client_context(cert))
    async with aiohttp.ClientSession(connector=connector) as session:
        plain = f"http://127.0.0.1:{server.broadcaster.port}"
        status, _ = await control_status(session, secure, {"Origin": plain})
        assert status == 403
        assert await ws_status(session, secure, plain) == 403
        assert (await control_status(session, secure, {"Origin": secure}))[0] == 200
        assert await ws_status(session, secure, secure) == 101


@pytest.mark.parametrize("origin", ["null", "http://", "http://127.0.0.1:99999", "  "])
async def test_a_malformed_origin_is_refused_without_a_traceback(live, origin):
    server = await live(token="s3cret")
    status, text = await control_status(server.session, server.url, {"Origin": origin})
    assert status == 403 and "Origin" in text
