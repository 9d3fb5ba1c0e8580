"""Finding a DGT board: candidate ports, the USB vendor id, and a protocol probe.

A DGT USB board is a CDC-ACM device (``/dev/ttyACM*``) with USB vendor id
0x045B; serial boards sit behind USB adapters (``/dev/ttyUSB*``) and Bluetooth
boards behind ``rfcomm`` (``/dev/rfcomm*``), whose ids say nothing. So the
vendor id only orders the candidates; what decides is the probe: a port is a
DGT board when it answers the version (or trademark) request in the DGT framing.

Blocking by design (short pyserial time-outs): the link runs it in an executor.
"""

from __future__ import annotations

import glob
import os
import time
from dataclasses import dataclass
from pathlib import Path

import serial

from drivers.dgt import protocol
from drivers.dgt.serialport import open_serial
from drivers.records import FrozenRecord

DGT_USB_VENDOR_ID = 0x045B
PORT_PATTERNS = ("/dev/ttyACM*", "/dev/ttyUSB*", "/dev/rfcomm*")


@dataclass(eq=False, repr=False)
class ProbeResult(FrozenRecord):
    """What a port answered to the identification requests."""

    path: str
    version: str | None
    trademark: str | None
    usb_vendor: int | None


def usb_vendor_id(path: str, sysfs: str = "/sys/class/tty") -> int | None:
    """The USB vendor id behind a tty, read from sysfs; None if not a USB device."""
    device = Path(sysfs) / Path(os.path.realpath(path)).name / "device"
    for parent in [device, *device.resolve().parents][:6]:
        id_file = parent / "idVendor"
        if id_file.is_file():
            try:
                return int(id_file.read_text().strip(), 16)
            except (OSError, ValueError):
                return None
    return None


def candidate_ports(
    patterns: tuple[str, ...] = PORT_PATTERNS, sysfs: str = "/sys/class/tty"
) -> list[str]:
    """Existing ports that could be a DGT board: DGT's USB vendor id first, then in
    the order of ``patterns`` (USB boards before Bluetooth, which is slow to probe)."""
    found: dict[str, int] = {}
    for rank, pattern in enumerate(patterns):
        for path in sorted(glob.glob(pattern)):
            found.setdefault(path, rank)
    return sorted(found, key=lambda p: (usb_vendor_id(p, sysfs) != DGT_USB_VENDOR_ID, found[p], p))


def probe(path: str, timeout: float = 1.5) -> ProbeResult | None:
    """Ask ``path`` for its version and trademark; a ProbeResult if it answered."""
    try:
        port = open_serial(path)
    except (OSError, serial.SerialException):
        return None
    parser = protocol.MessageParser()
    version: str | None = None
    trademark: str | None = None
    try:
        port.write(protocol.request_version() + protocol.request_trademark())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and (version is None or trademark is None):
            port.timeout = max(0.0, min(0.1, deadline - time.monotonic()))
            data = port.read(256)
            for message in parser.feed(data):
                if isinstance(message, protocol.Version):
                    version = str(message)
                elif isinstance(message, protocol.Trademark):
                    trademark = message.text
    except (OSError, serial.SerialException):
        return None
    finally:
        port.close()
    if version is None and trademark is None:
        return None
    return ProbeResult(path, version, trademark, usb_vendor_id(path))


def find_boards(
    timeout: float = 1.5, patterns: tuple[str, ...] = PORT_PATTERNS
) -> list[ProbeResult]:
    """Every candidate port that answers like a DGT board."""
    found = (probe(path, timeout) for path in candidate_ports(patterns))
    return [result for result in found if result is not None]


def find_board(timeout: float = 1.5, patterns: tuple[str, ...] = PORT_PATTERNS) -> str | None:
    """The first port that answers like a DGT board, or None."""
    for path in candidate_ports(patterns):
        if probe(path, timeout) is not None:
            return path
    return None
