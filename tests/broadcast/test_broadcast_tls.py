"""TLS built in: a certificate made here (openssl), the page and feed over https."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
import time

import aiohttp
import pytest
from broadcast_feed import OPERA_GAME, game_feed
from broadcast_sse import read_sse

from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings
from daemon.broadcast.listen import TlsError

OPENSSL = shutil.which("openssl")
pytestmark = pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed")


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def client_context(cert) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(cert))
    return context


async def test_the_page_and_the_feed_are_served_over_tls(live, certificate):
    cert, key = certificate
    server = await live(tls_certificate=str(cert), tls_key=str(key))
    assert server.broadcaster.urls == [f"https://127.0.0.1:{server.broadcaster.port}/"]
    secure = f"https://127.0.0.1:{server.broadcaster.port}"
    connector = aiohttp.TCPConnector(ssl=client_context(cert))
    async with aiohttp.ClientSession(connector=connector) as session:
        async with session.get(secure + "/state.json") as response:
            assert response.status == 200
            assert response.headers["X-Content-Type-Options"] == "nosniff"
        async with session.get(secure + "/events") as feed:
            assert (await read_sse(feed)).data["kind"] == "snapshot"
            events = game_feed(OPERA_GAME[:1])
            server.publish(events)
            assert [(await read_sse(feed)).data["event"] for _ in events] == events
        async with session.ws_connect(secure + "/ws", origin=secure) as ws:
            assert (await ws.receive_json(timeout=10))["kind"] == "snapshot"
    with pytest.raises(aiohttp.ClientError):  # plain HTTP gets nothing
        async with server.session.get(server.url + "/state.json") as response:
            await response.read()


async def test_a_connection_that_never_starts_its_handshake_is_cut(live, certificate):
    cert, key = certificate
    server = await live(tls_certificate=str(cert), tls_key=str(key), header_timeout=0.5)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.broadcaster.port)
    started = time.monotonic()
    with pytest.raises((ConnectionResetError, asyncio.IncompleteReadError)):
        await asyncio.wait_for(reader.readexactly(1), 5)
    assert time.monotonic() - started < 3.0
    writer.close()
    assert server.broadcaster.status()["connections"] == 0


async def test_a_certificate_that_cannot_be_read_is_named(tmp_path):
    settings = BroadcastSettings(address="127.0.0.1", port=0, boards=[BoardSettings()],
                                 tls_certificate=str(tmp_path / "missing.pem"),
                                 tls_key=str(tmp_path / "key.pem"))  # fmt: skip
    with pytest.raises(TlsError, match=r"missing\.pem"):
        await Broadcaster(settings).start()


def test_a_certificate_needs_its_key():
    with pytest.raises(ValueError, match="tls_key"):
        BroadcastSettings(tls_certificate="cert.pem")


def test_check_config_names_a_certificate_it_cannot_read(tmp_path, certificate):
    from daemon.config import ConfigError, load_text

    cert, key = certificate
    good = f"broadcast:\n  tls_certificate: {cert}\n  tls_key: {key}\n"
    assert load_text(good, "hall.yaml", environ={}).broadcast.tls_key == str(key)
    missing = tmp_path / "gone.pem"
    with pytest.raises(ConfigError, match=r"line 3: broadcast\.tls_key: cannot read .*gone\.pem"):
        load_text(f"broadcast:\n  tls_certificate: {cert}\n  tls_key: {missing}\n",
                  "hall.yaml", environ={})  # fmt: skip
