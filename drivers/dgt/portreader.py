"""A DGT board's port read on the running asyncio loop (the single board's link,
``link.py``).

The port is non-blocking (``serialport.open_serial``): the loop calls back when bytes
have come (``add_reader``), and one ``os.read`` takes them (pyserial's ``read`` adds a
``select`` per call). A read error, or the end of file (the adapter unplugged), ends
the reading once, with why; the link decides what the loss means.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable

import serial


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
        asyncio.get_running_loop().add_reader(self._fd, self._readable)

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
