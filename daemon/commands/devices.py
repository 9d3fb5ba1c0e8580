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
    parser.add_argument(
        "--bus",
        action="store_true",
        help="also ask each serial port (or each --port) for a chain of boards in DGT bus mode "
        "(a broadcast ping, 1.2 s a port) and print a boards: list for the configuration",
    )
    parser.add_argument(
        "--port",
        metavar="PATH",
        action="append",
        default=[],
        help="with --bus: the ports to ask (repeatable; default: every serial port listed)",
    )
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
    chains = _chains(args, listing) if args.bus else None
    if args.json:
        data = listing.to_dict()
        if chains is not None:
            data["bus_chains"] = chains  # null: a named port that cannot be opened
        print(json.dumps(data, indent=2))
        return 1 if chains and None in chains.values() else 0
    print(format_listing(listing))
    if chains is not None:
        from drivers.dgt.busprobe import boards_snippet

        for path, addresses in chains.items():
            if addresses is None:
                print(f"bus mode on {path}: the port cannot be opened")
                continue
            found = ", ".join(f"{a:05d}" for a in addresses) or "no board answered"
            print(f"bus mode on {path}: {found}")
        usb = [p.path for p in listing.serial_ports if p.looks_like_dgt and p.path not in chains]
        chained = {p: a for p, a in chains.items() if a}
        print("\n# for the configuration (fill in the players):")
        print(boards_snippet(usb, chained))
        if None in chains.values():
            return 1
    return 0


def _chains(args: argparse.Namespace, listing: object) -> dict[str, list[int] | None]:
    """Each port asked in bus mode: the addresses of the boards that answered; None
    for a port named with --port that cannot be opened (a typo must not read as
    "no board answered")."""
    from drivers.dgt.busprobe import probe_chain

    ports = args.port or [p.path for p in getattr(listing, "serial_ports", [])]
    chains: dict[str, list[int] | None] = {}
    for path in ports:
        found = probe_chain(path)
        if found is not None or args.port:
            chains[path] = found
    return chains
