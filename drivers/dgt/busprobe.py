"""Which boards answer on a port in DGT bus mode (for ``dgt-bridge devices --bus``).

A broadcast ping is answered by every board of the chain at a random moment within
1.1 s, each with its bus address: listening that long gives the whole chain, in a
form ready for the configuration's ``boards:`` list. Blocking by design (a command
line tool); the daemon never calls it.
"""

from __future__ import annotations

import time

import serial

from drivers.dgt import buscodec
from drivers.dgt.buscodec import BusCommand, BusReply, BusReplyId
from drivers.dgt.serialport import open_serial


def probe_chain(path: str, window: float = 1.2) -> list[int] | None:
    """The bus addresses that answered a broadcast ping on ``path`` (sorted), or None
    when the port cannot be opened."""
    try:
        port = open_serial(path)
    except (OSError, serial.SerialException):
        return None
    parser = buscodec.BusReplyParser()
    found: set[int] = set()
    try:
        port.write(
            bytes([buscodec.TO_BUSMODE])
            + buscodec.encode_command(BusCommand.PING, buscodec.BROADCAST)
        )
        deadline = time.monotonic() + window
        while time.monotonic() < deadline:
            port.timeout = max(0.0, min(0.1, deadline - time.monotonic()))
            data = port.read(256)
            for item in parser.feed(data):
                if isinstance(item, BusReply) and item.valid and item.reply_id == BusReplyId.PING:
                    found.add(item.address)
    except (OSError, serial.SerialException):
        return sorted(found)
    finally:
        port.close()
    return sorted(found)


def boards_snippet(usb_ports: list[str], chains: dict[str, list[int]]) -> str:
    """The ``boards:`` list for what was found (ids 1, 2, ...; players to fill in)."""
    lines = ["boards:"]
    number = 0
    for path, addresses in chains.items():
        for address in addresses:
            number += 1
            lines.append(f'  - {{id: "{number}", bus_port: "{path}", bus_serial: "{address:05d}"}}')
    for path in usb_ports:
        number += 1
        lines.append(f'  - {{id: "{number}", port: "{path}"}}')
    return "\n".join(lines) if number else "boards: []  # no board answered"
