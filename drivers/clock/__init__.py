"""Chess clocks: the DGT XL / DGT 3000 through the board, and USB clocks.

They report what a clock knows, left and right; whose side is whose is the
daemon's decision (``daemon.clock.sides``).

- ``settings``: :class:`ClockSettings`, the configuration's ``clock:`` section.
- ``tracker``: raw left/right readings to ClockReading events (the filters).
- ``dgt3000``: the board link's clock interpreter, and the ClockWriter.
- ``usb``: a HID-style USB clock read with pyusb.
- ``devices``: which boards, clocks and serial ports are plugged in.
- ``factory``: the parts above built from the settings.
"""

from drivers.clock.settings import (
    DEFAULT_BUTTON_ACTIONS,
    BitField,
    ClockSettings,
    ClockSettingsError,
    UsbClockSettings,
    UsbReportLayout,
)

__all__ = [
    "DEFAULT_BUTTON_ACTIONS",
    "BitField",
    "ClockSettings",
    "ClockSettingsError",
    "UsbClockSettings",
    "UsbReportLayout",
]
