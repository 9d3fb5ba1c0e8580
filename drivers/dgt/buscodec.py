"""DGT bus mode's codec: the bytes of commands and replies, without I/O or time.

A chain of serial boards shares one 9600-baud line (``../shared/docs/dgt-protocol.md``
section 1.13). Every command carries the address of the board it is for (the board's
serial number as a 14-bit value) and a checksum; every reply carries the board's
address and a checksum. This module frames and checks them: the commands (and which
ones the link may ever send), the PC's reply parser and the boards' command parser
(for the emulator), and the change lists' and dumps' data. Nothing here keeps state
beyond a parser's buffer; what goes next and what a reply means is the poller's
(``drivers.dgt.bus``), and reading the port is the link's (``drivers.dgt.buslink``),
as the single board's codec (``protocol``) and link (``link``) are split.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

from drivers.dgt.protocol import (
    MAX_PIECE_CODE,
    BoardDumpMessage,
    EeClockTime,
    EeMoves,
    EePieceChange,
    FieldUpdate,
)
from drivers.records import FrozenRecord

#: The single-board command that puts every board on the line into bus mode.
TO_BUSMODE = 0x4A

#: Bus addresses are 14-bit.
MAX_ADDRESS = 0x3FFF

#: The address every board answers (a broadcast ping).
BROADCAST = 0


class BusCommand(IntEnum):
    """PC -> board commands in bus mode (the byte already has bit 7 set)."""

    SEND_CLK = 0x81
    SEND_BRD = 0x82
    SEND_CHANGES = 0x83
    REPEAT_CHANGES = 0x84
    SET_START_GAME = 0x85
    SEND_FROM_START = 0x86
    PING = 0x87
    END_BUSMODE = 0x88
    RESET = 0x89
    IGNORE_NEXT_BUS_PING = 0x8A
    SEND_VERSION = 0x8B


class BusReplyId(IntEnum):
    """Board -> PC reply ids in bus mode."""

    BRD_DUMP = 0x83
    BWTIME = 0x84
    UPDATE = 0x85
    FROM_START = 0x86
    PING = 0x87
    START_GAME_WRITTEN = 0x88
    VERSION = 0x89


#: What the bus link may send: polling, dumps, clocks, pings, versions. Never the
#: EEPROM-writing start tag, leaving bus mode or a reset; the long from-start log
#: only when it is asked for (``check_bus_command(frame, from_start=True)``).
SAFE_BUS_COMMANDS = frozenset(
    {
        BusCommand.SEND_CLK,
        BusCommand.SEND_BRD,
        BusCommand.SEND_CHANGES,
        BusCommand.REPEAT_CHANGES,
        BusCommand.PING,
        BusCommand.IGNORE_NEXT_BUS_PING,
        BusCommand.SEND_VERSION,
    }
)

#: Which reply answers which command.
REPLY_TO: dict[BusCommand, BusReplyId] = {
    BusCommand.SEND_CLK: BusReplyId.BWTIME,
    BusCommand.SEND_BRD: BusReplyId.BRD_DUMP,
    BusCommand.SEND_CHANGES: BusReplyId.UPDATE,
    BusCommand.REPEAT_CHANGES: BusReplyId.UPDATE,
    BusCommand.PING: BusReplyId.PING,
    BusCommand.IGNORE_NEXT_BUS_PING: BusReplyId.PING,
    BusCommand.SEND_VERSION: BusReplyId.VERSION,
    BusCommand.SEND_FROM_START: BusReplyId.FROM_START,
}

#: Header (id, 2 length bytes) + 2 address bytes + checksum.
REPLY_OVERHEAD = 6
#: The shortest reply to each command whose reply has a fixed size (the others: a
#: reply with no data, ``REPLY_OVERHEAD``).
SHORTEST_REPLY: dict[BusCommand, int] = {
    BusCommand.SEND_CLK: REPLY_OVERHEAD + 7,  # the clock's 7 bytes
    BusCommand.SEND_BRD: REPLY_OVERHEAD + 64,  # a byte a square
}
#: The longest reply the link accepts (a dump is 70 bytes; a change list is short).
MAX_REPLY = 1024
#: The longest from-start log: the length field's 14 bits (the board's cyclic log is
#: 0x1f00 bytes, some 8 s of line at 9600 baud).
MAX_LOG_REPLY = 0x3FFF


class UnsafeBusCommand(ValueError):
    """A bus command the link must never send."""


# ---------------------------------------------------------------------------
# Addresses and checksums


def bus_address(serial: str | int) -> int:
    """A board's bus address from its serial number: the decimal number as a 14-bit
    value ("01025" -> 1025, sent as 0x08 0x01). Raises ValueError for a serial that
    is not a number or is 0 (0 is the broadcast address)."""
    number = int(serial)
    address = number & MAX_ADDRESS
    if number <= 0 or address == BROADCAST:
        raise ValueError(f"serial number {serial!r} gives no bus address")
    return address


def address_bytes(address: int) -> bytes:
    if not 0 <= address <= MAX_ADDRESS:
        raise ValueError(f"bus address {address} is not 14-bit")
    return bytes([(address >> 7) & 0x7F, address & 0x7F])


def checksum(data: bytes | Iterable[int]) -> int:
    """The sum of the bytes, bit 7 cleared (``81 10 06`` -> 0x17)."""
    return sum(data) & 0x7F


# ---------------------------------------------------------------------------
# Commands


def encode_command(command: BusCommand | int, address: int) -> bytes:
    """``cmd, addrMSB, addrLSB, checksum``."""
    frame = bytes([int(command)]) + address_bytes(address)
    return frame + bytes([checksum(frame)])


def check_bus_command(frame: bytes, *, from_start: bool = False) -> bytes:
    """Return ``frame`` if the bus link may send it, else raise :class:`UnsafeBusCommand`.

    The bus link's counterpart of ``protocol.check_command``: a well-formed 4-byte
    command from :data:`SAFE_BUS_COMMANDS`, or the one-byte switch into bus mode;
    SEND_FROM_START (seconds of the shared line) only with ``from_start``, when the
    link has asked a board for its log."""
    if frame == bytes([TO_BUSMODE]):
        return frame
    if len(frame) != 4 or frame[3] != checksum(frame[:3]) or frame[1] & 0x80 or frame[2] & 0x80:
        raise UnsafeBusCommand(f"malformed bus command {frame.hex()}")
    if from_start and frame[0] == BusCommand.SEND_FROM_START:
        return frame
    if frame[0] not in SAFE_BUS_COMMANDS:
        raise UnsafeBusCommand(f"bus command 0x{frame[0]:02x} is never sent")
    return frame


@dataclass(eq=False, repr=False)
class BusRequest(FrozenRecord):
    """A bus command as a board on the chain reads it (for the emulator)."""

    command: int
    address: int
    valid: bool  # the checksum matched
    raw: bytes


class BusCommandParser:
    """PC -> board bytes as the chain's boards read them: 4-byte commands (and the
    one-byte TO_BUSMODE, reported with address -1). Never raises."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[BusRequest]:
        out: list[BusRequest] = []
        buffer = self._buffer
        buffer.extend(data)
        while buffer:
            if not buffer[0] & 0x80:  # a single-board command byte
                out.append(BusRequest(buffer[0], -1, buffer[0] == TO_BUSMODE, bytes(buffer[:1])))
                del buffer[:1]
                continue
            if len(buffer) < 4:
                break
            raw = bytes(buffer[:4])
            if raw[1] & 0x80 or raw[2] & 0x80:  # a new command started: this one is cut
                cut = 1 if raw[1] & 0x80 else 2
                out.append(BusRequest(raw[0], -1, False, raw[:cut]))
                del buffer[:cut]
                continue
            del buffer[:4]
            address = (raw[1] << 7) | raw[2]
            out.append(BusRequest(raw[0], address, raw[3] == checksum(raw[:3]), raw))
        return out


# ---------------------------------------------------------------------------
# Replies


def encode_reply(reply_id: BusReplyId | int, address: int, data: bytes = b"") -> bytes:
    """``id, len MSB, len LSB, addrMSB, addrLSB, data..., checksum`` (length counts
    every byte). For the emulator and the tests."""
    length = len(data) + REPLY_OVERHEAD
    body = bytes([int(reply_id), (length >> 7) & 0x7F, length & 0x7F])
    body += address_bytes(address) + bytes(b & 0x7F for b in data)
    return body + bytes([checksum(body)])


def encode_changes(changes: Iterable[tuple[int, int] | EeClockTime]) -> bytes:
    """A change list's data in the EEPROM log's format: (square, piece code) pairs,
    and the clock time written when a lever is pressed."""
    out = bytearray()
    for change in changes:
        if isinstance(change, EeClockTime):
            first = (0x70 if change.left else 0x60) | (change.hours & 0x0F)
            out += bytes([first, _bcd_byte(change.minutes), _bcd_byte(change.seconds)])
        else:
            square, code = change
            out += bytes([0x40 | (code & 0x0F), square & 0x3F])
    return bytes(out)


def _bcd_byte(value: int) -> int:
    return (value // 10) << 4 | value % 10


@dataclass(eq=False, repr=False)
class BusReply(FrozenRecord):
    """A framed reply. ``valid`` is False when its checksum does not match."""

    reply_id: int
    address: int
    data: bytes
    valid: bool


@dataclass(eq=False, repr=False)
class BusGarbage(FrozenRecord):
    """Bytes skipped while resynchronising (a cut reply, line noise)."""

    data: bytes


#: A byte with bit 7 set: a reply's first byte, never one inside it.
_HIGH_BIT = re.compile(rb"[\x80-\xff]")


class BusReplyParser:
    """Incremental board -> PC parser for bus mode. Parses by the length field and
    resynchronises on any byte with bit 7 set, as the single-board parser does;
    a frame whose checksum fails is still returned (``valid=False``) so that the
    poller can ask for it again. Never raises."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def pending(self) -> int:
        """Bytes of a reply begun but not complete."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[BusReply | BusGarbage]:
        # The scans for a byte with bit 7 set are a regular expression's (C), not a
        # loop over the bytes: a chain's ~60 replies a second went through here, a
        # dump's 74 bytes again at each part of it (issue 28, the Zero 2 W's budget).
        out: list[BusReply | BusGarbage] = []
        buffer = self._buffer
        buffer.extend(data)
        while buffer:
            if not buffer[0] & 0x80:
                found = _HIGH_BIT.search(buffer)
                end = found.start() if found else len(buffer)
                out.append(BusGarbage(bytes(buffer[:end])))
                del buffer[:end]
                continue
            found = _HIGH_BIT.search(buffer, 1, 3)
            if found is not None:
                out.append(BusGarbage(bytes(buffer[: found.start()])))
                del buffer[: found.start()]
                continue
            if len(buffer) < 3:
                break
            length = (buffer[1] << 7) | buffer[2]
            longest = MAX_LOG_REPLY if buffer[0] == BusReplyId.FROM_START else MAX_REPLY
            if not REPLY_OVERHEAD <= length <= longest:
                out.append(BusGarbage(bytes(buffer[:1])))
                del buffer[:1]
                continue
            found = _HIGH_BIT.search(buffer, 3, length)
            if found is not None:  # a new reply began inside this one: this one is cut
                out.append(BusGarbage(bytes(buffer[: found.start()])))
                del buffer[: found.start()]
                continue
            if len(buffer) < length:
                break
            frame = bytes(buffer[:length])
            del buffer[:length]
            address = (frame[3] << 7) | frame[4]
            valid = frame[-1] == checksum(frame[:-1])
            out.append(BusReply(frame[0], address, frame[5:-1], valid))
        return out

    @property
    def begun(self) -> bytes:
        """The bytes of a reply begun but not complete (whose it is: ``begun_address``)."""
        return bytes(self._buffer)

    def lacking(self, shortest: int) -> int:
        """How many bytes the reply begun still lacks, at least (1 at the least): by
        its length field once its header is in, else by ``shortest``, the shortest
        reply it can be."""
        buffer = self._buffer
        if len(buffer) >= 3 and buffer[0] & 0x80 and not (buffer[1] | buffer[2]) & 0x80:
            return max(1, ((buffer[1] << 7) | buffer[2]) - len(buffer))
        return max(1, shortest - len(buffer))

    def reset(self) -> BusGarbage | None:
        """Drop a reply left incomplete (its time-out passed); returns what was dropped."""
        if not self._buffer:
            return None
        dropped = BusGarbage(bytes(self._buffer))
        self._buffer.clear()
        return dropped


def begun_address(data: bytes) -> int | None:
    """The address in a reply's header when ``data`` begins one far enough to hold it
    (a reply cut short: whose it was), else None."""
    if len(data) < 5 or not data[0] & 0x80 or any(b & 0x80 for b in data[1:5]):
        return None
    return (data[3] << 7) | data[4]


def decode_changes(data: bytes) -> list[FieldUpdate | EeClockTime] | None:
    """A change list's piece changes (as field updates) and lever presses (the clock
    time the board writes then), in order; None when it holds a piece code no board
    sends (corruption the checksum missed). Other tags are skipped."""
    changes: list[FieldUpdate | EeClockTime] = []
    for event in EeMoves(data).events():
        if isinstance(event, EePieceChange):
            if event.code > MAX_PIECE_CODE:
                return None
            changes.append(FieldUpdate(event.square, event.code, event.code))
        elif isinstance(event, EeClockTime):
            changes.append(event)
    return changes


def decode_dump(data: bytes) -> BoardDumpMessage | None:
    if len(data) != 64 or any(code > MAX_PIECE_CODE for code in data):
        return None
    return BoardDumpMessage(tuple(data))
