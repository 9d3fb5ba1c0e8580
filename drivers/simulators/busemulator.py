"""A chain of N virtual DGT boards in bus mode, on one pseudo-terminal.

What a club's daisy chain looks like to the PC: one serial line, many boards, each
answering only the commands addressed to it (``drivers/dgt/buscodec.py``). Each virtual
board has its own pieces, its own DGT 3000 and its own sensor log to play, and
behaves as the protocol header says a board in bus mode does:

- commands carry a checksum; a board ignores a command whose checksum is wrong;
- its input buffer holds one command: a command that reaches a board still busy
  with the previous one is lost (``lost_commands`` counts them);
- SEND_CHANGES answers with the changes since the last call and forgets them;
  REPEAT_CHANGES sends the same list again;
- it keeps an EEPROM log (the 0x1f00-byte cyclic buffer of ``protocol.md`` 1.12:
  piece changes, the clock time at each lever press, EE_POWERUP at power-up) while
  it has power, whoever reads the line; SEND_FROM_START answers with the log from
  the last EE_START_TAG (or, with none, from the oldest byte it still holds) up to
  the changes already sent, never the ones SEND_CHANGES has still to send
  (``dgtbrd`` header). The link never writes the start tag (SET_START_GAME writes
  the EEPROM), so the emulator's log runs from its power-up;
- a broadcast ping is answered by every board at a random moment within 1.1 s,
  except by a board told to IGNORE_NEXT_BUS_PING;
- the line is shared: at ``baud`` (9600 by default) a reply takes its real time
  (10 bits a byte) and replies never overlap, so a benchmark on the emulator meets
  the same bound as a real chain.

Faults on request: the next reply of a board corrupted (its checksum fails) or cut
short (its last part lost on the line), a board
unplugged from the middle of the chain (it says nothing; what happens on it meanwhile
is in no change list and no log, as on a board without power, or, ``powered=True``,
only its line is cut: it keeps its changes and its log) and plugged in again. The
chain outlives the daemon that reads it: kill the daemon, play on, start it again.

It reuses the single-board emulator's pty plumbing and serving thread.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from drivers.dgt import buscodec, protocol
from drivers.dgt.buscodec import BusCommand, BusReplyId, BusRequest
from drivers.dgt.protocol import EeClockTime
from drivers.records import Record
from drivers.sensors import (
    BoardDump,
    ClockReading,
    ClockReport,
    Colour,
    MagicPiece,
    SensorEvent,
    SquareChange,
)
from drivers.simulators.emulator import (
    START_PLACEMENT,
    BoardEmulator,
    EmulatedClock,
    played_offsets,
    wait_for_master,
)

#: Bit times per byte on the line (start, 8 data, stop).
BITS_PER_BYTE = 10
#: A long reply reaches the reader in parts of this size, as the line carries it.
REPLY_CHUNK = 64

_START_CODES = protocol.codes_from_placement(START_PLACEMENT)


@dataclass(eq=False, repr=False)
class VirtualBusBoard(Record):
    """One board of the chain: its pieces, clock, pending changes and faults."""

    serial: str
    address: int
    codes: bytearray = field(default_factory=lambda: bytearray(_START_CODES))
    clock: EmulatedClock = field(default_factory=EmulatedClock)
    white_on_left: bool = True
    version: tuple[int, int] = (1, 7)
    changes: list[tuple[int, int] | EeClockTime] = field(default_factory=list)
    last_changes: bytes = b""
    plugged: bool = True
    powered: bool = True  # it writes its changes and its log (off the line, or not)
    ee_log: bytearray = field(default_factory=lambda: bytearray([protocol.EE_POWERUP]))
    ee_written: int = 1  # bytes ever written to the log (its end's position)
    ee_sent: int = 1  # the log's position up to which its changes have been sent
    ee_start: int | None = None  # where the last EE_START_TAG is
    ignore_next_ping: bool = False
    busy: bool = False  # a reply is being prepared: the one-command buffer is full
    corrupt_replies: int = 0
    cut_replies: int = 0  # the next replies' tails are lost on the line
    lost_commands: int = 0
    answered: int = 0
    last_tick: float = field(default_factory=time.monotonic)

    @property
    def placement(self) -> str:
        return protocol.placement_from_codes(bytes(self.codes))

    def set_code(self, index: int, code: int) -> None:
        self.codes[index] = code
        if self.powered:
            self.changes.append((index, code))
            self.log_ee(buscodec.encode_changes([(index, code)]))

    def log_ee(self, entry: bytes) -> None:
        """One event in its EEPROM log; the oldest go when its 0x1f00 bytes are full."""
        self.ee_log.extend(entry)
        self.ee_written += len(entry)
        del self.ee_log[: max(0, len(self.ee_log) - (protocol.EE_SIZE - 1))]

    def from_start(self) -> bytes:
        """SEND_FROM_START's data: the log from the last start tag (or the oldest byte
        it holds) up to the changes already sent."""
        oldest = self.ee_written - len(self.ee_log)
        begin = self.ee_start if self.ee_start is not None and self.ee_start >= oldest else oldest
        return bytes(self.ee_log[begin - oldest : max(begin, self.ee_sent) - oldest])

    def power_up(self) -> None:
        """Power comes back: nothing kept to send, EE_POWERUP in the log."""
        self.powered, self.changes, self.last_changes = True, [], b""
        self.log_ee(bytes([protocol.EE_POWERUP]))
        self.ee_sent = self.ee_written

    def advance_clock(self, now: float) -> None:
        self.clock.advance(now - self.last_tick)
        self.last_tick = now


class BusChainEmulator(BoardEmulator):
    """``BusChainEmulator(serials=["01025", "01026", ...]).start()``, then open
    ``port_path`` in bus mode; ``stop()`` at the end. ``boards[i]`` is the i-th
    board of the chain; ``play(i, events, speed)`` plays a sensor log on it."""

    def __init__(
        self,
        directory: str | Path | None = None,
        link_name: str = "dgt-bus",
        *,
        serials: Iterable[str] = ("01025",),
        baud: int | None = 9600,
        turnaround: float = 0.002,
        seed: int = 0,
    ) -> None:
        super().__init__(directory, link_name)
        self.boards = [VirtualBusBoard(s, buscodec.bus_address(s)) for s in serials]
        self.baud = baud
        self.turnaround = turnaround
        self.rng = random.Random(seed)
        self.bus_received: list[BusRequest] = []
        self.bus_forbidden: list[BusRequest] = []
        self.bad_commands = 0  # commands ignored for a wrong checksum
        self.bytes_on_line = 0  # both ways
        self._bus_parser = buscodec.BusCommandParser()
        # (due, board index, bytes, the reply's last part): a reply's header goes out when
        # its transmission begins, the rest when it ends, as bytes on a real line do.
        self._outbox: list[tuple[float, int, bytes, bool]] = []
        self._line_free_at = 0.0
        self._board_schedule: list[tuple[float, int, SensorEvent]] = []

    # -- the chain -----------------------------------------------------------

    def board_by_address(self, address: int) -> VirtualBusBoard | None:
        return next((b for b in self.boards if b.address == address), None)

    def add_board(self, serial: str) -> VirtualBusBoard:
        """A board plugged onto the end of the chain while it runs."""
        board = VirtualBusBoard(serial, buscodec.bus_address(serial))
        with self._lock:
            self.boards.append(board)
        return board

    def unplug_board(self, index: int, *, powered: bool = False) -> None:
        """Pull one board out of the chain (the others go on): without power (its
        changes meanwhile are nowhere), or ``powered`` (only its line is cut: it keeps
        them, and its log)."""
        with self._lock:
            self.boards[index].plugged = False
            self.boards[index].powered = powered
            self.boards[index].busy = False

    def press_lever_on(self, index: int) -> None:
        """The player to move on board ``index`` presses his clock."""
        with self._lock:
            board = self.boards[index]
            board.advance_clock(time.monotonic())
            white_to_move = board.clock.left_to_move == board.white_on_left
            other: Colour = "black" if white_to_move else "white"
            white, black = (
                (board.clock.left, board.clock.right)
                if board.white_on_left
                else (board.clock.right, board.clock.left)
            )
            _apply_clock_report(board, ClockReport(0.0, white, black, other))

    def replug_board(self, index: int) -> None:
        """Put it back: without power meanwhile it powers up with an empty change
        list; powered, it has kept what changed."""
        with self._lock:
            board = self.boards[index]
            if not board.powered:
                board.power_up()
            board.plugged = True

    def corrupt_next_reply(self, index: int, count: int = 1) -> None:
        """The next ``count`` replies of board ``index`` arrive with a bad checksum."""
        with self._lock:
            self.boards[index].corrupt_replies += count

    def cut_next_reply(self, index: int, count: int = 1) -> None:
        """The next ``count`` replies of board ``index`` are cut short on the line:
        only their header arrives (the board has sent, and cleared, its changes)."""
        with self._lock:
            self.boards[index].cut_replies += count

    def set_square_on(self, index: int, square: str, piece: str | None) -> None:
        code = protocol.CODE_BY_PIECE[piece] if piece else 0
        with self._lock:
            self.boards[index].set_code(protocol.square_index(square), code)

    # -- playing sensor logs -------------------------------------------------

    def play_on(
        self, index: int, events: Iterable[SensorEvent], speed: float = 1.0, hold: float = 0.0
    ) -> None:
        """Play a sensor log on board ``index``, ``speed`` times faster than its
        timestamps; returns at once (``wait_played()`` waits for every board).
        ``hold``: as ``BoardEmulator.play``'s, a position that stood that long in the
        log still stands that long (a reader at real time settles on it)."""
        events = list(events)
        if speed <= 0:
            raise ValueError("speed must be positive")
        with self._lock:
            board = self.boards[index]
            if any(isinstance(e, ClockReport | ClockReading) for e in events):
                board.clock.free_running = False
            start = time.monotonic()
            offsets = played_offsets(events, speed, hold)
            self._board_schedule.extend(
                (start + offset, index, e) for offset, e in zip(offsets, events, strict=True)
            )
            self._board_schedule.sort(key=lambda item: item[0])
            if self._board_schedule:
                self._played.clear()
        self._wake()

    def apply_on(self, index: int, event: SensorEvent) -> None:
        with self._lock:
            board = self.boards[index]
            match event:
                case BoardDump(placement=placement):
                    target = protocol.codes_from_placement(placement)
                    changed = [i for i in range(64) if board.codes[i] != target[i]]
                    for i in sorted(changed, key=lambda i: target[i] != 0):
                        board.set_code(i, target[i])
                case SquareChange(square=square, piece=piece):
                    code = protocol.CODE_BY_PIECE[piece] if piece else 0
                    board.set_code(protocol.square_index(square), code)
                case MagicPiece(square=square, meaning=meaning):
                    board.set_code(protocol.square_index(square), protocol.CODE_BY_MAGIC[meaning])
                case ClockReport() | ClockReading():
                    _apply_clock_report(board, event)

    # -- the serving thread (replaces the single board's) ----------------------

    def _serve(self) -> None:
        while self._running:
            timeout = 0.05
            now = time.monotonic()
            with self._lock:
                master = self._master
                for due in (self._board_schedule[:1], self._outbox[:1]):
                    if due:
                        timeout = max(0.0, min(timeout, due[0][0] - now))
            if wait_for_master(self._wake_r, master, timeout):
                assert master is not None
                self._read(master)
            self._play_due_boards()
            self._send_due_replies()

    def _heard(self, data: bytes) -> None:
        """The PC's bytes on the chain, under the lock: each command to its board."""
        self.bytes_on_line += len(data)
        for request in self._bus_parser.feed(data):
            self.bus_received.append(request)
            self._answer_bus(request)

    def _play_due_boards(self) -> None:
        while True:
            with self._lock:
                now = time.monotonic()
                if not self._board_schedule or self._board_schedule[0][0] > now:
                    if not self._board_schedule:
                        self._played.set()
                    return
                _, index, event = self._board_schedule.pop(0)
                self.apply_on(index, event)

    def _send_due_replies(self) -> None:
        with self._lock:
            now = time.monotonic()
            while self._outbox and self._outbox[0][0] <= now:
                _, index, reply, last = self._outbox.pop(0)
                board = self.boards[index]
                if last:
                    board.busy = False
                if not board.plugged:
                    continue
                if last and board.corrupt_replies > 0:
                    board.corrupt_replies -= 1
                    reply = reply[:-1] + bytes([(reply[-1] + 1) & 0x7F])
                if last and board.cut_replies > 0:  # its last part lost: the reply cut short
                    board.cut_replies -= 1
                    continue
                board.answered += last
                self.bytes_on_line += len(reply)
                self._send(reply)

    # -- answering -----------------------------------------------------------

    def _answer_bus(self, request: BusRequest) -> None:
        if request.address < 0:  # a single-board command byte, or a cut command
            if not request.command & 0x80 and request.command != buscodec.TO_BUSMODE:
                self.bus_forbidden.append(request)  # it would take the chain out of bus mode
            return
        if not request.valid:
            self.bad_commands += 1
            return
        if request.command not in buscodec.SAFE_BUS_COMMANDS | {BusCommand.SEND_FROM_START}:
            self.bus_forbidden.append(request)
            return
        if request.address == buscodec.BROADCAST:
            if request.command == BusCommand.PING:
                self._broadcast_ping()
            return
        for index, board in enumerate(self.boards):
            if board.address == request.address and board.plugged:
                if board.busy:
                    board.lost_commands += 1  # the one-command buffer is full
                    continue
                reply = self._reply(board, request.command)
                if reply is not None:
                    self._queue(index, reply, request_bytes=len(request.raw))

    def _reply(self, board: VirtualBusBoard, command: int) -> bytes | None:
        address = board.address
        if command == BusCommand.SEND_CHANGES:
            board.last_changes = buscodec.encode_changes(board.changes)
            board.changes = []
            board.ee_sent = board.ee_written
            return buscodec.encode_reply(BusReplyId.UPDATE, address, board.last_changes)
        if command == BusCommand.REPEAT_CHANGES:
            return buscodec.encode_reply(BusReplyId.UPDATE, address, board.last_changes)
        if command == BusCommand.SEND_FROM_START:
            return buscodec.encode_reply(BusReplyId.FROM_START, address, board.from_start())
        if command == BusCommand.SEND_BRD:
            return buscodec.encode_reply(BusReplyId.BRD_DUMP, address, bytes(board.codes))
        if command == BusCommand.SEND_CLK:
            board.advance_clock(time.monotonic())
            return buscodec.encode_reply(BusReplyId.BWTIME, address, board.clock.data(True))
        if command == BusCommand.SEND_VERSION:
            return buscodec.encode_reply(BusReplyId.VERSION, address, bytes(board.version))
        if command == BusCommand.PING:
            return buscodec.encode_reply(BusReplyId.PING, address)
        if command == BusCommand.IGNORE_NEXT_BUS_PING:
            board.ignore_next_ping = True
            return buscodec.encode_reply(BusReplyId.PING, address)
        return None

    def _broadcast_ping(self) -> None:
        now = time.monotonic()
        for index, board in enumerate(self.boards):
            if not board.plugged:
                continue
            if board.ignore_next_ping:
                board.ignore_next_ping = False
                continue
            delay = self.rng.uniform(0.0, 1.0)  # within the 1.1 s the header gives
            self._queue(
                index, buscodec.encode_reply(BusReplyId.PING, board.address), at=now + delay
            )

    def _queue(
        self, index: int, reply: bytes, *, request_bytes: int = 0, at: float | None = None
    ) -> None:
        """A reply goes on the line after the command's and its own transmission time
        (and the board's turnaround), never overlapping another reply."""
        now = time.monotonic()
        byte_time = BITS_PER_BYTE / self.baud if self.baud else 0.0
        start = max(at if at is not None else now + request_bytes * byte_time, self._line_free_at)
        begins = start + self.turnaround
        due = begins + len(reply) * byte_time
        self._line_free_at = due
        self.boards[index].busy = at is None
        # The header, then the rest as the line carries it (a from-start log is
        # seconds long: the reader sees it coming, not 8 s of silence).
        cuts = [3, *range(3 + REPLY_CHUNK, len(reply), REPLY_CHUNK), len(reply)]
        for begin, end in zip([0, *cuts[:-1]], cuts, strict=True):
            last = end == len(reply)
            self._outbox.append((begins + end * byte_time, index, reply[begin:end], last))
        self._outbox.sort(key=lambda item: item[0])
        self._wake()


def _apply_clock_report(board: VirtualBusBoard, report: ClockReport | ClockReading) -> None:
    """A sensor log's clock reading set on a board's clock (by colour: White on the
    left unless the board says otherwise; left and right: as recorded)."""
    clock, white_left = board.clock, board.white_on_left
    was_running, left_was_to_move = clock.running, clock.left_to_move
    clock.show(report, white_left)
    board.last_tick = time.monotonic()
    pressed = clock.running and (not was_running or clock.left_to_move != left_was_to_move)
    if pressed and board.powered:  # the board writes the presser's time in its log
        left = left_was_to_move if was_running else not clock.left_to_move
        seconds = int(clock.left if left else clock.right)
        press = EeClockTime(left, seconds // 3600, seconds // 60 % 60, seconds % 60)
        board.changes.append(press)
        board.log_ee(buscodec.encode_changes([press]))
