"""The default BWTIME interpreter: clock messages to ClockReading and ButtonPress.

The link hands every decoded BWTIME (times or ack) to a *clock interpreter*, an
object with ``interpret(t, msg) -> list[SensorEvent]``. This one is deliberately
simple: every message passes as the clock shows it, left and right, no filtering,
no memory. The clock helper's richer interpreter (``drivers/clock/dgt3000.py``)
replaces it where it matters: defensive filtering, news only. Neither knows whose
side is whose: the daemon decides that (``daemon.clock.sides``).
"""

from __future__ import annotations

from typing import Protocol

from drivers.dgt.protocol import ClockAck, ClockTimes
from drivers.sensors import ButtonPress, ClockReading, SensorEvent, Side


class ClockInterpreter(Protocol):
    """What the link needs from a clock interpreter."""

    def interpret(self, t: float, msg: ClockTimes | ClockAck) -> list[SensorEvent]: ...


class SimpleClockInterpreter:
    """Every message passes: the times, the side running, the fallen flags."""

    def interpret(self, t: float, msg: ClockTimes | ClockAck) -> list[SensorEvent]:
        """One decoded BWTIME: its reading (none while no clock is plugged in), or
        its button press."""
        if isinstance(msg, ClockAck):
            return [ButtonPress(t, msg.button)] if msg.button else []
        if msg.no_clock:
            return []
        running: Side | None = None
        if msg.running and msg.left_to_move != msg.right_to_move:
            running = "left" if msg.left_to_move else "right"
        flags: list[Side] = []
        if msg.left.flag_fallen:
            flags.append("left")
        if msg.right.flag_fallen:
            flags.append("right")
        return [
            ClockReading(
                t,
                float(msg.left.total_seconds),
                float(msg.right.total_seconds),
                running,
                tuple(flags),
            )
        ]
