"""The default BWTIME interpreter: clock messages to ClockReport and ButtonPress.

The link hands every decoded BWTIME (times or ack) to a *clock interpreter*,
an object with ``feed(t, msg) -> list[SensorEvent]``. This one is deliberately
simple: a fixed side is White (left unless told otherwise), no filtering, no
memory. The clock helper's richer interpreter (``drivers/clock/dgt3000.py``)
replaces it where it matters: defensive filtering, learning which side is White.
"""

from __future__ import annotations

from typing import Protocol

from drivers.dgt.protocol import ClockAck, ClockTimes
from drivers.sensors import ButtonPress, ClockReport, Colour, SensorEvent


class ClockInterpreter(Protocol):
    """What the link needs from a clock interpreter."""

    def feed(self, t: float, msg: ClockTimes | ClockAck) -> list[SensorEvent]: ...


class SimpleClockInterpreter:
    """Left = White (or right, if ``white_on_left`` is False); every message passes."""

    def __init__(self, white_on_left: bool = True) -> None:
        self.white_on_left = white_on_left

    def feed(self, t: float, msg: ClockTimes | ClockAck) -> list[SensorEvent]:
        if isinstance(msg, ClockAck):
            return [ButtonPress(t, msg.button)] if msg.button else []
        if msg.no_clock:
            return []
        white, black = (msg.left, msg.right) if self.white_on_left else (msg.right, msg.left)
        left_colour: Colour = "white" if self.white_on_left else "black"
        right_colour: Colour = "black" if self.white_on_left else "white"
        running: Colour | None = None
        if msg.running and msg.left_to_move != msg.right_to_move:
            running = left_colour if msg.left_to_move else right_colour
        flags: list[Colour] = []
        if white.flag_fallen:
            flags.append("white")
        if black.flag_fallen:
            flags.append("black")
        return [
            ClockReport(
                t,
                float(white.total_seconds),
                float(black.total_seconds),
                running,
                tuple(flags),
            )
        ]
