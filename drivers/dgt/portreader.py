"""A DGT board's port read on the running asyncio loop: what the single board's link
(``link.py``) and the bus chain's link (``buslink.py``) share.

The port is non-blocking (``serialport.open_serial``): the loop calls back when bytes
have come (``add_reader``), and one ``os.read`` takes them (pyserial's ``read`` adds a
``select`` per call). A read error, or the end of file (the adapter unplugged), ends
the reading once, with why; the link decides what the loss means.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import termios
from collections.abc import Callable

import serial

#: The most bytes a callback waits for: 64 bytes take 67 ms at 9600 baud, within the
#: bus's 80 ms time-out for a reply that has begun (``BusTimings.reply_timeout``).
MOST_AWAITED = 64


class PortReader:
    """``port``'s bytes to ``on_data`` as they come, until a read error or the end of
    file: then reading stops and ``on_end`` gets why (a line for the log and the
    board's connection state). ``close()`` stops reading and closes the port."""

    def __init__(
        self,
        port: serial.Serial,
        on_data: Callable[[bytes], None],
        on_end: Callable[[str], None],
    ) -> None:
        self.port = port
        self._fd = port.fileno()
        self._on_data = on_data
        self._on_end = on_end
        self._wake_after = 1  # the port's VMIN as last set (a port opened non-blocking: 0)
        self._can_wait = True  # a terminal whose VMIN can be set (False: a pipe, a socket)
        asyncio.get_running_loop().add_reader(self._fd, self._readable)

    def wake_after(self, count: int) -> None:
        """Call back only once ``count`` bytes have come (at most ``MOST_AWAITED``):
        the terminal's VMIN, which poll() honours with VTIME 0. A reply read in parts
        woke the loop once a part (the bus link knows how long each reply is); what
        never comes is read by ``take`` at the caller's time-out."""
        count = max(1, min(count, MOST_AWAITED))
        if count == self._wake_after or not self._can_wait:
            return
        try:
            attributes = termios.tcgetattr(self._fd)
            attributes[6][termios.VMIN] = count
            attributes[6][termios.VTIME] = 0
            termios.tcsetattr(self._fd, termios.TCSANOW, attributes)
        except (termios.error, OSError):
            self._can_wait = False  # not a terminal: a callback for every part, as before
            return
        self._wake_after = count

    def take(self) -> bytes:
        """The bytes that have come and not been called back (fewer than
        ``wake_after`` asked for: a reply cut short), read now; a read error raises."""
        if self._wake_after <= 1:
            return b""  # every byte that came was called back
        try:
            return os.read(self._fd, 4096)
        except BlockingIOError:
            return b""

    def _readable(self) -> None:
        try:
            data = os.read(self._fd, 4096)
        except BlockingIOError:
            return
        except OSError as error:
            self.stop()
            self._on_end(f"read error: {error}")
            return
        if not data:
            self.stop()
            self._on_end("port closed (end of file)")
            return
        self._on_data(data)

    def stop(self) -> None:
        """Read no more (the port stays open)."""
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(self._fd)

    def close(self) -> None:
        """Read no more and close the port; what fails meanwhile (a port that is
        gone) is past caring."""
        self.stop()
        with contextlib.suppress(Exception):
            self.port.close()
