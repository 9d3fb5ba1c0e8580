"""The rules core alone on a whole sensor log: what tests and benchmarks judge it by.

No outputs, no phrasing, no journal: the core's own decisions, fast. (``replay``
runs the daemon's whole pipeline instead, configured as ``run`` is.)
"""

from __future__ import annotations

from collections.abc import Iterable

from daemon.game.events import DomainEvent
from daemon.rules import RulesCore, RulesSettings
from drivers.sensors import SensorEvent


def run(events: Iterable[SensorEvent], settings: RulesSettings | None = None) -> list[DomainEvent]:
    """Feed a whole log, then let every pending timer run out."""
    core = RulesCore(settings or RulesSettings())
    out: list[DomainEvent] = []
    for event in events:
        out += core.judge(event)
    while (deadline := core.next_deadline()) is not None:
        out += core.tick(deadline)
    return out
