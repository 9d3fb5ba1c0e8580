"""What is plugged in: DGT boards and USB clocks on USB, and candidate serial ports.

USB devices are listed with pyusb: DGT boards by their vendor id (0x045B) and
USB clocks by the ids the configuration names. pyusb needs a backend (libusb)
and permission to read the bus; without them the listing says so plainly and
still lists the serial ports, found by name (``/dev/ttyACM*``, ``/dev/ttyUSB*``,
``/dev/rfcomm*``) with the USB vendor id read from sysfs where there is one.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import usb.core

from drivers.clock.settings import DGT_VENDOR_ID
from drivers.dgt.ports import PORT_PATTERNS, usb_vendor_id
from drivers.records import FrozenRecord


@dataclass(eq=False, repr=False)
class UsbDeviceInfo(FrozenRecord):
    kind: Literal["dgt_board", "usb_clock"]
    vendor_id: int
    product_id: int
    bus: int | None
    address: int | None

    @property
    def ids(self) -> str:
        return f"{self.vendor_id:04x}:{self.product_id:04x}"


@dataclass(eq=False, repr=False)
class SerialPortInfo(FrozenRecord):
    path: str
    usb_vendor_id: int | None  # None: not a USB device (Bluetooth, built-in) or unknown

    @property
    def looks_like_dgt(self) -> bool:
        return self.usb_vendor_id == DGT_VENDOR_ID


@dataclass(eq=False, repr=False)
class DeviceListing(FrozenRecord):
    usb_devices: list[UsbDeviceInfo] = field(default_factory=list)
    usb_problem: str | None = None  # why USB could not be listed, if it could not
    serial_ports: list[SerialPortInfo] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "usb": None
            if self.usb_problem
            else [
                {
                    "kind": d.kind,
                    "vendor_id": f"{d.vendor_id:04x}",
                    "product_id": f"{d.product_id:04x}",
                    "bus": d.bus,
                    "address": d.address,
                }
                for d in self.usb_devices
            ],
            "usb_problem": self.usb_problem,
            "serial_ports": [
                {
                    "path": p.path,
                    "usb_vendor_id": None if p.usb_vendor_id is None else f"{p.usb_vendor_id:04x}",
                    "dgt": p.looks_like_dgt,
                }
                for p in self.serial_ports
            ],
        }


def list_usb(
    clock_ids: Iterable[tuple[int, int]] = (),
    backend: object | None = None,
    find: Callable[..., Any] = usb.core.find,
) -> tuple[list[UsbDeviceInfo], str | None]:
    """DGT boards and the named USB clocks on the bus, or why they cannot be listed."""
    wanted_clocks = set(clock_ids)
    try:
        devices = list(find(find_all=True, backend=backend))
    except usb.core.NoBackendError:
        return [], (
            "USB cannot be listed: pyusb found no backend (install libusb-1.0: "
            "apt install libusb-1.0-0)"
        )
    except usb.core.USBError as error:
        return [], f"USB cannot be listed: {error} (no permission to read the USB bus?)"
    except OSError as error:
        return [], f"USB cannot be listed: {error}"
    found = []
    for device in devices:
        ids = (device.idVendor, device.idProduct)
        if ids in wanted_clocks:
            kind: Literal["dgt_board", "usb_clock"] = "usb_clock"
        elif device.idVendor == DGT_VENDOR_ID:
            kind = "dgt_board"
        else:
            continue
        found.append(UsbDeviceInfo(kind, *ids, bus=device.bus, address=device.address))
    return found, None


def list_serial_ports(
    patterns: Sequence[str] = PORT_PATTERNS, sysfs: str = "/sys/class/tty"
) -> list[SerialPortInfo]:
    """Serial ports a DGT board could be on, those with DGT's vendor id first."""
    paths = sorted({p for pattern in patterns for p in glob.glob(pattern)})
    ports = [SerialPortInfo(p, usb_vendor_id(p, sysfs)) for p in paths]
    return sorted(ports, key=lambda p: not p.looks_like_dgt)


def list_devices(
    clock_ids: Iterable[tuple[int, int]] = (),
    backend: object | None = None,
    patterns: Sequence[str] = PORT_PATTERNS,
    sysfs: str = "/sys/class/tty",
) -> DeviceListing:
    usb_devices, problem = list_usb(clock_ids, backend)
    return DeviceListing(usb_devices, problem, list_serial_ports(patterns, sysfs))


def format_listing(listing: DeviceListing) -> str:
    """The listing as lines a person reads on a terminal (or hears from a screen reader)."""
    lines = ["USB:"]
    if listing.usb_problem:
        lines.append(f"  {listing.usb_problem}")
    elif not listing.usb_devices:
        lines.append("  no DGT board and no configured USB clock on USB")
    for device in listing.usb_devices:
        name = "DGT board" if device.kind == "dgt_board" else "USB clock"
        lines.append(f"  {name} {device.ids} on bus {device.bus}, address {device.address}")
    lines.append("Serial ports:")
    if not listing.serial_ports:
        lines.append("  none found (" + ", ".join(PORT_PATTERNS) + ")")
    for port in listing.serial_ports:
        if port.looks_like_dgt:
            note = "DGT USB board (vendor 045b)"
        elif port.usb_vendor_id is not None:
            note = f"USB vendor {port.usb_vendor_id:04x}"
        elif "rfcomm" in port.path:
            note = "Bluetooth"
        else:
            note = "not on USB"
        lines.append(f"  {port.path}  {note}")
    return "\n".join(lines)
