"""A virtual DGT e-board with a DGT 3000 clock, on a pseudo-terminal.

The demo and the tests talk to it exactly as to a real board: through a
serial port (the pty's slave side), in the DGT protocol, via the same link. It
answers every command the link may send, keeps a clock that runs and toggles,
and plays sensor logs (real captures, or the human-handling generator's
output) in real time or faster.

It also misbehaves on request, because real boards do: garbage bytes on the
line, unplugging and replugging (the pty is closed and a new one opened; the
stable path ``port_path`` is a symlink that vanishes while "unplugged"), going
silent, and losing clock acks.

It runs in its own thread so that it works beside any event loop (the daemon's
asyncio loop, a test's) and never waits on it.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import tempfile
import threading
import time
import tty
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import chess.pgn

from drivers.dgt import protocol
from drivers.dgt.protocol import Clock, Command, ReceivedCommand
from drivers.records import Record
from drivers.sensors import (
    SIDES,
    BoardDump,
    ButtonPress,
    ClockReading,
    ClockReport,
    MagicPiece,
    SensorEvent,
    Side,
    SquareChange,
)

START_PLACEMENT = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"

#: The rules core's default settle time (``rules.settle_time``): how long a
#: position must stand before a reader at real time decides on it.
READER_SETTLE = 0.6
#: What a held position gets beyond the settle time when played faster: the
#: link's reading and the reader's timer are not instantaneous.
HOLD_MARGIN = 0.3


def played_offsets(
    events: list[SensorEvent], speed: float, hold: float = 0.0, margin: float = HOLD_MARGIN
) -> list[float]:
    """When to play each event, in seconds after the first, ``speed`` times faster.

    A position that stood at least ``hold`` seconds in the log (the reader's settle
    time: a human held it, and a reader at real time saw it) keeps standing at least
    ``hold + margin`` seconds, never longer than it stood in the log; what stood
    shorter (pieces in transit) passes ``speed`` times faster. ``hold`` 0 scales
    everything, for a reader whose own time runs ``speed`` times faster too.
    """
    offsets: list[float] = []
    for index, event in enumerate(events):
        if not offsets:
            offsets.append(0.0)
            continue
        gap = max(0.0, event.t - events[index - 1].t)
        played = gap / speed
        if hold > 0 and gap >= hold:
            played = max(played, min(gap, hold + margin))
        offsets.append(offsets[-1] + played)
    return offsets


def game_events(
    game: chess.pgn.Game, *, seed: int = 0, with_clock: bool = True, start_time: float = 0.0
) -> list[SensorEvent]:
    """The sensor log of a PGN game moved by human hands (``drivers.simulators.handling``)."""
    from drivers.simulators.handling import human_sensor_log

    return human_sensor_log(
        game.board(),
        list(game.mainline_moves()),
        seed=seed,
        with_clock=with_clock,
        start_time=start_time,
    )


@dataclass(eq=False, repr=False)
class EmulatedClock(Record):
    """A DGT 3000 in mode 23: two times, a lever, a run state. Times in seconds."""

    left: float = 300.0
    right: float = 300.0
    running: bool = False
    left_to_move: bool = True
    left_counts: bool = True
    right_counts: bool = True
    toggle: bool = True
    left_flag: bool = False
    right_flag: bool = False
    free_running: bool = True  # counts down on its own (off while a log drives it)

    def show(self, report: ClockReport | ClockReading, white_left: bool) -> None:
        """Set the clock to a sensor log's reading: a recorded one (left and right) as
        it is, one by colour with White on the side ``white_left`` says: how a
        replayed log drives the single board's and a chain's clocks."""
        reading = report if isinstance(report, ClockReading) else as_sides(report, white_left)
        self.left, self.right = reading.left, reading.right
        self.left_flag = "left" in reading.flags
        self.right_flag = "right" in reading.flags
        self.running = reading.running is not None
        if reading.running is not None:
            self.left_to_move = reading.running == "left"

    def advance(self, seconds: float) -> None:
        if not (self.running and self.free_running) or seconds <= 0:
            return
        if self.left_to_move and self.left_counts:
            self.left = max(0.0, self.left - seconds)
            if self.left == 0.0:
                self.left_flag, self.running = True, False
        elif not self.left_to_move and self.right_counts:
            self.right = max(0.0, self.right - seconds)
            if self.right == 0.0:
                self.right_flag, self.running = True, False

    def data(self, attached: bool = True) -> bytes:
        """The 7 data bytes of the BWTIME this clock shows now."""
        return protocol.bwtime_times_data(
            protocol.side_time(math.ceil(self.left - 1e-6), flag_fallen=self.left_flag),
            protocol.side_time(math.ceil(self.right - 1e-6), flag_fallen=self.right_flag),
            running=self.running,
            lever_right_high=not self.left_to_move,
            left_to_move=self.left_to_move,
            right_to_move=not self.left_to_move,
            no_clock=not attached,
        )


def as_sides(report: ClockReport, white_left: bool) -> ClockReading:
    """A clock report by colour as a clock shows it, White on the left or the right."""
    white: Side = "left" if white_left else "right"
    black: Side = "right" if white_left else "left"
    side = {"white": white, "black": black}
    return ClockReading(
        report.t,
        report.white if white_left else report.black,
        report.black if white_left else report.white,
        side[report.running] if report.running else None,
        tuple(sorted((side[colour] for colour in report.flags), key=SIDES.index)),
    )


def wait_for_master(wake_r: int, master: int | None, timeout: float) -> bool:
    """An emulator's serving thread sleeps here until the pseudo-terminal has bytes,
    a wake-up byte comes (drained here), or ``timeout``: True when the master side
    has bytes to read. Shared by the single board and the bus chain."""
    readers = [wake_r] + ([master] if master is not None else [])
    try:
        ready, _, _ = select.select(readers, [], [], timeout)
    except (OSError, ValueError):  # the master closed under us (an unplug)
        return False
    if wake_r in ready:
        with contextlib.suppress(OSError):
            os.read(wake_r, 512)
    return master is not None and master in ready


class BoardEmulator:
    """A DGT board on a pty. ``start()``, then open ``port_path``; ``stop()`` at the end.

    ``directory`` holds the stable symlink ``link_name`` -> current pty slave
    (a fresh temporary directory by default). ``white_on_left`` says which clock
    side a sensor log's White maps to when the emulator turns ClockReports (by
    colour) into BWTIME messages; a recorded ClockReading (left and right) is shown
    as it is.
    """

    def __init__(
        self,
        directory: str | Path | None = None,
        link_name: str = "dgt-board",
        *,
        placement: str = START_PLACEMENT,
        version: tuple[int, int] = (3, 1),
        serial_number: str = "01025",
        long_serial_number: str = "3000147740",
        trademark: str = "Digital Game Technology Copyright (c) 2026 DGT-Bridge emulator",
        battery: bytes = bytes([87, 0, 0, 0, 0, 0, 0, 0, 0]),
        clock_attached: bool = True,
        clock_version: tuple[int, int] = (2, 1),
        white_on_left: bool = True,
        ee_log: bool = True,
    ) -> None:
        self._own_dir = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="dgt-emulator-"))
        self.port_path = str(self.directory / link_name)
        self.codes = bytearray(protocol.codes_from_placement(placement))
        self.version = version
        self.serial_number = serial_number
        self.long_serial_number = long_serial_number
        self.trademark = trademark
        self.battery = battery
        self.clock_attached = clock_attached
        self.clock_version = clock_version
        self.white_on_left = white_on_left
        self.clock = EmulatedClock()
        self.mode = Command.SEND_RESET  # IDLE until the link picks an update mode
        self.silent = False
        #: pull the cable the next time the link asks for the EEPROM log (once)
        self.unplug_when_log_asked = False
        #: a hand that goes on playing while the link starts up: the changes made
        #: just after the board answered a command (by its code), once each
        self.changes_after_answer: dict[int, list[tuple[str, str | None]]] = {}
        self.drop_clock_acks = 0  # how many of the next clock acks to lose
        #: the DGT 3000 in "mode 23", the only mode that takes a SetNRun; out of it
        #: (a clock set by hand to a time control of its own) SetNRun gets the
        #: error ack 0x40 and the times stay as they were
        self.clock_mode23 = True
        self.display_text = ""
        self.received: list[ReceivedCommand] = []
        self.forbidden_received: list[ReceivedCommand] = []
        #: The EEPROM's cyclic event log, as a DGT board keeps it whenever it has
        #: power (unplugged from the PC too: a Bluetooth board on its battery). None:
        #: a board without one (it ignores the request, as older boards do).
        self.ee_log: bytearray | None = bytearray([protocol.EE_POWERUP]) if ee_log else None

        self._lock = threading.RLock()
        self._master: int | None = None
        self._slave: int | None = None
        self._parser = protocol.CommandParser()
        self._thread: threading.Thread | None = None
        self._running = False
        self._wake_r, self._wake_w = os.pipe()
        self._schedule: list[tuple[float, SensorEvent]] = []
        self._played = threading.Event()
        self._played.set()
        self._last_tick = time.monotonic()
        self._last_sent_clock: bytes | None = None
        self._last_clock_send = 0.0

    # -- life cycle -----------------------------------------------------------

    def start(self) -> BoardEmulator:
        """Open the pty and serve it from a background thread."""
        with self._lock:
            self._plug()
            self._running = True
        self._thread = threading.Thread(target=self._serve, name="dgt-emulator", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the pty (the port vanishes)."""
        self._running = False
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            self._unplug()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self._own_dir:
            with contextlib.suppress(OSError):
                self.directory.rmdir()

    def __enter__(self) -> BoardEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- misbehaviour on request ---------------------------------------------

    def unplug(self) -> None:
        """Pull the cable: close the pty; the link's reads fail and the path vanishes."""
        with self._lock:
            self._unplug()
        self._wake()

    def replug(self) -> None:
        """Plug it back in: a new pty behind the same ``port_path``. The board
        powers up idle again, its pieces where they were."""
        with self._lock:
            self._plug()
            self.mode = Command.SEND_RESET
        self._wake()

    @property
    def plugged(self) -> bool:
        return self._master is not None

    def inject(self, data: bytes) -> None:
        """Put raw bytes on the line (line noise, a truncated message...)."""
        self._send(data)

    def set_silent(self, silent: bool = True) -> None:
        """Stop (or resume) answering and reporting anything; the port stays open."""
        self.silent = silent
        self._wake()

    # -- the physical board and clock ------------------------------------------

    @property
    def placement(self) -> str:
        return protocol.placement_from_codes(bytes(self.codes))

    def set_board(self, placement: str) -> None:
        """Put pieces on the board without any field updates (like a reset board
        the sensors have not been asked about)."""
        with self._lock:
            self.codes[:] = protocol.codes_from_placement(placement)

    def arrange(self, placement: str) -> None:
        """A human sets up a position: every square that differs is reported,
        the lifted pieces first, as the board's sensors would see it."""
        target = protocol.codes_from_placement(placement)
        with self._lock:
            changed = [i for i in range(64) if self.codes[i] != target[i]]
            for index in sorted(changed, key=lambda i: target[i] != 0):
                self._set_code(index, target[index])

    def set_square(self, square: str, piece: str | None) -> None:
        """A human sets a piece down (or lifts one): a field update if in update mode."""
        self._set_code(protocol.square_index(square), protocol.CODE_BY_PIECE[piece] if piece else 0)

    def press_lever(self) -> None:
        """The player to move presses the clock: the other side runs."""
        with self._lock:
            self._advance_clock()
            self.clock.left_to_move = not self.clock.left_to_move
            self.clock.running = True
            self._report_clock(force=True)

    def press_button(self, button: str) -> None:
        """A clock button is pressed: the DGT 3000 sends an auto-generated ack."""
        with self._lock:
            if self.clock_attached and self.mode in (Command.SEND_UPDATE, Command.SEND_UPDATE_NICE):
                self._send(protocol.encode_button_ack(button))

    # -- playing sensor logs ------------------------------------------------

    def play(self, events: Iterable[SensorEvent], speed: float = 1.0, hold: float = 0.0) -> None:
        """Play sensor events as the board would report them, ``speed`` times
        faster than their timestamps. Returns at once; ``wait_played()`` waits.

        ``hold``: the reader's settle time in real seconds (``READER_SETTLE`` for a
        daemon at real time): a position held that long in the log still stands
        that long (see ``played_offsets``); 0 when the reader's time is scaled too.

        BoardDump becomes the field updates of setting up that position (see
        ``arrange``; ``set_board`` changes pieces silently), SquareChange and
        MagicPiece become field updates, ClockReport or ClockReading becomes a
        BWTIME (and stops the clock's own countdown), ButtonPress a button ack.
        """
        events = list(events)
        if speed <= 0:
            raise ValueError("speed must be positive")
        with self._lock:
            if any(isinstance(e, ClockReport | ClockReading) for e in events):
                self.clock.free_running = False
            start = time.monotonic()
            offsets = played_offsets(events, speed, hold)
            self._schedule.extend(
                (start + offset, e) for offset, e in zip(offsets, events, strict=True)
            )
            self._schedule.sort(key=lambda item: item[0])
            if self._schedule:
                self._played.clear()
        self._wake()

    def play_game(
        self,
        game: chess.pgn.Game,
        speed: float = 1.0,
        *,
        seed: int = 0,
        with_clock: bool = True,
    ) -> list[SensorEvent]:
        """Play a game as two humans would move the pieces (the human-handling
        model of ``drivers.simulators.handling``); returns the sensor events played."""
        events = game_events(game, seed=seed, with_clock=with_clock)
        self.play(events, speed)
        return events

    def events_for_pgn(self, path: str, *, seed: int = 0, pause: float = 5.0) -> list[SensorEvent]:
        """The sensor events of every game of a PGN file, one after the other."""
        events: list[SensorEvent] = []
        with open(path, encoding="utf-8") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                start = events[-1].t + pause if events else 0.0
                events.extend(game_events(game, seed=seed + len(events), start_time=start))
        if not events:
            raise ValueError("no games found")
        return events

    def wait_played(self, timeout: float | None = None) -> bool:
        """Wait until everything given to ``play`` has been played."""
        return self._played.wait(timeout)

    def apply(self, event: SensorEvent) -> None:
        """Play one sensor event now."""
        with self._lock:
            match event:
                case BoardDump(placement=placement):
                    self.arrange(placement)
                case SquareChange(square=square, piece=piece):
                    self.set_square(square, piece)
                case MagicPiece(square=square, meaning=meaning):
                    self._set_code(protocol.square_index(square), protocol.CODE_BY_MAGIC[meaning])
                case ClockReport() | ClockReading():
                    self._apply_clock_report(event)
                case ButtonPress(button=button):
                    self.press_button(button)

    def _apply_clock_report(self, report: ClockReport | ClockReading) -> None:
        self.clock.show(report, self.white_on_left)
        self._last_tick = time.monotonic()
        self._report_clock(force=False)

    # -- the serving thread -------------------------------------------------

    def _serve(self) -> None:
        while self._running:
            timeout = 0.05
            with self._lock:
                master = self._master
                if self._schedule:
                    timeout = max(0.0, min(timeout, self._schedule[0][0] - time.monotonic()))
            if wait_for_master(self._wake_r, master, timeout):
                assert master is not None
                self._read(master)
            self._play_due()
            with self._lock:
                self._advance_clock()
                if (
                    self.mode == Command.SEND_UPDATE
                    and time.monotonic() - self._last_clock_send >= 1
                ):
                    self._report_clock(force=True)
                elif self.mode == Command.SEND_UPDATE_NICE:
                    self._report_clock(force=False)

    def _read(self, master: int) -> None:
        try:
            data = os.read(master, 4096)
        except OSError:
            return
        with self._lock:
            if self._master == master:  # not a port closed meanwhile
                self._heard(data)

    def _heard(self, data: bytes) -> None:
        """The PC's bytes, under the lock: each command noted and answered."""
        for command in self._parser.feed(data):
            self.received.append(command)
            if not self.silent:
                self._answer(command)

    def _play_due(self) -> None:
        while True:
            with self._lock:
                if not self._schedule or self._schedule[0][0] > time.monotonic():
                    if not self._schedule:
                        self._played.set()
                    return
                _, event = self._schedule.pop(0)
                self.apply(event)

    # -- answering commands ---------------------------------------------------

    def _answer(self, command: ReceivedCommand) -> None:
        self._answer_command(command)
        for square, piece in self.changes_after_answer.pop(command.code, ()):
            self.set_square(square, piece)

    def _answer_command(self, command: ReceivedCommand) -> None:
        code = command.code
        if code == Command.SEND_EE_MOVES and self.unplug_when_log_asked:
            self.unplug_when_log_asked = False  # the cable out in the middle of start-up
            self._unplug()
            return
        if code == Command.SEND_EE_MOVES and self.ee_log is not None:
            # Asked on purpose by the link after an outage: the log, then EE_EOF.
            self._send(protocol.encode_ee_moves(bytes(self.ee_log) + bytes([protocol.EE_EOF])))
            return
        if code in protocol.FORBIDDEN_COMMANDS or code in protocol.REVELATION_ONLY_COMMANDS:
            self.forbidden_received.append(command)
            return
        if code == Command.CLOCK_MESSAGE:
            if command.clock == Clock.REV2_ASCII:
                self.forbidden_received.append(command)
                return
            self._answer_clock(command)
            return
        replies: dict[int, Callable[[], bytes]] = {
            Command.SEND_BRD: lambda: protocol.encode_board_dump(bytes(self.codes)),
            Command.SEND_CLK: self._clock_message,
            Command.RETURN_SERIALNR: lambda: protocol.encode_serial(self.serial_number),
            Command.RETURN_LONG_SERIALNR: lambda: protocol.encode_long_serial(
                self.long_serial_number
            ),
            Command.SEND_TRADEMARK: lambda: protocol.encode_trademark(self.trademark),
            Command.SEND_VERSION: lambda: protocol.encode_version(*self.version),
            Command.RETURN_BUSADRES: lambda: protocol.encode_bus_address(
                int(self.serial_number) if self.serial_number.isdigit() else 0
            ),
            Command.SEND_BATTERY_STATUS: lambda: protocol.encode_battery(self.battery),
        }
        if code in (
            Command.SEND_RESET,
            Command.SEND_UPDATE,
            Command.SEND_UPDATE_BRD,
            Command.SEND_UPDATE_NICE,
        ):
            self.mode = Command(code)
            self._last_sent_clock = None
        elif code in replies:
            self._send(replies[code]())

    def _clock_message(self) -> bytes:
        self._advance_clock()
        return bytes([protocol.MessageId.BWTIME, 0, 10]) + self.clock.data(self.clock_attached)

    def _answer_clock(self, command: ReceivedCommand) -> None:
        if not self.clock_attached or self.mode not in (
            Command.SEND_UPDATE,
            Command.SEND_UPDATE_NICE,
        ):
            return  # acks only come in the clock-reporting modes
        clock_command = command.clock or 0
        ack = (protocol.ACK_OK, clock_command, 0, 0)
        if not command.valid:
            ack = (protocol.ACK_ERROR, clock_command, 0, 0)
        elif clock_command == Clock.VERSION:
            major, minor = self.clock_version
            ack = (protocol.ACK_OK, Clock.VERSION, (major << 4) | minor, 0)
        elif clock_command == Clock.SETNRUN and not self.clock_mode23:
            ack = (protocol.ACK_ERROR, clock_command, 0, 0)
        elif clock_command == Clock.SETNRUN and len(command.payload) == 7:
            p = command.payload
            self._advance_clock()
            self.clock.left = p[0] * 3600 + p[1] * 60 + p[2]
            self.clock.right = p[3] * 3600 + p[4] * 60 + p[5]
            # Peers send 0x01 "left runs", 0x02 "right runs", 0x04 paused; after
            # that both sides count as the lever is pressed (mode 23 play).
            if p[6] & 0x03 in (0x01, 0x02):
                self.clock.left_to_move = bool(p[6] & 0x01)
            self.clock.left_counts = self.clock.right_counts = True
            self.clock.running = not p[6] & 0x04
            self.clock.toggle = bool(p[6] & 0x08)
            self.clock.left_flag = self.clock.right_flag = False
            self.clock.free_running = True
        elif clock_command == Clock.ASCII:
            self.display_text = command.payload[:8].decode("ascii", "replace")
        elif clock_command == Clock.DISPLAY:
            self.display_text = command.payload[:6].hex()
        elif clock_command == Clock.END:
            self.display_text = ""
        if self.drop_clock_acks > 0:
            self.drop_clock_acks -= 1
            return
        self._send(protocol.encode_bwtime_ack(ack))
        if clock_command == Clock.SETNRUN and ack[0] == protocol.ACK_OK:
            self._report_clock(force=True)

    # -- sending --------------------------------------------------------------

    def _set_code(self, index: int, code: int) -> None:
        with self._lock:
            self.codes[index] = code
            self._log_ee(bytes([0x40 | (code & 0x0F), index & 0x3F]))
            if self.mode != Command.SEND_RESET:
                self._send(protocol.encode_field_update(index, code))

    def _log_ee(self, entry: bytes) -> None:
        """One event in the EEPROM log; the oldest go when its 0x1f00 bytes are full."""
        if self.ee_log is None:
            return
        self.ee_log.extend(entry)
        del self.ee_log[: max(0, len(self.ee_log) - (protocol.EE_SIZE - 1))]

    def _advance_clock(self) -> None:
        now = time.monotonic()
        self.clock.advance(now - self._last_tick)
        self._last_tick = now

    def _report_clock(self, force: bool) -> None:
        """Send the clock times in the update modes: always when forced (UPDATE's
        once a second, a lever press), else only when they changed (UPDATE_NICE)."""
        if self.mode not in (Command.SEND_UPDATE, Command.SEND_UPDATE_NICE):
            return
        data = self.clock.data(self.clock_attached)
        if not force and data == self._last_sent_clock:
            return
        self._last_sent_clock = data
        self._last_clock_send = time.monotonic()
        self._send(bytes([protocol.MessageId.BWTIME, 0, 10]) + data)  # a BWTIME frame

    def _send(self, data: bytes) -> None:
        with self._lock:
            if self._master is None or self.silent:
                return
            with contextlib.suppress(OSError):
                os.write(self._master, data)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def _plug(self) -> None:
        if self._master is not None:
            return
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self._parser = protocol.CommandParser()
        temporary = f"{self.port_path}.{os.getpid()}.tmp"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        os.symlink(os.ttyname(slave), temporary)
        os.replace(temporary, self.port_path)

    def _unplug(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.port_path)
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None
