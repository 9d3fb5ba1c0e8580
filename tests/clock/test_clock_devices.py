"""`dgt-bridge devices`: boards and clocks on USB, serial ports, and clear words without USB."""

from __future__ import annotations

import json
from pathlib import Path

import usb.core
from fake_usb_backend import FakeBackend, FakeDevice

from daemon.cli import main
from drivers.clock import devices as devices_module
from drivers.clock.devices import format_listing, list_devices, list_usb


def test_lists_dgt_boards_and_configured_clocks_only():
    backend = FakeBackend(
        FakeDevice(0x045B, 0x0001, bus=1, address=4),  # a DGT board
        FakeDevice(0x16C0, 0x05DF, bus=1, address=7),  # the configured clock
        FakeDevice(0x046D, 0xC52B, bus=2, address=3),  # a mouse
    )
    found, problem = list_usb([(0x16C0, 0x05DF)], backend=backend)
    assert problem is None
    assert [(d.kind, d.ids, d.address) for d in found] == [
        ("dgt_board", "045b:0001", 4),
        ("usb_clock", "16c0:05df", 7),
    ]


def test_without_a_usb_backend_it_says_so_and_still_lists_ports(tmp_path):
    (tmp_path / "ttyACM0").touch()
    (tmp_path / "rfcomm1").touch()

    def no_backend(**kwargs):
        raise usb.core.NoBackendError("No backend available")

    found, problem = list_usb(find=no_backend)
    assert found == [] and "libusb" in problem
    listing = devices_module.DeviceListing(
        found,
        problem,
        devices_module.list_serial_ports(
            (str(tmp_path / "ttyACM*"), str(tmp_path / "rfcomm*")), sysfs=str(tmp_path / "sys")
        ),
    )
    text = format_listing(listing)
    assert "pyusb found no backend" in text
    assert f"{tmp_path}/ttyACM0" in text and f"{tmp_path}/rfcomm1  Bluetooth" in text


def test_serial_ports_with_dgt_vendor_come_first(tmp_path):
    sysfs = tmp_path / "sys"
    for name, vendor in (("ttyACM0", "1a86"), ("ttyACM1", "045b")):
        (tmp_path / name).touch()
        usb_device = tmp_path / "devices" / name
        (usb_device / "tty").mkdir(parents=True)
        (usb_device / "idVendor").write_text(vendor + "\n")
        (sysfs / name).mkdir(parents=True)
        (sysfs / name / "device").symlink_to(usb_device / "tty")
    ports = devices_module.list_serial_ports((str(tmp_path / "ttyACM*"),), sysfs=str(sysfs))
    assert [(Path(p.path).name, p.looks_like_dgt) for p in ports] == [
        ("ttyACM1", True),
        ("ttyACM0", False),
    ]


def test_the_command_prints_json(monkeypatch, capsys):
    backend = FakeBackend(FakeDevice(0x045B, 0x0001, bus=3, address=9))
    real = list_devices
    monkeypatch.setattr(
        "daemon.commands.devices.list_devices",
        lambda ids: real(ids, backend=backend, patterns=()),
    )
    assert main(["devices", "--json", "--usb-clock", "16c0:05df"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["usb"] == [
        {"kind": "dgt_board", "vendor_id": "045b", "product_id": "0001", "bus": 3, "address": 9}
    ]
    assert listing["serial_ports"] == []


def test_the_command_rejects_bad_ids(capsys):
    assert main(["devices", "--usb-clock", "clock"]) == 2
    assert "VID:PID" in capsys.readouterr().err


def test_the_command_works_on_this_machine(capsys):
    """Whatever this machine has (here usually no libusb, no boards): no crash, clear text."""
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "USB:" in out and "Serial ports:" in out
