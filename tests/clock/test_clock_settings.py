"""The clock: section of the configuration, read by the daemon's loader."""

from __future__ import annotations

import pytest

from daemon.config import ConfigError, load_text
from drivers.clock import DEFAULT_BUTTON_ACTIONS, BitField, ClockSettings


def clock(text: str) -> ClockSettings:
    return load_text("clock:\n" + text, "test.yaml").clock


def test_defaults_mean_a_dgt_clock_with_learnt_sides():
    settings = load_text("", "test.yaml").clock
    assert settings == ClockSettings()
    assert (settings.device, settings.sides, settings.parsed_time_control) == ("dgt", "auto", None)
    assert settings.button_actions == DEFAULT_BUTTON_ACTIONS


def test_a_usb_clock_section():
    settings = clock(
        "  device: usb\n"
        "  sides: right_white\n"
        "  time_control: 40/5400:1800+30\n"
        "  set_and_run_at_start: true\n"
        "  usb:\n"
        "    vendor_id: 0x16c0\n"
        "    product_id: 0x05df\n"
        "    endpoint: 0x82\n"
        "    layout:\n"
        "      time_format: u16le\n"
        "      left_offset: 0\n"
        "      right_offset: 2\n"
        "      lever: {offset: 4, mask: 0x01}\n"
        "      running: null\n"
    )
    assert (settings.usb.vendor_id, settings.usb.product_id, settings.usb.endpoint) == (
        0x16C0,
        0x05DF,
        0x82,
    )
    assert settings.usb.layout.lever == BitField(4, 1)
    assert settings.usb.layout.running is None
    assert settings.parsed_time_control.to_pgn() == "40/5400:1800+30"


def test_remapping_one_button_keeps_the_others():
    settings = clock("  button_actions:\n    back: clock\n    run: last\n")
    assert settings.button_actions == {**DEFAULT_BUTTON_ACTIONS, "back": "clock", "run": "last"}


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("  sides: leftwhite\n", 2, "clock.sides"),
        ("  time_control: 90++30\n", 2, "cannot read time control '90++30'"),
        ("  device: usb\n", 2, "usb.vendor_id and usb.product_id"),
        ("  button_actions: {run: dance}\n", 2, "button_actions.run must be one of"),
        ("  button_actions: {pause: last}\n", 2, "no button 'pause'"),
        ("  set_and_run_at_start: true\n", 2, "needs a time_control"),
        ("  usb:\n    layout:\n      right_offset: 6\n", 4, "beyond the 8-byte report"),
        ("  colour: white\n", 2, "unknown key"),
    ],
)
def test_mistakes_name_the_key_and_line(text, line, words):
    with pytest.raises(ConfigError) as error:
        clock(text)
    assert error.value.line == line
    assert words in str(error.value)


def test_the_parts_built_from_the_settings():
    from drivers.clock.dgt3000 import DgtClockInterpreter
    from drivers.clock.factory import clock_interpreter, clock_writer, usb_clock
    from drivers.clock.usb import UsbClock

    dgt = clock("  sides: right_white\n  time_control: 5+3\n  set_and_run_at_start: true\n")
    interpreter = clock_interpreter(dgt)
    assert isinstance(interpreter, DgtClockInterpreter)
    assert interpreter.tracker.time_control.initial_seconds() == 303
    writer = clock_writer(dgt, "xl")
    assert writer.model == "xl" and writer.set_and_run_at_start
    assert clock_writer(dgt, None) is None  # model unknown: nothing written yet
    assert usb_clock(dgt) is None

    usb = clock("  device: usb\n  usb: {vendor_id: 0x16c0, product_id: 0x05df}\n")
    assert isinstance(usb_clock(usb), UsbClock)
    assert clock_interpreter(usb) is None

    none = clock("  device: none\n")
    assert clock_interpreter(none) is None and usb_clock(none) is None
