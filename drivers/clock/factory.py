"""Build the clock's parts from :class:`ClockSettings`: one place for the daemon to call."""

from __future__ import annotations

from drivers.clock.dgt3000 import ClockModel, ClockWriter, DgtClockInterpreter
from drivers.clock.settings import ClockSettings
from drivers.clock.usb import UsbClock


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
    settings: ClockSettings, model: ClockModel | None = "dgt3000"
) -> ClockWriter | None:
    """What to write to a DGT clock (``model`` from its version ack; set
    ``writer.model`` when it arrives); None when there is nothing to write to.
    Which side is White's the daemon tells it at each game's start."""
    if settings.device != "dgt" or model is None:
        return None
    return ClockWriter(
        model,
        time_control=settings.parsed_time_control,
        show_moves=settings.show_moves_on_clock,
        set_and_run_at_start=settings.set_and_run_at_start,
    )
