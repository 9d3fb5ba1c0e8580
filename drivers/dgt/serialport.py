"""Opening a DGT board's serial port: the line settings every DGT board uses.

Its own module so that the link (which reads a port) and the port finder (which
asks each candidate port whether a board answers) both use it without importing
each other.
"""

from __future__ import annotations

import serial

BAUD_RATE = 9600


def open_serial(path: str) -> serial.Serial:
    """Open a DGT board's port: 9600 baud 8N1, no flow control, non-blocking."""
    return serial.Serial(
        path,
        BAUD_RATE,
        bytesize=serial.EIGHTBITS,
        parity=serial.PARITY_NONE,
        stopbits=serial.STOPBITS_ONE,
        xonxoff=False,
        rtscts=False,
        dsrdtr=False,
        timeout=0,
        write_timeout=2,
        exclusive=True,  # two programs reading one board would each miss updates
    )
