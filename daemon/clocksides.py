"""The event feed, fed back to the DGT clock interpreter: whose clock side is whose.

The clock interpreter learns which side is White's from the moves the rules
core decides (``drivers.clock.sides``). This glue hands it every feed event and
turns what it learnt into feed events of its own: ``clock_sides`` (kept in the
journal, so a restart reuses the mapping) and, when a press contradicts the
mapping, a ``notice`` for the arbiter. Pure: the daemon submits the returned
clock reports to the core and publishes the returned events.
"""

from __future__ import annotations

from typing import Any

from daemon.events import ClockSides, DomainEvent, Notice
from drivers.clock.dgt3000 import DgtClockInterpreter
from drivers.clock.sides import SidesContradicted, SidesLearnt
from drivers.sensors import SensorEvent


def after_event(
    interpreter: DgtClockInterpreter, event: dict[str, Any]
) -> tuple[list[SensorEvent], list[DomainEvent]]:
    """Tell the interpreter one feed event; returns (clock reports for the core,
    feed events to publish)."""
    if event.get("type") == "clock_sides":
        return [], []
    reports = interpreter.observe_event(event)
    published: list[DomainEvent] = []
    for change in interpreter.take_sides_changes():
        if isinstance(change, SidesLearnt):
            published.append(ClockSides(change.t, change.white, change.evidence))
        elif isinstance(change, SidesContradicted):
            message = (
                f"CLOCK SIDES CONTRADICTED: {change.detail}. Moves count on the settle "
                "time until the sides are learnt again; check how the clock stands."
            )
            published.append(ClockSides(change.t, None, change.detail))
            published.append(Notice(change.t, "clock_sides_contradiction", message))
    return reports, published
