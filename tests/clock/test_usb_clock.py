"""The USB clock against a fake pyusb backend: reports in, ClockReading events out."""

from __future__ import annotations

import asyncio
import struct

import pytest
from fake_usb_backend import FakeBackend, FakeDevice

from drivers.clock.settings import BitField, UsbClockSettings, UsbReportLayout
from drivers.clock.usb import UsbClock, UsbClockError, decode_report
from drivers.sensors import ClockReading

VID, PID = 0x16C0, 0x05DF

#: A clock with 16-bit little-endian seconds at 0 and 2, lever bit 0 and run bit 1
#: of byte 4, flags in byte 5.
LAYOUT = UsbReportLayout(
    report_length=8,
    left_offset=0,
    right_offset=2,
    time_format="u16le",
    lever=BitField(4, 0x01),
    running=BitField(4, 0x02),
    left_flag=BitField(5, 0x01),
    right_flag=BitField(5, 0x02),
)
SETTINGS = UsbClockSettings(vendor_id=VID, product_id=PID, endpoint=0x81, layout=LAYOUT)


def report(left: int, right: int, runs: str | None, flags: int = 0) -> bytes:
    status = (0x01 if runs == "right" else 0) | (0x02 if runs else 0)
    return struct.pack("<HHBBxx", left, right, status, flags)


def plugged(*reports: bytes, **kwargs) -> tuple[FakeDevice, FakeBackend]:
    device = FakeDevice(VID, PID, **kwargs)
    device.reports.extend(reports)
    return device, FakeBackend(FakeDevice(0x045B, 0x0001, address=2), device)


def test_reports_become_clock_readings_left_and_right():
    device, backend = plugged(
        report(300, 300, None), report(300, 299, "right"), report(298, 299, "left")
    )
    clock = UsbClock(SETTINGS, backend=backend)
    clock.open()
    assert "detach 0" in device.calls and "claim 0" in device.calls
    events = clock.poll(0.0) + clock.poll(1.0) + clock.poll(2.0)
    assert events == [
        ClockReading(0.0, 300, 300, None),
        ClockReading(1.0, 300, 299, "right"),  # whose side is whose: the daemon's call
        ClockReading(2.0, 298, 299, "left"),
    ]
    assert clock.poll(3.0) == []  # no report within the time-out: nothing, no error
    clock.close()
    assert "release 0" in device.calls


def test_flags_from_the_report():
    _, backend = plugged(report(0, 17, "left", flags=0x01))
    clock = UsbClock(SETTINGS, backend=backend)
    clock.open()
    [event] = clock.poll(0.0)
    assert event.flags == ("left",)


def test_the_same_filters_as_the_dgt_clock():
    _, backend = plugged(
        report(300, 300, "left"), report(900, 300, "left"), report(298, 300, "left")
    )
    clock = UsbClock(SETTINGS, backend=backend)
    clock.open()
    events = clock.poll(0.0) + clock.poll(1.0) + clock.poll(2.0)
    assert [e.left for e in events] == [300, 298]


@pytest.mark.parametrize(
    ("layout", "data", "expected"),
    [
        (UsbReportLayout(), bytes.fromhex("00050201300003 00"), (302.0, 5400.0, "right")),
        (
            UsbReportLayout(
                time_format="u32be_ms",
                left_offset=0,
                right_offset=4,
                report_length=10,
                lever=BitField(8, 0x80),
                running=None,
            ),
            struct.pack(">II", 61500, 5000) + b"\x80\x00",
            (61.5, 5.0, "right"),
        ),
        (
            UsbReportLayout(
                time_format="u16be",
                left_offset=1,
                right_offset=3,
                report_length=6,
                lever=BitField(5, 0x01),
                running=BitField(5, 0x02),
            ),
            b"\x00" + struct.pack(">HH", 1000, 2000) + b"\x00",
            (1000.0, 2000.0, None),
        ),
    ],
)
def test_every_time_format_decodes(layout, data, expected):
    reading = decode_report(layout, data)
    assert (reading.left, reading.right, reading.running) == expected


def test_short_or_unreadable_reports_are_counted_not_believed():
    _, backend = plugged(b"\x00\x01", bytes.fromhex("005a000000000300"))
    clock = UsbClock(UsbClockSettings(vendor_id=VID, product_id=PID), backend=backend)
    clock.open()
    assert clock.poll(0.0) == [] and clock.poll(1.0) == []
    assert clock.unreadable_reports == 2


def test_a_missing_clock_says_so():
    backend = FakeBackend(FakeDevice(0x045B, 0x0001))
    with pytest.raises(UsbClockError, match="no USB clock 16c0:05df is plugged in"):
        UsbClock(SETTINGS, backend=backend).open()


def test_no_permission_says_how_to_fix_it():
    _, backend = plugged(deny_access=True)
    with pytest.raises(UsbClockError, match="udev rule"):
        UsbClock(SETTINGS, backend=backend).open()


def test_an_unplugged_clock_is_an_error_not_a_hang():
    device, backend = plugged(report(300, 300, None))
    clock = UsbClock(SETTINGS, backend=backend)
    clock.open()
    device.unplugged = True
    with pytest.raises(UsbClockError, match="stopped answering"):
        clock.poll(0.0)


async def test_run_delivers_events_and_survives_an_unplug():
    device, backend = plugged(report(300, 300, None), report(300, 299, "right"))
    clock = UsbClock(SETTINGS, backend=backend)
    events: list = []
    now = iter(range(1000))
    task = asyncio.create_task(clock.run(events.append, lambda: float(next(now)), retry_after=0.01))
    for _ in range(200):
        await asyncio.sleep(0.01)
        if len(events) >= 2:
            break
    device.unplugged = True
    await asyncio.sleep(0.05)
    device.unplugged = False
    device.reports.append(report(300, 298, "right"))
    for _ in range(200):
        await asyncio.sleep(0.01)
        if len(events) >= 3:
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [(e.left, e.right, e.running) for e in events] == [
        (300, 300, None),
        (300, 299, "right"),
        (300, 298, "right"),
    ]
