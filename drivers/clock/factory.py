"""Build the clock's parts from :class:`ClockSettings`: one place for the daemon to call."""

from __future__ import annotations

from drivers.clock.dgt3000 import ClockModel, ClockWriter, DgtClockInterpreter
from drivers.clock.settings import ClockSettings
from drivers.clock.usb import UsbClock
from drivers.sensors import Side


def clock_interpreter(settings: ClockSettings) -> DgtClockInterpreter | None:
    """The board link's clock interpreter for ``device: dgt``; None otherwise
    (then the link's own default, or no clock at all)."""
    if settings.device != "dgt":
        return None
    return DgtClockInterpreter(settings.parsed_time_control)


def usb_clock(settings: ClockSettings, backend: object | None = None) -> UsbClock | None:
    """The USB clock for ``device: usb``; None otherwise."""
    if settings.device != "usb":
        return None
    return UsbClock(settings.usb, settings.parsed_time_control, backend=backend)


def clock_writer(
    settings: ClockSettings, model: ClockModel | None = "dgt3000", white_side: Side | None = None
) -> ClockWriter | None:
    """What to write to a DGT clock (``model`` from its version ack; set
    ``writer.model`` when it arrives); None when there is nothing to write to.

    ``white_side`` defaults to the configured sides; with ``auto`` it is unknown
    at a game's start, so a set-and-run leaves the clock paused for the first
    press (6.5).
    """
    if settings.device != "dgt" or model is None:
        return None
    if white_side is None:
        fixed: dict[str, Side] = {"left_white": "left", "right_white": "right"}
        white_side = fixed.get(settings.sides)
    return ClockWriter(
        model,
        time_control=settings.parsed_time_control,
        show_moves=settings.show_moves_on_clock,
        set_and_run_at_start=settings.set_and_run_at_start,
        white_side=white_side,
    )
