"""The live broadcast: web page, SSE/WebSocket feed, live PGN, MQTT, relay.

The daemon holds one ``Broadcaster``; see ``docs/broadcast.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from daemon.lazy import lazy_attributes

if TYPE_CHECKING:
    from daemon.broadcast.hub import Hub
    from daemon.broadcast.movelist import figurine
    from daemon.broadcast.server import Broadcaster
    from daemon.broadcast.settings import (
        BoardSettings,
        BroadcastSettings,
        LichessSettings,
        MqttSettings,
    )

#: Where each name lives: imported on first use, so that reading the configuration
#: (``daemon.broadcast.settings``) does not import aiohttp for every command.
_HOMES = {
    "BoardSettings": "settings",
    "BroadcastSettings": "settings",
    "Broadcaster": "server",
    "Hub": "hub",
    "LichessSettings": "settings",
    "MqttSettings": "settings",
    "figurine": "movelist",
}

__getattr__ = lazy_attributes(__name__, _HOMES)


__all__ = [
    "BoardSettings",
    "BroadcastSettings",
    "Broadcaster",
    "Hub",
    "LichessSettings",
    "MqttSettings",
    "figurine",
]
