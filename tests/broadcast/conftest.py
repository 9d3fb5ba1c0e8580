"""Fixtures for the broadcast: a real server on a loopback port, an SSE reader."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest

from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings
from drivers.sensors import Request


@pytest.fixture(autouse=True)
def _own_log_throttle(monkeypatch):
    """Each test its own log throttle: a cause another test logged a moment ago
    must not silence the line this test looks for (the throttle is process-wide)."""
    from daemon.broadcast import logthrottle

    monkeypatch.setattr(logthrottle, "THROTTLE", logthrottle.LogThrottle())


@dataclass
class LiveServer:
    broadcaster: Broadcaster
    session: aiohttp.ClientSession
    requests: list[tuple[str, Request]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.broadcaster.port}"

    def publish(self, events: list[dict[str, Any]], board: str = "1") -> None:
        for event in events:
            self.broadcaster.publish(board, event)


@pytest.fixture
async def live() -> AsyncIterator[Callable[..., Any]]:
    """Start Broadcasters on 127.0.0.1, port 0, settings overridden by kwargs."""
    servers: list[LiveServer] = []

    async def start(**overrides: Any) -> LiveServer:
        overrides.setdefault("boards", [BoardSettings(id="1", white="Morphy", black="Duke")])
        settings = BroadcastSettings(address="127.0.0.1", port=0, **overrides)
        requests: list[tuple[str, Request]] = []
        broadcaster = Broadcaster(
            settings, on_request=lambda board, req: requests.append((board, req)), start_seq=0
        )
        await broadcaster.start()
        server = LiveServer(broadcaster, aiohttp.ClientSession(), requests)
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.session.close()
        await server.broadcaster.stop()


def _start_broker(directory):
    from mqtt_helpers import MOSQUITTO, Broker

    if MOSQUITTO is None:
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    from mqtt_helpers import free_port

    server = Broker(directory)
    for attempt in range(3):  # a free port may be taken between choosing and binding
        try:
            server.start()
            return server
        except RuntimeError:
            if attempt == 2:
                raise
            server.use_port(free_port())
    return server


@pytest.fixture(scope="session")
def broker(tmp_path_factory):
    """One Mosquitto per test session on a free loopback port (skipped where absent)."""
    server = _start_broker(tmp_path_factory.mktemp("mosquitto"))
    yield server
    server.stop()


@pytest.fixture
def own_broker(tmp_path):
    """A Mosquitto of this test alone, for tests that restart it."""
    server = _start_broker(tmp_path)
    yield server
    server.stop()
