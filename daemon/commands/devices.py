"""``dgt-bridge devices``: which DGT boards, USB clocks and serial ports are plugged in."""

from __future__ import annotations

import argparse
import json
import sys

from drivers.clock.devices import format_listing, list_devices


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "devices",
        help="list DGT boards, USB clocks and serial ports that are plugged in",
        description=(
            "List DGT boards (USB vendor 045b) and USB clocks found with pyusb, and the "
            "serial ports a board could be on (/dev/ttyACM*, /dev/ttyUSB*, /dev/rfcomm*). "
            "The USB clock's ids come from the configuration (clock.usb) or --usb-clock. "
            "Without USB access the serial ports are still listed."
        ),
    )
    parser.add_argument("--config", metavar="FILE", help="read the USB clock's ids from FILE")
    parser.add_argument(
        "--usb-clock",
        metavar="VID:PID",
        action="append",
        default=[],
        help="also look for a USB clock with these hexadecimal ids (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=devices)


def parse_ids(text: str) -> tuple[int, int]:
    vendor, sep, product = text.partition(":")
    try:
        if not sep:
            raise ValueError
        return int(vendor, 16), int(product, 16)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--usb-clock {text!r}: write the ids in hexadecimal as VID:PID, e.g. 16c0:05df"
        ) from None


def configured_clock_ids(config: str | None) -> tuple[list[tuple[int, int]], str | None]:
    """The USB clock ids in the configuration, and a warning if it could not be read."""
    from daemon.config import ConfigError, load

    try:
        settings = load(config)
    except (ConfigError, OSError) as error:
        return [], f"configuration not read ({error}); USB clocks from it are not looked for"
    usb = getattr(getattr(settings, "clock", None), "usb", None)
    if usb is not None and usb.vendor_id and usb.product_id:
        return [(usb.vendor_id, usb.product_id)], None
    return [], None


def devices(args: argparse.Namespace) -> int:
    try:
        ids = [parse_ids(text) for text in args.usb_clock]
    except argparse.ArgumentTypeError as error:
        print(error, file=sys.stderr)
        return 2
    configured, warning = configured_clock_ids(args.config)
    if warning and args.config:
        print(warning, file=sys.stderr)
    listing = list_devices(ids + configured)
    if args.json:
        print(json.dumps(listing.to_dict(), indent=2))
    else:
        print(format_listing(listing))
    return 0
