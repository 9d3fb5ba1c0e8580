"""The serial link to a DGT e-board: open, start up, read, keep alive, reconnect.

This is the imperative shell around the codec (``drivers.dgt.protocol``): it
owns the port, the time, and the retry policy, and turns what the board says
into sensor events for the rules core. It never dies on a board problem: a
vanished port, a read error or a silent board is reported as a
``ConnectionChange("lost")``, then the link retries with back-off, and on
success reports ``ConnectionChange("connected")`` and a fresh ``BoardDump``
(the ground truth after any gap), so nothing that happened meanwhile is lost
to the rules core. Each answer to its liveness probe is a ``BoardHeard``: a
board gone silent is known lost only at the time-out, and until then the rules
core decides no alarm on a picture the board has not been heard to confirm.

The port is read without blocking the event loop: pyserial opens and
configures it (9600 8N1, no flow control) and ``loop.add_reader`` wakes the
link when bytes arrive.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

import serial

from drivers.dgt import protocol
from drivers.dgt.backlog import StartupBacklog
from drivers.dgt.clockmap import ClockInterpreter, SimpleClockInterpreter
from drivers.dgt.portreader import PortReader
from drivers.dgt.protocol import (
    BatteryStatus,
    BoardDumpMessage,
    BusAddress,
    Bwtime,
    ClockAck,
    ClockTimes,
    EeMoves,
    FieldUpdate,
    Garbage,
    LongSerialNumber,
    Message,
    SerialNumber,
    Trademark,
    Version,
)
from drivers.dgt.retry import Retry
from drivers.dgt.serialport import open_serial
from drivers.dgt.shadow import BoardShadow
from drivers.sensors import BoardDump, BoardHeard, ConnectionChange, SensorEvent

log = logging.getLogger(__name__)


def os_error_text(error: BaseException) -> str:
    """A port error in words, once: pyserial wraps the OSError's text in its own
    ("[Errno 2] could not open port X: [Errno 2] No such file or directory: 'X'")."""
    number = getattr(error, "errno", None)
    if isinstance(number, int) and number > 0:
        return os.strerror(number)
    return str(error)


class LinkLost(Exception):
    """The board went away (internal: caught by ``run``, reported as an event)."""


class ClockCommandError(Exception):
    """A clock command got no ack (after one resend), or the board is not connected."""


class BoardNotConnected(ClockCommandError):
    """A command was sent while the board is not connected (nothing was sent)."""


def _monotonic_since_start() -> Callable[[], float]:
    start = time.monotonic()
    return lambda: time.monotonic() - start


class BoardLink:
    """One DGT board, read for as long as the daemon runs.

    ``port``: a device path (``/dev/ttyACM0``, a Bluetooth ``/dev/rfcomm0``, an
    emulator's link), or None to auto-detect on every connection attempt.
    ``on_event`` gets every sensor event, in order, on the event loop.
    ``clock_interpreter`` turns BWTIME messages into clock events, left and right
    (default: every message as it is, no filtering). ``time_source`` gives event times (default:
    monotonic seconds since the link was made).
    """

    def __init__(
        self,
        port: str | None,
        on_event: Callable[[SensorEvent], None],
        clock_interpreter: ClockInterpreter | None = None,
        time_source: Callable[[], float] | None = None,
        *,
        revelation: bool = False,
        liveness_interval: float = 1.0,
        liveness_timeout: float = 3.5,
        quiet_dump_after: float = 1.0,
        startup_timeout: float = 3.0,
        clock_ack_timeout: float = 2.0,
        backoff_initial: float = 0.25,
        backoff_max: float = 5.0,
        port_finder: Callable[[], Awaitable[str | None]] | None = None,
        eeprom_timeout: float = 15.0,
    ) -> None:
        self.port = port
        self.on_event = on_event
        self.clock_interpreter: ClockInterpreter = clock_interpreter or SimpleClockInterpreter()
        self.time_source = time_source or _monotonic_since_start()
        self.revelation = revelation
        self.liveness_interval = liveness_interval
        self.liveness_timeout = liveness_timeout
        self.quiet_dump_after = quiet_dump_after
        self.startup_timeout = startup_timeout
        self.clock_ack_timeout = clock_ack_timeout
        self._port_finder = port_finder
        self.eeprom_timeout = eeprom_timeout  # the 8 KB log takes ~8 s at 9600 baud

        self.version: Version | None = None
        self.serial_number: str | None = None
        self.long_serial_number: str | None = None
        self.trademark: str | None = None
        self.bus_address: int | None = None
        self.battery: BatteryStatus | None = None
        self.clock_version: tuple[int, int] | None = None
        self.port_path: str | None = None
        #: told each battery report as it arrives (the page shows it; no polling)
        self.on_battery: Callable[[BatteryStatus], None] | None = None
        self.garbage_bytes = 0
        self.connections = 0

        self._port: PortReader | None = None
        self._parser = protocol.MessageParser()
        self._shadow = BoardShadow()
        self._connected = False
        self._reported_lost = False
        # one warning for a port awaited for hours, not one a back-off
        self._retry = Retry(log, "DGT board link", backoff_initial, backoff_max)
        self._closed = False
        self._lost: asyncio.Future[None] | None = None
        self._waiters: dict[type, list[asyncio.Future[Message]]] = {}
        self._clock_lock = asyncio.Lock()
        self._clock_waiter: asyncio.Future[ClockAck] | None = None
        self._last_rx = 0.0
        self._last_field_update: float | None = None
        self._recent_updates: collections.deque[tuple[int, int]] = collections.deque(maxlen=4)
        self.eeprom_reads = 0  # EEPROM logs read back after outages
        #: the board's pictures when last known, before this link (``expect_placements``)
        self._known_before: tuple[tuple[int, ...], ...] = ()
        self._known_recent: tuple[tuple[int, int], ...] = ()  # their last field updates
        #: what the board said during the start-up, from its dump on (``backlog``)
        self._backlog: StartupBacklog | None = None
        self._wake = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None  # the session's (``_arm``)
        self._due_at = 0.0  # when it fires
        self._probed = float("-inf")  # when the last liveness probe went out

    # -- public -------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._connected

    @property
    def placement(self) -> str | None:
        """The link's shadow of the board (FEN placement), if known."""
        codes = self._shadow.codes
        return protocol.placement_from_codes(codes) if codes is not None else None

    def expect_placements(self, placements: Sequence[str]) -> None:
        """What the board showed when last known, before this link was made: a resumed
        game's position as the journal kept it (FEN placements, as the board's sensors
        see them; both ways round when its orientation is unknown). A board found
        showing something else is asked for its EEPROM log, as after an outage, so the
        moves made while the daemon was down come back from it too."""
        self._known_before = tuple(
            tuple(protocol.codes_from_placement(placement)) for placement in placements
        )

    async def run(self) -> None:
        """Connect, start up, read, and reconnect with back-off, until ``close()``."""
        await self._retry.run(self._attempt, lambda: self._closed, self._wake)

    @property
    def attempts(self) -> int:
        """Failed attempts since the last connection."""
        return self._retry.attempts

    async def _attempt(self) -> bool:
        """One connection, from opening the port to losing the board; whether the
        board was reached."""
        reached = False
        try:
            await self._connect()
            await self._start_up()
            reached = True
            await self._session()
        except LinkLost as lost:
            self._report_lost(str(lost))
        except (OSError, serial.SerialException) as error:
            self._report_lost(f"port error: {os_error_text(error)}")
        finally:
            self._disconnect()
        return reached

    def close(self) -> None:
        """Stop ``run()``; the port is closed and no more events are sent."""
        self._closed = True
        self._wake.set()
        self._fail("link closed")

    async def send_clock_command(self, frame: bytes) -> ClockAck:
        """Send one clock command and return its ack.

        One command at a time: the next waits until this one's ack came (the
        clock cannot take two in a row). Without an ack in ``clock_ack_timeout``
        seconds, or on an error ack, it is sent once more; a second silence
        raises :class:`ClockCommandError`, a second error ack is returned.
        """
        protocol.check_command(frame, self.revelation)
        async with self._clock_lock:
            ack: ClockAck | None = None
            for _attempt in range(2):
                if not self._connected:
                    raise BoardNotConnected("the board is not connected")
                waiter: asyncio.Future[ClockAck] = asyncio.get_running_loop().create_future()
                self._clock_waiter = waiter
                try:
                    self._write(frame)
                    ack = await asyncio.wait_for(waiter, self.clock_ack_timeout)
                except LinkLost as lost:
                    raise ClockCommandError(str(lost)) from None
                except TimeoutError:
                    log.info(
                        "no clock ack for %s, %s",
                        frame.hex(),
                        "resending" if not _attempt else "giving up",
                    )
                    continue
                finally:
                    self._clock_waiter = None
                if not ack.error:
                    return ack
            if ack is None:
                raise ClockCommandError(f"no ack for clock command {frame.hex()}")
            return ack

    def probe(self) -> None:
        """Ask the board to answer now (the liveness probe, out of turn): its answer is
        a ``BoardHeard``. Nothing when it is not connected."""
        if self._connected:
            with contextlib.suppress(LinkLost):
                self._write(protocol.request_serial())

    def send(self, frame: bytes) -> None:
        """Send a board command (checked by ``protocol.check_command``)."""
        protocol.check_command(frame, self.revelation)
        if not self._connected:
            raise BoardNotConnected("the board is not connected")
        try:
            self._write(frame)
        except LinkLost as lost:
            raise ClockCommandError(str(lost)) from None

    # -- connection ---------------------------------------------------------

    async def _connect(self) -> None:
        path = self.port
        if path is None:
            path = await self._find_port()
            if path is None:
                raise LinkLost("no DGT board found")
        loop = asyncio.get_running_loop()
        try:
            port = await loop.run_in_executor(None, open_serial, path)
        except (OSError, serial.SerialException) as error:
            raise LinkLost(f"cannot open {path}: {os_error_text(error)}") from None
        self.port_path = path
        self._parser = protocol.MessageParser()
        self._lost = loop.create_future()
        self._last_rx = time.monotonic()
        self._port = PortReader(port, self._received, self._fail)
        if self._closed:  # close() came while the port was being opened
            raise LinkLost("link closed")

    async def _find_port(self) -> str | None:
        if self._port_finder is not None:
            return await self._port_finder()
        from drivers.dgt import ports  # only to find the board: not before READY

        return await asyncio.get_running_loop().run_in_executor(None, ports.find_board)

    def _disconnect(self) -> None:
        self._connected = False
        if self._port is not None:
            self._port.close()
            self._port = None
        for waiters in self._waiters.values():
            for waiter in waiters:
                if not waiter.done():
                    waiter.cancel()
        self._waiters.clear()
        self._backlog = None
        if self._clock_waiter is not None and not self._clock_waiter.done():
            self._clock_waiter.set_exception(ClockCommandError("the board was lost"))

    async def _start_up(self) -> None:
        """Update mode, version, full dump: the board is connected once it has
        answered all three. The dump is always reported (ground truth)."""
        self._write(protocol.update_nice())
        version = await self._request(protocol.request_version(), Version)
        assert isinstance(version, Version)  # _request waits for the kind it is given
        self.version = version
        before, recent = self._shadow.codes, tuple(self._recent_updates)
        # After a loss, the shadow's last picture; at the first connection, what the
        # daemon knew before it started (a resumed game). Kept until this start-up has
        # its dump and log: a board lost in the middle of them (the 8 s log read) is
        # asked again at the next attempt, from the same pictures.
        candidates = (before,) if before is not None else self._known_before
        self._known_before, self._known_recent = candidates, recent or self._known_recent
        recent = self._known_recent
        self._shadow.forget()
        self._recent_updates.clear()
        dump_waiter = self._expect(BoardDumpMessage)
        self._backlog = backlog = StartupBacklog()  # the players do not wait for it
        self._write(protocol.request_board())
        dump = await self._await(dump_waiter, "board dump")
        assert isinstance(dump, BoardDumpMessage)  # the waiter is for that kind
        history: list[str] | None = None
        if candidates and dump.codes not in candidates:
            logged = await self._read_log()
            dump = BoardDumpMessage(backlog.logged_picture(dump.codes))
            if logged is not None:
                history = self._history(logged, candidates, dump.codes, recent)
        self._backlog = None
        self._known_before, self._known_recent = (), ()  # this start-up has them now
        self._connected = True
        self.connections += 1
        self._retry.succeeded()
        if self._reported_lost:
            self._reported_lost = False
            self._emit([ConnectionChange(self.time_source(), "connected", self.port_path or "")])
        events = self._shadow.dump(self.time_source(), dump, force=True)
        if history and isinstance(events[0], BoardDump):
            events[0] = replace(events[0], history=tuple(history))
        self._emit(events)
        for message in backlog.after_picture():  # as if read just now, in order
            self._handle(message)
        # The clock's times now, not at its next change: the clock interpreter learns
        # which side is White from them before anybody presses (a resumed game).
        self._write(protocol.request_clock())
        for command in (protocol.request_serial(), protocol.request_long_serial()):
            self._write(command)
        self._write(protocol.request_trademark())
        if "rfcomm" in (self.port_path or ""):  # battery status: Bluetooth boards only
            self._write(protocol.request_battery())

    async def _read_log(self) -> list[protocol.EeEvent] | None:
        """The board changed while the link (or the daemon) was away: its EEPROM log,
        read so the moves made meanwhile can be recovered (``_history``). A board
        without the log, or one that does not answer in time, gives None: the rules
        core then searches for the moves itself."""
        waiter = self._expect(EeMoves)
        self._write(protocol.check_command(protocol.request_ee_moves(), ee_moves=True))
        assert self._lost is not None
        loop = asyncio.get_running_loop()
        started = loop.time()
        either: set[asyncio.Future[Any]] = {waiter, self._lost}
        while not (waiter.done() or self._lost.done()):
            # A board without the log says nothing: give up after the start-up
            # time-out; one that is sending it (bytes held back) gets its 8 s.
            waited = loop.time() - started
            if waited > self.eeprom_timeout or (
                waited > self.startup_timeout and not self._parser.pending
            ):
                break
            await asyncio.wait(either, timeout=0.1)
        self._last_rx = time.monotonic()  # the wait is no silence of the board's
        if self._lost.done():
            self._lost.result()
        if not waiter.done():
            waiter.cancel()
            log.info("no EEPROM log from the board: the moves made while away are searched for")
            return None
        message = waiter.result()
        assert isinstance(message, EeMoves)  # the waiter is for that kind
        self.eeprom_reads += 1
        return message.events()

    @staticmethod
    def _history(
        events: list[protocol.EeEvent],
        candidates: tuple[tuple[int, ...], ...],
        after: tuple[int, ...],
        recent: tuple[tuple[int, int], ...],
    ) -> list[str] | None:
        """What the log says the board passed through (``protocol.ee_history``), from
        the first of ``candidates`` (its last known pictures) it leads on from to
        ``after``, the picture it ends on."""
        for before in candidates:
            history = protocol.ee_history(events, before, after, recent)
            if history is not None:
                return history
        log.info("the EEPROM log does not reach back to the outage")
        return None

    async def _session(self) -> None:
        """Read until the board is lost. What falls due meanwhile (``_due``) is one
        timer at the time it falls due, never a tick: an idle daemon on a Pi's budget
        pays for every wake-up (issue 19: a 0.25 s tick was two thirds of them)."""
        assert self._lost is not None
        self._probed = float("-inf")
        self._arm(time.monotonic())
        try:
            await self._lost  # raises LinkLost (set by _fail: a timer, a read, close)
        finally:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _due(self) -> float:
        """Does what is due now; returns when the next thing falls due.

        - The liveness probe once the board has been silent for ``liveness_interval``
          (a board that is sending, field updates or clock times, is there; a probe
          every interval from the first silence on, as before, gives a silent board
          three tries before ``liveness_timeout``).
        - The loss at ``liveness_timeout`` of silence.
        - The dump that confirms the shadow, once the squares have been quiet for
          ``quiet_dump_after`` after a field update.
        """
        now = time.monotonic()
        if now - self._last_rx >= self.liveness_timeout:
            raise LinkLost(f"no answer from the board for {now - self._last_rx:.1f} s")
        probe_at = max(self._last_rx, self._probed) + self.liveness_interval
        if now >= probe_at:
            self._write(protocol.request_serial())
            self._probed = now
            probe_at = now + self.liveness_interval
        due = min(probe_at, self._last_rx + self.liveness_timeout)
        if self._last_field_update is not None:
            dump_at = self._last_field_update + self.quiet_dump_after
            if now >= dump_at:
                self._last_field_update = None
                self._write(protocol.request_board())
            else:
                due = min(due, dump_at)
        return due

    def _arm(self, now: float) -> None:
        """The session's one timer, at what falls due next (a board lost: ``_fail``)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        try:
            due = self._due()
        except LinkLost as lost:
            self._fail(str(lost))
            return
        self._due_at = due
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(max(0.0, due - now), self._on_due)

    def _on_due(self) -> None:
        self._timer = None
        if self._connected and self._lost is not None and not self._lost.done():
            self._arm(time.monotonic())

    def _report_lost(self, detail: str) -> None:
        was_connected = self._connected
        self._connected = False
        if self._closed:
            return
        self._retry.failed(detail)  # a daemon waiting for its board: one line
        if (was_connected or self.connections == 0) and not self._reported_lost:
            self._reported_lost = True
            found = self.connections > 0
            if not found and self.port is None:  # auto-detection found none
                detail = "no DGT board found on any serial port, still looking"
            elif not found:  # it never connected: nothing was lost, the board is awaited
                detail = f"no board found on {self.port}, still looking ({detail})"
            self._emit([ConnectionChange(self.time_source(), "lost", detail, found=found)])

    def _fail(self, reason: str) -> None:
        if self._lost is not None and not self._lost.done():
            self._lost.set_exception(LinkLost(reason))

    # -- I/O ----------------------------------------------------------------

    def _write(self, frame: bytes) -> None:
        if self._port is None:
            raise LinkLost("port is closed")
        try:
            self._port.port.write(frame)
        except (OSError, serial.SerialException) as error:
            raise LinkLost(f"write error: {error}") from None

    def _received(self, data: bytes) -> None:
        self._last_rx = time.monotonic()
        for message in self._parser.feed(data):
            self._handle(message)

    # -- messages -----------------------------------------------------------

    def _expect(self, kind: type) -> asyncio.Future[Message]:
        waiter: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(kind, []).append(waiter)
        return waiter

    async def _await(self, waiter: asyncio.Future[Message], what: str) -> Message:
        assert self._lost is not None
        either: set[asyncio.Future[Any]] = {waiter, self._lost}
        done, _ = await asyncio.wait(
            either, timeout=self.startup_timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if self._lost.done():
            self._lost.result()
        if waiter not in done:
            waiter.cancel()
            raise LinkLost(f"no {what} from {self.port_path} (not a DGT board, or silent)")
        return waiter.result()

    async def _request(self, frame: bytes, kind: type) -> Message:
        waiter = self._expect(kind)
        self._write(frame)
        return await self._await(waiter, kind.__name__.lower())

    def _handle(self, message: Message) -> None:
        for waiter in self._waiters.pop(type(message), []):
            if not waiter.done():
                waiter.set_result(message)
        if self._backlog is not None and self._backlog.keep(message):
            return  # handled once the start-up has reported the board's picture
        match message:
            case FieldUpdate():
                if self._connected:
                    self._last_field_update = now = time.monotonic()
                    if self._timer is not None and now + self.quiet_dump_after < self._due_at:
                        self._arm(now)  # its confirming dump falls before the timer
                    self._recent_updates.append((message.square, message.code))
                    self._emit(self._shadow.field_update(self.time_source(), message))
            case BoardDumpMessage():
                if self._connected:
                    self._emit(self._shadow.dump(self.time_source(), message))
            case Bwtime(clock=clock):
                self._handle_clock(clock)
            case Version():
                self.version = message
            case SerialNumber(serial=number):
                self.serial_number = number
                if self._connected:  # the liveness probe's answer: the board is there
                    self._emit([BoardHeard(self.time_source())])
            case LongSerialNumber(serial=number):
                self.long_serial_number = number
            case Trademark(text=text):
                self.trademark = text
            case BusAddress(address=address):
                self.bus_address = address
            case BatteryStatus():
                self.battery = message
                if self.on_battery is not None:
                    self.on_battery(message)
            case protocol.UnknownMessage(message_id=message_id, data=data):
                log.info("ignored message 0x%02x with %d data bytes", message_id, len(data))
            case Garbage(data=data):
                self.garbage_bytes += len(data)
                log.debug("skipped %d garbage bytes: %s", len(data), data.hex())

    def _handle_clock(self, clock: ClockTimes | ClockAck | protocol.InvalidClockData) -> None:
        if isinstance(clock, protocol.InvalidClockData):
            log.debug("unreadable clock data %s: %s", clock.raw.hex(), clock.reason)
            return
        if isinstance(clock, ClockAck) and clock.version is not None:
            self.clock_version = clock.version
        if (
            isinstance(clock, ClockAck)
            and not clock.auto_generated
            and self._clock_waiter is not None
            and not self._clock_waiter.done()
        ):
            self._clock_waiter.set_result(clock)
        if self._connected:
            self._emit(self.clock_interpreter.interpret(self.time_source(), clock))

    def _emit(self, events: list[SensorEvent]) -> None:
        for event in events:
            try:
                self.on_event(event)
            except Exception:
                log.exception("sensor event handler failed on %r", event)
