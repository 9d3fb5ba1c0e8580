"""A chain's line: the bus poller's commands written and its replies read (the I/O
shell of ``bus.py``, without what a reply means for a board).

What each reply means for its board (its shadow, its clock, its settling after an
outage) is the link's (``buslink.py``). The line only keeps the 9600-baud line busy:
each reply read sends the next command at once, and the poller is woken at its next
deadline. It runs in a process of its own (``busprocess.py``), a plain loop around
``poll()`` with no event loop: polling a chain is a command and a reply every ~14 ms
whatever the boards do, and on the daemon's asyncio loop it took a third of the
core a Pi Zero 2 W gives the daemon's one Python thread (issue 28).

Each reply wakes the loop once: the terminal's VMIN is set to the bytes the awaited
reply still lacks (``poll()`` honours it with VTIME 0), so a change list that the
line carries in two parts is one wake, not two; what never comes is read at the
reply's time-out (a reply cut short) and asked for again by the poller.
"""

from __future__ import annotations

import contextlib
import os
import termios
import time
from collections.abc import Callable

import serial

from drivers.dgt.bus import BusEvent, BusPoller, BusStats, BusTimings
from drivers.dgt.buscodec import check_bus_command
from drivers.dgt.serialport import open_serial

#: Where the line's events go: each reply's events, in order, in one call.
EventSink = Callable[[list[BusEvent]], None]
#: The most bytes a wake waits for: 64 bytes take 67 ms at 9600 baud, within the bus's
#: 80 ms time-out for a reply that has begun (``BusTimings.reply_timeout``).
MOST_AWAITED = 64


class PortClosed(OSError):
    """The port failed (read or write error, the adapter unplugged): every board on it
    is lost until it opens again."""


class BusLine:
    """The line on ``port``: ``open()``, then ``step(now)`` whenever ``wake_at()``
    comes and ``readable(now)`` whenever the port has bytes, until one raises
    ``PortClosed`` (or ``release()``). The boards to poll are ``add``-ed; ``probe``
    and ``read_log`` are the link's requests to the poller. Events go to
    ``on_events``, each reply's after the next command is on the line."""

    def __init__(
        self,
        port: str,
        timings: BusTimings,
        *,
        discover: bool = True,
        on_events: EventSink,
    ) -> None:
        self.port = port
        self.timings = timings
        self.discover = discover
        self.on_events = on_events
        self.poller = BusPoller(timings=timings, discover=discover)
        self.serial: serial.Serial | None = None
        self.fd = -1
        self._attributes: list | None = None  # the terminal's, VMIN set as last asked
        self._wake_after = 1

    @property
    def stats(self) -> BusStats:
        return self.poller.stats

    @property
    def is_open(self) -> bool:
        return self.serial is not None

    # -- the link's requests ---------------------------------------------------------

    def add(self, address: int) -> None:
        self.poller.add(address)

    def probe(self, address: int) -> None:
        """Poll board ``address`` now, out of turn (its answer: ``BoardAnswered``)."""
        self.poller.probe(address, time.monotonic())

    def read_log(self, address: int) -> None:
        self.poller.read_log(address)

    # -- the port --------------------------------------------------------------------

    def open(self) -> None:
        """Open the port (``OSError`` or ``serial.SerialException`` if it cannot be):
        every board starts again from a ping and a dump, as after any outage."""
        self.serial = open_serial(self.port)
        self.fd = self.serial.fileno()
        try:
            self._attributes = termios.tcgetattr(self.fd)
        except termios.error:
            self._attributes = None  # not a terminal: a wake for every part
        self._wake_after = 1
        fresh = BusPoller(list(self.poller.boards), self.timings, discover=self.discover)
        fresh.stats = self.poller.stats
        self.poller = fresh

    def release(self) -> None:
        """Close the port (again: nothing)."""
        port, self.serial, self.fd = self.serial, None, -1
        if port is not None:
            with contextlib.suppress(Exception):  # a port that is gone: past caring
                port.close()

    # -- the line --------------------------------------------------------------------

    def wake_at(self, now: float) -> float:
        """When ``step`` is next due: a reply's time-out, or the next command."""
        poller = self.poller
        wake = poller.deadline() if poller.busy else poller.idle_until(now)
        return now if wake is None else wake

    def step(self, now: float) -> None:
        """What is due now: time-outs, then the next command (written)."""
        poller = self.poller
        deadline = poller.deadline()
        if deadline is not None and now >= deadline:
            left = self._take()  # a reply too short to wake the loop (VMIN)
            if left:
                self._emit(poller.feed(left, now))
        self._emit(poller.expire(now))
        frame = poller.next_command(now)
        while frame is not None:
            self._write(check_bus_command(frame, from_start=poller.reading_log))
            if poller.busy:
                break
            frame = poller.next_command(time.monotonic())  # no reply: on at once
        self._await_reply()

    def readable(self, now: float) -> None:
        """The port has bytes: read, the next command out, then the reply's events
        (each board's pipeline takes the daemon milliseconds, tens on a Pi when a
        hall's boards move together, and the line, every board's, waited for them)."""
        try:
            data = os.read(self.fd, 4096)
        except BlockingIOError:
            return
        except OSError as error:
            raise PortClosed(f"read error: {error}") from error
        if not data:
            raise PortClosed("port closed (end of file)")
        poller = self.poller
        poller.stats.wakes += 1
        events = poller.feed(data, now)
        if not poller.busy:
            self.step(time.monotonic())
        else:
            self._await_reply()
        self._emit(events)

    def _write(self, frame: bytes) -> None:
        if self.serial is None:
            raise PortClosed("port is closed")
        try:
            # The port is non-blocking and a command is 4 bytes: one write() call;
            # pyserial's write() (a select() per call) is the fallback for a full buffer.
            written = os.write(self.fd, frame)
        except BlockingIOError:
            written = 0
        except OSError as error:
            raise PortClosed(f"write error: {error}") from error
        if written < len(frame):
            try:
                self.serial.write(frame[written:])
            except serial.SerialException as error:
                raise PortClosed(f"write error: {error}") from error

    def _take(self) -> bytes:
        """What came and did not wake the loop (fewer bytes than VMIN asked for)."""
        if self._wake_after <= 1 or self.serial is None:
            return b""
        try:
            return os.read(self.fd, 4096)
        except BlockingIOError:
            return b""
        except OSError as error:
            raise PortClosed(f"read error: {error}") from error

    def _await_reply(self) -> None:
        """Be woken only once the reply awaited can be whole: VMIN, the bytes it still
        lacks (at most ``MOST_AWAITED``)."""
        count = max(1, min(self.poller.awaited_bytes(), MOST_AWAITED))
        attributes = self._attributes
        if count == self._wake_after or attributes is None:
            return
        attributes[6][termios.VMIN] = count
        attributes[6][termios.VTIME] = 0
        try:
            termios.tcsetattr(self.fd, termios.TCSANOW, attributes)
        except (termios.error, OSError):
            self._attributes = None  # not a terminal after all: a wake for every part
            return
        self._wake_after = count

    def _emit(self, events: list[BusEvent]) -> None:
        if events:
            self.on_events(events)
