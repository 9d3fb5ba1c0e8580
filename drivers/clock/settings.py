"""The clock's part of the configuration, as plain frozen dataclasses.

The daemon's configuration loader fills these from the YAML ``clock:`` section
(``ClockSettings.from_mapping`` does the checking, with messages that name the
key); every field has a default so that a missing section means "a DGT clock
on the board, sides learnt from the first moves' presses".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from drivers.records import FrozenRecord
from drivers.sensors import CLOCK_BUTTONS
from drivers.timecontrol import TimeControl, TimeControlError, parse_time_control

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


@dataclass(eq=False, repr=False, slots=True)
class BitField(FrozenRecord):
    """One bit (or group of bits) in a USB report: set when ``byte & mask``."""

    offset: int  # byte offset in the report
    mask: int = 0x01  # the bits that mean "yes"

    def read(self, report: bytes) -> bool:
        return bool(report[self.offset] & self.mask)


@dataclass(eq=False, repr=False, slots=True)
class UsbReportLayout(FrozenRecord):
    """Where a HID-style USB clock puts things in its input report.

    The two times are read at ``left_offset`` and ``right_offset`` in
    ``time_format``: ``bcd_hms`` (3 bytes: hours, minutes, seconds in BCD, like
    the DGT clocks), ``u16le``/``u16be`` (seconds), ``u32le_ms``/``u32be_ms``
    (milliseconds). ``lever`` is set when the right side's lever is up, so the
    right clock runs; ``running`` (optional) is set while the clock runs at
    all; without it the clock is taken as always running.
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
                f"time_format must be one of {', '.join(TIME_WIDTHS)}, not {self.time_format!r}"
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
                    f"{name} reaches byte {end - 1}, beyond the {self.report_length}-byte report "
                    "(report_length)"
                )


#: Bytes each time format takes.
TIME_WIDTHS: Mapping[str, int] = {
    "bcd_hms": 3,
    "u16le": 2,
    "u16be": 2,
    "u32le_ms": 4,
    "u32be_ms": 4,
}


@dataclass(eq=False, repr=False, slots=True)
class UsbClockSettings(FrozenRecord):
    """A HID-style USB clock read with pyusb (``clock.device: usb``)."""

    vendor_id: int = 0
    product_id: int = 0
    endpoint: int = 0x81  # the IN endpoint address the reports arrive on
    interface: int = 0
    poll_timeout_ms: int = 1000  # how long one read waits for a report
    layout: UsbReportLayout = field(default_factory=UsbReportLayout)


@dataclass(eq=False, repr=False, slots=True)
class ClockSettings(FrozenRecord):
    """Everything about the clock.

    - ``device``: ``dgt`` (a DGT XL / 3000 plugged into the board; times come
      over the board's serial line), ``usb`` (a USB clock, see ``usb``) or
      ``none`` (no clock: moves complete on the rules core's settle time).
    - ``sides``: which clock side is White's, for the daemon's side mapper
      (``daemon.clock.sides``; the clock drivers report left and right). ``auto``
      learns it at each game from the presses the board explains;
      ``left_white`` / ``right_white`` fix it. Never taken from the board's
      orientation: turning the board round does not move the clock.
    - ``time_control``: the time control string (see ``drivers.timecontrol``),
      empty for none. Known, it lets the driver tell an increment from a glitch.
    - ``set_and_run_at_start``: put the time control on a DGT clock at each
      game start.
    - ``show_moves_on_clock``: show each move on the DGT 3000 / XL display.
    - ``button_actions``: button name -> request (``last``, ``clock``,
      ``move_number``, ``board`` or ``none``), Appendix E.2.9d; buttons not
      named keep their defaults (back: last, plus: clock, minus: move_number,
      ok: board; run: none).
    - ``usb``: the USB clock's ids and report layout.
    """

    device: ClockSource = "dgt"
    sides: SideMapping = "auto"
    time_control: str = ""
    set_and_run_at_start: bool = False
    show_moves_on_clock: bool = True
    button_actions: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_BUTTON_ACTIONS))
    usb: UsbClockSettings = field(default_factory=UsbClockSettings)

    def __post_init__(self) -> None:
        if self.device not in ("dgt", "usb", "none"):
            raise ClockSettingsError(f"device must be dgt, usb or none, not {self.device!r}")

        if self.sides not in ("auto", "left_white", "right_white"):
            raise ClockSettingsError(
                f"sides must be auto, left_white or right_white, not {self.sides!r}"
            )
        # Buttons not named keep their default: a file that remaps one button
        # does not silently switch the others off ("none" does that).
        object.__setattr__(
            self, "button_actions", {**DEFAULT_BUTTON_ACTIONS, **dict(self.button_actions)}
        )
        for button, action in self.button_actions.items():
            if button not in CLOCK_BUTTONS:
                raise ClockSettingsError(
                    f"button_actions: no button {button!r} "
                    f"(the buttons are {', '.join(CLOCK_BUTTONS)})"
                )
            if action not in BUTTON_ACTIONS:
                raise ClockSettingsError(
                    f"button_actions.{button} must be one of "
                    f"{', '.join(BUTTON_ACTIONS)}, not {action!r}"
                )
        try:
            parse_time_control(self.time_control)
        except TimeControlError as error:
            raise ClockSettingsError(f"time_control: {error}") from None
        if self.device == "usb" and not (self.usb.vendor_id and self.usb.product_id):
            raise ClockSettingsError("device: usb needs usb.vendor_id and usb.product_id")
        if self.set_and_run_at_start and not self.time_control:
            raise ClockSettingsError("set_and_run_at_start needs a time_control")

    @property
    def parsed_time_control(self) -> TimeControl | None:
        return parse_time_control(self.time_control)
