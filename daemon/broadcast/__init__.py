"""The live broadcast: web page, SSE/WebSocket feed, live PGN, MQTT, relay.

The daemon holds one ``Broadcaster``; see ``docs/broadcast.md``.
"""

from daemon.broadcast.hub import Hub, figurine
from daemon.broadcast.server import Broadcaster
from daemon.broadcast.settings import (
    BoardSettings,
    BroadcastSettings,
    LichessSettings,
    MqttSettings,
)

__all__ = [
    "BoardSettings",
    "BroadcastSettings",
    "Broadcaster",
    "Hub",
    "LichessSettings",
    "MqttSettings",
    "figurine",
]
