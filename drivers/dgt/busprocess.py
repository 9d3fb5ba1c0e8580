"""A chain's line polled in a process of its own (``BusLineProcess``, and the child's
``main``).

Polling a DGT bus chain is a command and a reply every ~14 ms whatever the boards do:
the line's shell (``busline.py``) ran on the daemon's event loop, and on a Pi Zero 2 W
it took a third of the core the daemon's one Python thread can use, so a hall's
boards moving together queued behind it (issue 28). A Pi has four cores; the line now
runs beside the daemon, in a child process that keeps the same ``BusLine`` polling
and hands the daemon only what the replies say (``BusEvent`` values, each stamped
with ``time.monotonic()``, which is the machine's, not the process's).

The two talk over the child's standard input and output: each message a 4-byte
length and a pickle (the child is this package, started by its parent, on pipes no
one else holds). The parent says ``setup``, ``add``, ``probe``, ``read_log``,
``open``, ``close``; the child answers ``opened`` / ``failed`` for each ``open``,
``events`` as they come, ``stats`` at most once a second, and ``ended`` when the
port's polling is over (why: the port failed, a bug, closed).

The child outlives nothing: it ends at ``close``, at the end of its input (the
daemon gone, even killed), and ignores SIGINT and SIGTERM, which a terminal's Ctrl-C
and systemd send to the whole group, so that the daemon closes its boards itself.
A child that dies is a port that failed: the link reports its boards lost and
starts another at its next attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import serial

from drivers.dgt.bus import BusStats, BusTimings
from drivers.dgt.busline import BusLine, EventSink

_LENGTH = struct.Struct(">I")
#: The child's stats go to the parent at most this often (s).
STATS_EVERY = 1.0


def frame(message: tuple[Any, ...]) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(body)) + body


class FrameReader:
    """Bytes from a pipe in, whole messages out."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[Any, ...]]:
        buffer = self._buffer
        buffer.extend(data)
        messages = []
        while len(buffer) >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(buffer)
            end = _LENGTH.size + length
            if len(buffer) < end:
                break
            messages.append(pickle.loads(bytes(buffer[_LENGTH.size : end])))
            del buffer[:end]
        return messages


class BusLineProcess:
    """``BusLine``'s interface, the line polled by a child process. The child starts
    at the first ``open()`` and serves every attempt after it; one that died is
    started again at the next."""

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
        self.stats = BusStats()
        self._addresses: list[int] = []
        self._child: subprocess.Popen[bytes] | None = None
        self._reader = FrameReader()
        self._opened: asyncio.Future[str] | None = None  # "" opened, else why not
        self._ended: asyncio.Future[tuple[str, str]] | None = None  # (why, detail)
        self._closed = False

    # -- the link's requests ---------------------------------------------------------

    def add(self, address: int) -> None:
        if address not in self._addresses:
            self._addresses.append(address)
            self._send(("add", address))

    def probe(self, address: int) -> None:
        self._send(("probe", address))

    def read_log(self, address: int) -> None:
        self._send(("read_log", address))

    # -- life cycle ------------------------------------------------------------------

    async def open(self) -> None:
        if self._closed:
            raise OSError("closed")
        if self._child is None:
            self._start()
        loop = asyncio.get_running_loop()
        self._opened, self._ended = loop.create_future(), loop.create_future()
        self._send(("open",))
        why = await self._opened
        if why:
            raise OSError(why)

    async def poll(self) -> None:
        """Until the child says the polling is over: ``OSError`` for a port that
        failed (or a child that died), ``RuntimeError`` for a bug in it."""
        if self._ended is None:
            return
        why, detail = await self._ended
        if why == "port":
            raise OSError(detail)
        if why == "bug":
            raise RuntimeError(f"bus line process: {detail}")

    def release(self) -> None:
        """The child closes the port itself when its polling ends."""

    def close(self) -> None:
        self._closed = True
        self._send(("close",))
        self._stop_child()
        _settle(self._opened, "closed")
        _settle(self._ended, ("closed", ""))

    # -- the child -------------------------------------------------------------------

    def _start(self) -> None:
        package_root = str(Path(__file__).resolve().parents[2])
        environment = dict(os.environ)
        path = environment.get("PYTHONPATH", "")
        environment["PYTHONPATH"] = package_root + (os.pathsep + path if path else "")
        self._child = subprocess.Popen(
            [sys.executable, "-m", "drivers.dgt.busprocess"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=environment,
        )
        self._reader = FrameReader()
        assert self._child.stdout is not None
        os.set_blocking(self._child.stdout.fileno(), False)
        asyncio.get_running_loop().add_reader(self._child.stdout.fileno(), self._readable)
        self._send(("setup", self.port, self.timings, self.discover))
        for address in self._addresses:
            self._send(("add", address))

    def _send(self, message: tuple[Any, ...]) -> None:
        child = self._child
        if child is None or child.stdin is None:
            return  # not started: ``setup`` and the boards go first when it is
        try:
            child.stdin.write(frame(message))
            child.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # it died: its output's end says so (``_readable``)

    def _readable(self) -> None:
        child = self._child
        assert child is not None and child.stdout is not None
        try:
            data = os.read(child.stdout.fileno(), 65536)
        except BlockingIOError:
            return
        except OSError as error:
            data, detail = b"", f"bus line process unreadable: {error}"
        else:
            detail = ""
        if not data:
            self._child_ended(detail)
            return
        for message in self._reader.feed(data):
            self._message(message)

    def _message(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "events":
            self.on_events(message[1])
        elif kind == "stats":
            self.stats = message[1]
        elif kind == "opened":
            _settle(self._opened, "")
        elif kind == "failed":
            _settle(self._opened, message[1])
        elif kind == "ended":
            _settle(self._ended, (message[1], message[2]))

    def _child_ended(self, detail: str) -> None:
        code = self._stop_child()
        detail = detail or f"bus line process ended (exit code {code})"
        _settle(self._opened, detail)
        _settle(self._ended, ("port", detail))

    def _stop_child(self) -> int | None:
        """Stop reading the child and reap it: its input closed, it ends by itself."""
        child, self._child = self._child, None
        if child is None:
            return None
        assert child.stdin is not None and child.stdout is not None  # both are pipes
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(child.stdout.fileno())
        with contextlib.suppress(Exception):
            child.stdin.close()
        try:
            return child.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            child.kill()
            return child.wait()
        finally:
            child.stdout.close()


def _settle(future: asyncio.Future[Any] | None, value: Any) -> None:
    if future is not None and not future.done():
        future.set_result(value)


# -- the child ---------------------------------------------------------------------------


class _Child:
    """The child's side: the parent's messages in (standard input), the line's out."""

    def __init__(self) -> None:
        self.line: BusLine | None = None
        self.done = asyncio.get_running_loop().create_future()
        self._input = FrameReader()
        self._attempt: asyncio.Task[None] | None = None
        self._sent_stats: tuple[int, int] = (-1, -1)
        self._stats_at = 0.0
        # the messages on a descriptor of their own; a stray print goes to stderr
        self._out = os.dup(1)
        os.dup2(2, 1)
        os.set_blocking(0, False)
        asyncio.get_running_loop().add_reader(0, self._readable)

    def send(self, message: tuple[Any, ...]) -> None:
        """Blocking: a daemon that is not reading (stopped) holds the line still, and
        the boards keep their changes meanwhile; none is lost in between."""
        data = frame(message)
        while data:
            try:
                written = os.write(self._out, data)
            except BrokenPipeError:
                self._finish()
                return
            data = data[written:]

    def _events(self, events: list[Any]) -> None:
        self.send(("events", events))
        self._maybe_stats()

    def _maybe_stats(self, force: bool = False) -> None:
        line = self.line
        if line is None:
            return
        now = time.monotonic()
        stats = line.stats
        key = (stats.commands, stats.replies)
        if force or (key != self._sent_stats and now - self._stats_at >= STATS_EVERY):
            self._sent_stats, self._stats_at = key, now
            self.send(("stats", stats))

    def _readable(self) -> None:
        try:
            data = os.read(0, 65536)
        except BlockingIOError:
            return
        if not data:
            self._finish()
            return
        for message in self._input.feed(data):
            self._message(message)

    def _message(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "setup":
            _, port, timings, discover = message
            self.line = BusLine(port, timings, discover=discover, on_events=self._events)
            return
        line = self.line
        if line is None:
            return
        if kind == "add":
            line.add(message[1])
        elif kind == "probe":
            line.probe(message[1])
        elif kind == "read_log":
            line.read_log(message[1])
        elif kind == "open" and (self._attempt is None or self._attempt.done()):
            self._attempt = asyncio.get_running_loop().create_task(self._run(line))
        elif kind == "close":
            self._finish()

    async def _run(self, line: BusLine) -> None:
        try:
            await line.open()
        except (OSError, serial.SerialException) as error:
            self.send(("failed", str(error)))
            return
        self.send(("opened",))
        ticker = asyncio.get_running_loop().create_task(self._tick())
        try:
            await line.poll()
            ended = ("ended", "closed", "")
        except (OSError, serial.SerialException) as error:
            ended = ("ended", "port", str(error))
        except Exception as error:  # a bug: the daemon restarts the link, and says so
            ended = ("ended", "bug", repr(error))
        finally:
            ticker.cancel()
            line.release()
        self._maybe_stats(force=True)
        self.send(ended)

    async def _tick(self) -> None:
        """The stats of a quiet line too (a chain whose boards do nothing)."""
        while True:
            await asyncio.sleep(STATS_EVERY)
            self._maybe_stats()

    def _finish(self) -> None:
        if self.line is not None:
            self.line.close()
            self.line.release()
        if not self.done.done():
            self.done.set_result(None)


async def _serve() -> None:
    child = _Child()
    await child.done


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    asyncio.run(_serve())


if __name__ == "__main__":
    main()
