"""A HID-style USB chess clock, read with pyusb.

No commercial chess clock is known to have USB of its own (DGT clocks talk
through the board), so this driver is generic: the clock's vendor id, product
id, IN endpoint and report layout (where the two times, the lever, the run
state and the flags are) come from the configuration
(:class:`~drivers.clock.settings.UsbClockSettings`). Each input report becomes
a :class:`~drivers.clock.tracker.RawReading`, and the same tracker as for the
DGT clock (defensive filters) turns it into ClockReading events, left and right:
whose side is whose is the daemon's decision (``daemon.clock.sides``).

Decoding is pure (:func:`decode_report`); :class:`UsbClock` is the shell that
opens the device and reads reports. pyusb calls block, so :meth:`UsbClock.run`
reads in a worker thread.
"""

from __future__ import annotations

import asyncio
import errno
import logging
from collections.abc import Callable
from typing import Literal

import usb.core
import usb.util

from drivers.clock.settings import UsbClockSettings, UsbReportLayout
from drivers.clock.tracker import ClockTracker, RawReading
from drivers.sensors import ClockReading, SensorEvent, Side
from drivers.timecontrol import TimeControl

log = logging.getLogger(__name__)


class UsbClockError(Exception):
    """The USB clock cannot be opened or read; the message says what to do."""


def _bcd(byte: int) -> int | None:
    tens, units = byte >> 4, byte & 0x0F
    return None if tens > 9 or units > 9 else tens * 10 + units


def decode_time(layout: UsbReportLayout, report: bytes, offset: int) -> float | None:
    """One side's time in seconds, or None when the bytes cannot be a time."""
    fmt = layout.time_format
    if fmt == "bcd_hms":
        hours, minutes, seconds = (_bcd(b) for b in report[offset : offset + 3])
        if hours is None or minutes is None or seconds is None or minutes > 59 or seconds > 59:
            return None
        return float(hours * 3600 + minutes * 60 + seconds)
    order: Literal["little", "big"] = "little" if "le" in fmt else "big"
    width = 4 if fmt.startswith("u32") else 2
    value = int.from_bytes(report[offset : offset + width], order)
    return value / 1000.0 if fmt.endswith("_ms") else float(value)


def decode_report(layout: UsbReportLayout, report: bytes) -> RawReading | None:
    """A reading from one input report; None for a short or unreadable report.

    The lever bit set means the right side's lever is up, so the right time
    runs. Without a ``running`` bit in the layout the clock is taken as always
    running.
    """
    report = bytes(report)
    if len(report) < layout.report_length:
        return None
    left = decode_time(layout, report, layout.left_offset)
    right = decode_time(layout, report, layout.right_offset)
    if left is None or right is None:
        return None
    running = layout.running is None or layout.running.read(report)
    side: Side = "right" if layout.lever.read(report) else "left"
    return RawReading(
        left=left,
        right=right,
        running=side if running else None,
        left_flag=layout.left_flag.read(report) if layout.left_flag else False,
        right_flag=layout.right_flag.read(report) if layout.right_flag else False,
    )


class UsbClock:
    """One USB clock: open it, read its reports, produce ClockReading events."""

    def __init__(
        self,
        settings: UsbClockSettings,
        time_control: TimeControl | None = None,
        backend: object | None = None,
    ) -> None:
        self.settings = settings
        self.tracker = ClockTracker(time_control)
        self.backend = backend
        self.unreadable_reports = 0
        self._device: usb.core.Device | None = None

    @property
    def ids(self) -> str:
        return f"{self.settings.vendor_id:04x}:{self.settings.product_id:04x}"

    def open(self) -> None:
        """Find and claim the clock, or raise UsbClockError saying why not."""
        try:
            device = usb.core.find(
                idVendor=self.settings.vendor_id,
                idProduct=self.settings.product_id,
                backend=self.backend,
            )
        except usb.core.NoBackendError:
            raise UsbClockError(
                "pyusb found no USB backend: install libusb-1.0 (apt install libusb-1.0-0)"
            ) from None
        if device is None:
            raise UsbClockError(f"no USB clock {self.ids} is plugged in (see `dgt-bridge devices`)")
        interface = self.settings.interface
        try:
            if _kernel_driver_active(device, interface):
                device.detach_kernel_driver(interface)
            device.set_configuration()
            usb.util.claim_interface(device, interface)
        except usb.core.USBError as error:
            if error.errno in (errno.EACCES, errno.EPERM):
                raise UsbClockError(
                    f"no permission to open the USB clock {self.ids}: add a udev rule "
                    f'(SUBSYSTEM=="usb", ATTRS{{idVendor}}=="{self.settings.vendor_id:04x}", '
                    'MODE="0660", GROUP="plugdev") or run as a member of that group'
                ) from None
            raise UsbClockError(f"cannot open the USB clock {self.ids}: {error}") from None
        self._device = device

    def close(self) -> None:
        if self._device is not None:
            usb.util.dispose_resources(self._device)
            self._device = None

    def read_report(self) -> bytes | None:
        """One input report, or None when none came within the poll time-out."""
        if self._device is None:
            raise UsbClockError("the USB clock is not open")
        try:
            data = self._device.read(
                self.settings.endpoint,
                self.settings.layout.report_length,
                timeout=self.settings.poll_timeout_ms,
            )
        except usb.core.USBTimeoutError:
            return None
        except usb.core.USBError as error:
            if error.errno == errno.ETIMEDOUT:
                return None
            raise UsbClockError(f"the USB clock {self.ids} stopped answering: {error}") from None
        return bytes(data)

    def interpret(self, t: float, report: bytes) -> list[ClockReading]:
        """Decode one report and check it with the tracker: the reading it makes when
        the clock shows anything new (pure apart from state)."""
        reading = decode_report(self.settings.layout, report)
        if reading is None:
            self.unreadable_reports += 1
            return []
        return self.tracker.check(t, reading)

    def poll(self, t: float) -> list[SensorEvent]:
        report = self.read_report()
        return [] if report is None else list(self.interpret(t, report))

    async def run(
        self,
        on_event: Callable[[SensorEvent], None],
        time_source: Callable[[], float],
        retry_after: float = 2.0,
    ) -> None:
        """Read until cancelled, reopening after a failure.

        A lost USB clock is only logged: it is no board connection change, and
        the rules core completes moves on its settle time meanwhile.
        """
        while True:
            try:
                if self._device is None:
                    await asyncio.to_thread(self.open)
                    log.info("USB clock %s open", self.ids)
                report = await asyncio.to_thread(self.read_report)
                if report is not None:
                    for event in self.interpret(time_source(), report):
                        on_event(event)
            except UsbClockError as error:
                self.close()
                log.warning("%s", error)
                await asyncio.sleep(retry_after)


def _kernel_driver_active(device: usb.core.Device, interface: int) -> bool:
    try:
        return bool(device.is_kernel_driver_active(interface))
    except (NotImplementedError, usb.core.USBError):
        return False
