"""The clock's part of the configuration, as plain frozen dataclasses.

The daemon's configuration loader fills these from the YAML ``clock:`` section
(``ClockSettings.from_mapping`` does the checking, with messages that name the
key); every field has a default so that a missing section means "a DGT clock
on the board, sides learnt from the first start".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from daemon.timecontrol import TimeControl, TimeControlError, parse_time_control
from drivers.sensors import CLOCK_BUTTONS

ClockSource = Literal["dgt", "usb", "none"]
SideMapping = Literal["auto", "left_white", "right_white"]
TimeFormat = Literal["bcd_hms", "u16le", "u16be", "u32le_ms", "u32be_ms"]

#: The DGT USB vendor id (boards; the clocks have no USB of their own).
DGT_VENDOR_ID = 0x045B

#: What each DGT 3000 button asks for by default (Appendix E.2.9d): the rules
#: core turns a ButtonPress into an InfoRequest with this ``what``.
DEFAULT_BUTTON_ACTIONS: Mapping[str, str] = {
    "back": "last",  # repeat the last move
    "plus": "clock",  # both clock times
    "minus": "move_number",  # the number of moves completed
    "ok": "board",  # read the position
}

#: The requests a button can be mapped to (InfoRequest.what), or "none".
BUTTON_ACTIONS = ("last", "clock", "move_number", "board", "none")


class ClockSettingsError(ValueError):
    """A clock setting that cannot work; the message names the key."""


@dataclass(frozen=True, slots=True)
class BitField:
    """One bit (or group of bits) in a USB report: set when ``byte & mask``."""

    offset: int  # byte offset in the report
    mask: int = 0x01  # the bits that mean "yes"

    def read(self, report: bytes) -> bool:
        return bool(report[self.offset] & self.mask)


@dataclass(frozen=True, slots=True)
class UsbReportLayout:
    """Where a HID-style USB clock puts things in its input report.

    The two times are read at ``left_offset`` and ``right_offset`` in
    ``time_format``: ``bcd_hms`` (3 bytes: hours, minutes, seconds in BCD, like
    the DGT clocks), ``u16le``/``u16be`` (seconds), ``u32le_ms``/``u32be_ms``
    (milliseconds). ``lever`` is set when the right side's lever is up, so the
    right clock runs; ``running`` (optional) is set while the clock runs at
    all, otherwise a clock is taken as running whenever a time changes.
    ``left_flag``/``right_flag`` (optional) show a fallen flag.
    """

    report_length: int = 8
    left_offset: int = 0
    right_offset: int = 3
    time_format: TimeFormat = "bcd_hms"
    lever: BitField = field(default_factory=lambda: BitField(6, 0x02))
    running: BitField | None = field(default_factory=lambda: BitField(6, 0x01))
    left_flag: BitField | None = None
    right_flag: BitField | None = None

    def __post_init__(self) -> None:
        width = TIME_WIDTHS.get(self.time_format)
        if width is None:
            raise ClockSettingsError(
                f"clock.usb.layout.time_format: {self.time_format!r} is not one of "
                f"{', '.join(TIME_WIDTHS)}"
            )
        spans = {
            "left_offset": self.left_offset + width,
            "right_offset": self.right_offset + width,
        }
        for name, bits in (
            ("lever", self.lever),
            ("running", self.running),
            ("left_flag", self.left_flag),
            ("right_flag", self.right_flag),
        ):
            if bits is not None:
                spans[f"{name}.offset"] = bits.offset + 1
        for name, end in spans.items():
            if end > self.report_length or end <= 0:
                raise ClockSettingsError(
                    f"clock.usb.layout.{name} reaches byte {end - 1}, beyond a "
                    f"{self.report_length}-byte report"
                )


#: Bytes each time format takes.
TIME_WIDTHS: Mapping[str, int] = {
    "bcd_hms": 3,
    "u16le": 2,
    "u16be": 2,
    "u32le_ms": 4,
    "u32be_ms": 4,
}


@dataclass(frozen=True, slots=True)
class UsbClockSettings:
    """A HID-style USB clock read with pyusb (``clock.source: usb``)."""

    vendor_id: int = 0
    product_id: int = 0
    endpoint: int = 0x81  # the IN endpoint address the reports arrive on
    interface: int = 0
    poll_timeout_ms: int = 1000  # how long one read waits for a report
    layout: UsbReportLayout = field(default_factory=UsbReportLayout)


@dataclass(frozen=True, slots=True)
class ClockSettings:
    """Everything about the clock.

    - ``source``: ``dgt`` (a DGT XL / 3000 plugged into the board; times come
      over the board's serial line), ``usb`` (a USB clock, see ``usb``) or
      ``none`` (no clock: moves complete on the rules core's settle time).
    - ``sides``: which clock side is White's. ``auto`` learns it at each game
      from the side that runs first (White's clock is started first, 6.5);
      ``left_white`` / ``right_white`` fix it. Never taken from the board's
      orientation: turning the board round does not move the clock.
    - ``time_control``: the time control string (see ``daemon.timecontrol``),
      empty for none. Known, it lets the driver tell an increment from a glitch.
    - ``set_and_run_at_start``: put the time control on a DGT clock at each
      game start.
    - ``show_moves_on_clock``: show each move on the DGT 3000 / XL display.
    - ``button_actions``: button name -> request (``last``, ``clock``,
      ``move_number``, ``board`` or ``none``), Appendix E.2.9d.
    - ``usb``: the USB clock's ids and report layout.
    """

    source: ClockSource = "dgt"
    sides: SideMapping = "auto"
    time_control: str = ""
    set_and_run_at_start: bool = False
    show_moves_on_clock: bool = True
    button_actions: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_BUTTON_ACTIONS))
    usb: UsbClockSettings = field(default_factory=UsbClockSettings)

    def __post_init__(self) -> None:
        if self.source not in ("dgt", "usb", "none"):
            raise ClockSettingsError(f"clock.source: {self.source!r} is not one of dgt, usb, none")
        if self.sides not in ("auto", "left_white", "right_white"):
            raise ClockSettingsError(
                f"clock.sides: {self.sides!r} is not one of auto, left_white, right_white"
            )
        for button, action in self.button_actions.items():
            if button not in CLOCK_BUTTONS:
                raise ClockSettingsError(
                    f"clock.button_actions: no button {button!r} "
                    f"(the buttons are {', '.join(CLOCK_BUTTONS)})"
                )
            if action not in BUTTON_ACTIONS:
                raise ClockSettingsError(
                    f"clock.button_actions.{button}: {action!r} is not one of "
                    f"{', '.join(BUTTON_ACTIONS)}"
                )
        try:
            parse_time_control(self.time_control)
        except TimeControlError as error:
            raise ClockSettingsError(f"clock.time_control: {error}") from None
        if self.source == "usb" and not (self.usb.vendor_id and self.usb.product_id):
            raise ClockSettingsError(
                "clock.source is usb, so clock.usb.vendor_id and clock.usb.product_id are needed"
            )
        if self.set_and_run_at_start and not self.time_control:
            raise ClockSettingsError("clock.set_and_run_at_start needs clock.time_control")

    @property
    def parsed_time_control(self) -> TimeControl | None:
        return parse_time_control(self.time_control)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> ClockSettings:
        """Build from the YAML ``clock:`` mapping, naming any unknown or wrong key."""
        data = dict(data or {})
        _reject_unknown("clock", data, cls)
        usb_data = dict(data.pop("usb", None) or {})
        _reject_unknown("clock.usb", usb_data, UsbClockSettings)
        layout_data = dict(usb_data.pop("layout", None) or {})
        _reject_unknown("clock.usb.layout", layout_data, UsbReportLayout)
        for name in ("lever", "running", "left_flag", "right_flag"):
            if name in layout_data and layout_data[name] is not None:
                layout_data[name] = _bit_field(f"clock.usb.layout.{name}", layout_data[name])
        for key in ("vendor_id", "product_id", "endpoint"):
            if key in usb_data:
                usb_data[key] = _integer(f"clock.usb.{key}", usb_data[key])
        if "button_actions" in data:
            actions = dict(DEFAULT_BUTTON_ACTIONS)
            actions.update(data["button_actions"] or {})
            data["button_actions"] = actions
        if data.get("time_control") is None:
            data["time_control"] = ""
        data["time_control"] = str(data["time_control"])
        for key in ("set_and_run_at_start", "show_moves_on_clock"):
            if key in data and not isinstance(data[key], bool):
                raise ClockSettingsError(f"clock.{key}: {data[key]!r} is not true or false")
        try:
            layout = UsbReportLayout(**layout_data)
            usb = UsbClockSettings(**usb_data, layout=layout)
            return cls(**data, usb=usb)
        except TypeError as error:
            raise ClockSettingsError(f"clock: {error}") from None


def _reject_unknown(where: str, data: Mapping[str, Any], cls: type) -> None:
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ClockSettingsError(
            f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )


def _integer(where: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ClockSettingsError(f"{where}: {value!r} is not a number")
    if isinstance(value, int):
        return value
    try:
        return int(str(value), 0)
    except ValueError:
        raise ClockSettingsError(
            f"{where}: {value!r} is not a number (write 0x045b or 1115)"
        ) from None


def _bit_field(where: str, value: Any) -> BitField:
    example = "give offset and optionally mask, e.g. {offset: 6, mask: 0x02}"
    if not isinstance(value, Mapping) or set(value) - {"offset", "mask"} or "offset" not in value:
        raise ClockSettingsError(f"{where}: {example}")
    return BitField(
        _integer(f"{where}.offset", value["offset"]),
        _integer(f"{where}.mask", value.get("mask", 1)),
    )
