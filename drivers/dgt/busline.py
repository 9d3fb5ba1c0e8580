"""A chain's line: the bus poller's commands written, its replies read, on the running
asyncio loop (the I/O shell of ``bus.py``, without what a reply means for a board).

What each reply means for its board (its shadow, its clock, its settling after an
outage) is the link's (``buslink.py``). The line only keeps the 9600-baud line busy:
each reply read sends the next command at once, in the same callback, and one timer
wakes the poller at its next deadline. The daemon runs it in a process of its own
(``busprocess.py``): polling a chain is a command every ~14 ms whatever the boards
do, and on a Pi Zero 2 W it took a third of the daemon's core (issue 28).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable

from drivers.dgt.bus import BusEvent, BusPoller, BusStats, BusTimings
from drivers.dgt.buscodec import check_bus_command
from drivers.dgt.portreader import PortReader
from drivers.dgt.serialport import open_serial

#: Where the line's events go: each reply's events, in order, in one call.
EventSink = Callable[[list[BusEvent]], None]


class BusLine:
    """The line on ``port``: ``open()``, then ``poll()`` until the port fails (it
    raises ``OSError``) or ``close()``; ``release()`` closes the port. The boards to
    poll are ``add``-ed; ``probe`` and ``read_log`` are the link's requests to the
    poller. Events go to ``on_events``."""

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
        self._reader: PortReader | None = None
        self._closed = False
        self._over: asyncio.Future[None] | None = None  # the open port's polling is over
        self._timer: asyncio.TimerHandle | None = None  # the poller's next deadline

    @property
    def stats(self) -> BusStats:
        return self.poller.stats

    # -- the link's requests ---------------------------------------------------------

    def add(self, address: int) -> None:
        self.poller.add(address)
        if self._polling():
            asyncio.get_running_loop().call_soon(self._step)  # polled from now on

    def probe(self, address: int) -> None:
        """Poll board ``address`` now, out of turn (its answer: ``BoardAnswered``)."""
        self.poller.probe(address, time.monotonic())
        if self._polling() and not self.poller.busy:
            asyncio.get_running_loop().call_soon(self._step)

    def read_log(self, address: int) -> None:
        self.poller.read_log(address)

    # -- life cycle ------------------------------------------------------------------

    async def open(self) -> None:
        """Open the port (``OSError`` or ``serial.SerialException`` if it cannot be):
        every board starts again from a ping and a dump, as after any outage."""
        self._reader = PortReader(open_serial(self.port), self._received, self._read_ended)
        fresh = BusPoller(list(self.poller.boards), self.timings, discover=self.discover)
        fresh.stats = self.poller.stats
        self.poller = fresh

    async def poll(self) -> None:
        """Poll until the port fails (raised) or ``close()``. No task wakes per
        command: the old loop's ``wait_for`` made a task and a timer for every one of
        the ~50 polls a second of a 12-board chain (issue 19)."""
        if self._closed:
            return
        self._over = asyncio.get_running_loop().create_future()
        try:
            self._step()
            await self._over
        finally:
            self._over = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def release(self) -> None:
        """Close the port (again: nothing)."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def close(self) -> None:
        """Poll no more, for good."""
        self._closed = True
        self._end_polling()

    # -- the line --------------------------------------------------------------------

    def _polling(self) -> bool:
        return self._over is not None and not self._over.done()

    def _step(self) -> None:
        """What is due now: time-outs, then the next command (written), then the
        timer for the poller's next deadline."""
        if not self._polling():
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        try:
            now = time.monotonic()
            deadline = self.poller.deadline()
            if deadline is not None and now >= deadline and self._reader is not None:
                # what came of a reply too short to wake the loop (``wake_after``)
                left = self._reader.take()
                if left:
                    self._emit(self.poller.feed(left, now))
            self._emit(self.poller.expire(now))
            if not self._polling():  # a handler closed the line
                return
            frame = self.poller.next_command(now)
            while frame is not None:
                self._write(check_bus_command(frame, from_start=self.poller.reading_log))
                if self.poller.busy:
                    break
                frame = self.poller.next_command(time.monotonic())  # no reply: on at once
        except Exception as error:  # poll() raises it: a port error or a bug
            # Whatever it is, polling ends here and ``poll()`` raises it (a port error:
            # the port is reopened; anything else: the hall marks the boards failed and
            # restarts the link). A callback that just stopped would leave every board
            # "connected" and unpolled for good, with no message.
            self._end_polling(error)
            return
        self._await_reply()
        now = time.monotonic()
        wake_at = self.poller.deadline() if self.poller.busy else self.poller.idle_until(now)
        delay = min(max(0.0, (wake_at or now) - now), 1.0)
        self._timer = asyncio.get_running_loop().call_later(delay, self._step)

    def _end_polling(self, error: BaseException | None = None) -> None:
        over = self._over
        if over is not None and not over.done():
            if error is None:
                over.set_result(None)
            else:
                over.set_exception(error)

    def _write(self, frame: bytes) -> None:
        if self._reader is None:
            raise OSError("port is closed")
        port = self._reader.port
        try:
            # The port is non-blocking and a command is 4 bytes: one write() call.
            # pyserial's write() adds a select() per call, which was 15% of a
            # 12-board chain's CPU (issue 19); it is the fallback for a full buffer.
            written = os.write(port.fileno(), frame)
        except BlockingIOError:
            written = 0
        if written < len(frame):
            port.write(frame[written:])

    def _received(self, data: bytes) -> None:
        try:
            events = self.poller.feed(data, time.monotonic())
            if events and not self.poller.busy:
                # The next command goes on the line before the reply's events are
                # handled: each board's rules core, journal, page and MQTT take the
                # event loop for milliseconds (tens on a Pi when a hall's boards move
                # together), and the line, every board's, waited for them (issue 28).
                self._step()
            self._emit(events)
        except Exception as error:  # as in _step: poll() raises it
            self._end_polling(error)
            return
        if not self.poller.busy:
            self._step()  # the line is free: the next command goes at once
        else:
            self._await_reply()

    def _await_reply(self) -> None:
        """Be called back only once the reply awaited can be whole (or its next part
        can be read): a change list in two parts woke the loop twice, and each wake
        was much of a poll's CPU (issue 28, the Zero 2 W's budget)."""
        if self._reader is not None:
            self._reader.wake_after(self.poller.awaited_bytes())

    def _read_ended(self, why: str) -> None:
        self._end_polling(OSError(why))

    def _emit(self, events: list[BusEvent]) -> None:
        if events:
            self.on_events(events)
