"""Finding a DGT board: the USB vendor id from sysfs, and the protocol probe."""

from __future__ import annotations

import os

from drivers.dgt import ports
from drivers.simulators.emulator import BoardEmulator


def fake_usb_tty(sysfs_root, name: str, vendor: str) -> None:
    interface = sysfs_root / "devices" / "usb1" / f"1-{name}" / f"1-{name}:1.0"
    interface.mkdir(parents=True)
    (interface.parent / "idVendor").write_text(vendor + "\n")
    tty = sysfs_root / "class" / "tty" / name
    tty.mkdir(parents=True)
    os.symlink(interface, tty / "device")


def test_usb_vendor_id_is_read_from_the_usb_device_above_the_tty(tmp_path):
    fake_usb_tty(tmp_path, "ttyACM3", "045b")
    fake_usb_tty(tmp_path, "ttyACM4", "2341")
    sysfs = str(tmp_path / "class" / "tty")
    assert ports.usb_vendor_id("/dev/ttyACM3", sysfs) == ports.DGT_USB_VENDOR_ID
    assert ports.usb_vendor_id("/dev/ttyACM4", sysfs) == 0x2341
    assert ports.usb_vendor_id("/dev/ttyS0", sysfs) is None


def test_candidates_put_dgt_usb_boards_first(tmp_path):
    fake_usb_tty(tmp_path, "ttyACM1", "045b")
    fake_usb_tty(tmp_path, "ttyACM0", "2341")
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("ttyACM0", "ttyACM1", "rfcomm0"):
        (dev / name).touch()
    found = ports.candidate_ports(
        (str(dev / "ttyACM*"), str(dev / "rfcomm*")), str(tmp_path / "class" / "tty")
    )
    assert [os.path.basename(p) for p in found] == ["ttyACM1", "ttyACM0", "rfcomm0"]


def test_probe_recognises_a_board_by_its_answers():
    with BoardEmulator() as emulator:
        result = ports.probe(emulator.port_path, timeout=5)
    assert result is not None
    assert result.version == "3.01" and result.trademark.startswith("Digital Game Technology")


def test_probe_rejects_a_port_that_does_not_answer():
    with BoardEmulator() as emulator:
        emulator.set_silent(True)
        assert ports.probe(emulator.port_path, timeout=0.5) is None
    assert ports.probe("/nonexistent/ttyACM9", timeout=0.5) is None


def test_find_board_skips_a_port_that_is_not_a_board(tmp_path):
    with BoardEmulator(tmp_path, "a-silent") as silent, BoardEmulator(tmp_path, "b-board"):
        silent.set_silent(True)
        pattern = (str(tmp_path / "*"),)
        assert ports.find_board(timeout=0.5, patterns=pattern) == str(tmp_path / "b-board")
        assert [r.path for r in ports.find_boards(0.5, pattern)] == [str(tmp_path / "b-board")]
