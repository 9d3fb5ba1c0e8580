"""A pyusb backend with no hardware behind it: devices described in Python.

pyusb lets any object implementing ``usb.backend.IBackend`` stand in for
libusb. This one answers the descriptor questions pyusb asks (one
configuration, one interface, one interrupt IN endpoint per device) and serves
input reports from a queue, so the USB clock driver and the device listing run
exactly as they would against a real clock.
"""

from __future__ import annotations

import errno
from collections import deque
from dataclasses import dataclass, field
from types import SimpleNamespace

import usb.backend
import usb.core


@dataclass
class FakeDevice:
    vendor_id: int
    product_id: int
    bus: int = 1
    address: int = 5
    endpoint: int = 0x81
    reports: deque[bytes] = field(default_factory=deque)
    kernel_driver: bool = True  # usbhid has it, as it would for a HID clock
    deny_access: bool = False
    unplugged: bool = False
    calls: list[str] = field(default_factory=list)


class FakeBackend(usb.backend.IBackend):
    def __init__(self, *devices: FakeDevice) -> None:
        self.devices = list(devices)

    def enumerate_devices(self):
        yield from self.devices

    def get_device_descriptor(self, dev: FakeDevice):
        return SimpleNamespace(
            bLength=18,
            bDescriptorType=1,
            bcdUSB=0x0200,
            bDeviceClass=0,
            bDeviceSubClass=0,
            bDeviceProtocol=0,
            bMaxPacketSize0=64,
            idVendor=dev.vendor_id,
            idProduct=dev.product_id,
            bcdDevice=0x0100,
            iManufacturer=0,
            iProduct=0,
            iSerialNumber=0,
            bNumConfigurations=1,
            address=dev.address,
            bus=dev.bus,
            port_number=None,
            port_numbers=None,
            speed=None,
        )

    def get_configuration_descriptor(self, dev, config):
        if config != 0:
            raise IndexError(config)
        return SimpleNamespace(
            bLength=9,
            bDescriptorType=2,
            wTotalLength=34,
            bNumInterfaces=1,
            bConfigurationValue=1,
            iConfiguration=0,
            bmAttributes=0x80,
            bMaxPower=50,
            extra_descriptors=[],
        )

    def get_interface_descriptor(self, dev, intf, alt, config):
        if (intf, alt, config) != (0, 0, 0):
            raise IndexError((intf, alt, config))
        return SimpleNamespace(
            bLength=9,
            bDescriptorType=4,
            bInterfaceNumber=0,
            bAlternateSetting=0,
            bNumEndpoints=1,
            bInterfaceClass=3,  # HID
            bInterfaceSubClass=0,
            bInterfaceProtocol=0,
            iInterface=0,
            extra_descriptors=[],
        )

    def get_endpoint_descriptor(self, dev, ep, intf, alt, config):
        if (ep, intf, alt, config) != (0, 0, 0, 0):
            raise IndexError((ep, intf, alt, config))
        return SimpleNamespace(
            bLength=7,
            bDescriptorType=5,
            bEndpointAddress=dev.endpoint,
            bmAttributes=0x03,  # interrupt
            wMaxPacketSize=64,
            bInterval=10,
            bRefresh=0,
            bSynchAddress=0,
            extra_descriptors=[],
        )

    def open_device(self, dev: FakeDevice):
        dev.calls.append("open")
        if dev.deny_access:
            raise usb.core.USBError("Access denied (insufficient permissions)", -3, errno.EACCES)
        return dev

    def close_device(self, dev_handle: FakeDevice):
        dev_handle.calls.append("close")

    def set_configuration(self, dev_handle: FakeDevice, config_value):
        dev_handle.calls.append(f"set_configuration {config_value}")

    def get_configuration(self, dev_handle):
        return 1

    def set_interface_altsetting(self, dev_handle, intf, altsetting):
        pass

    def claim_interface(self, dev_handle: FakeDevice, intf):
        dev_handle.calls.append(f"claim {intf}")

    def release_interface(self, dev_handle: FakeDevice, intf):
        dev_handle.calls.append(f"release {intf}")

    def is_kernel_driver_active(self, dev_handle: FakeDevice, intf):
        return dev_handle.kernel_driver

    def detach_kernel_driver(self, dev_handle: FakeDevice, intf):
        dev_handle.calls.append(f"detach {intf}")
        dev_handle.kernel_driver = False

    def intr_read(self, dev_handle: FakeDevice, ep, intf, buff, timeout):
        if dev_handle.unplugged:
            raise usb.core.USBError("No such device (disconnected)", -4, errno.ENODEV)
        if ep != dev_handle.endpoint:
            raise usb.core.USBError(f"bad endpoint {ep:#x}", -9, errno.EPIPE)
        if not dev_handle.reports:
            raise usb.core.USBTimeoutError("Operation timed out", -7, errno.ETIMEDOUT)
        report = dev_handle.reports.popleft()
        n = min(len(report), len(buff))
        buff[:n] = type(buff)(buff.typecode, report[:n])
        return n
