"""The DGT e-board serial protocol: command bytes out, decoded messages in.

Sans-I/O: nothing here touches a port, a clock or a file. The link feeds the
bytes it read into a :class:`MessageParser` and writes the bytes the encoders
return; the emulator does the opposite with :class:`CommandParser` and the
``encode_*`` reply builders. Everything the board can say decodes to a frozen
dataclass; nothing a board (or line noise) can send makes the parser raise.

Framing, board -> PC: an id byte with the top bit set, then the total length
(header included) as two 7-bit bytes, then data bytes with the top bit clear.
Because only an id byte has its top bit set, such a byte always starts a new
message: that is how the parser resynchronises after garbage or a lost byte.

Squares are numbered as the board numbers them (a8 = 0 ... h1 = 63), whichever
way round the board stands; turning the picture is the rules core's job.

Clock sides are the clock's own left and right, never colours: which side is
White is decided downstream (``drivers.dgt.clockmap`` or the clock helper).
Status bits 3 and 4 of a clock-times message follow the 2015 ("Marius") header,
which matches real clocks: in the real capture ``dgt-capture-1`` bit 3 is set
exactly while the left time (bytes 3-5) counts down.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Literal

from drivers.records import FrozenRecord

# ---------------------------------------------------------------------------
# Commands, PC -> board


class Command(IntEnum):
    """Single-byte commands of the single-board protocol (dgtbrd.h names)."""

    SEND_RESET = 0x40
    SEND_CLK = 0x41
    SEND_BRD = 0x42
    SEND_UPDATE = 0x43
    SEND_UPDATE_BRD = 0x44
    RETURN_SERIALNR = 0x45
    RETURN_BUSADRES = 0x46
    SEND_TRADEMARK = 0x47
    SEND_EE_MOVES = 0x49
    TO_BUSMODE = 0x4A
    SEND_UPDATE_NICE = 0x4B
    SEND_BATTERY_STATUS = 0x4C
    SEND_VERSION = 0x4D
    STARTBOOTLOADER = 0x4E
    SEND_BRD_50B = 0x50
    SCAN_50B = 0x51
    SEND_BRD_50W = 0x52
    SCAN_50W = 0x53
    SCAN_100 = 0x54
    RETURN_LONG_SERIALNR = 0x55
    SET_LEDS = 0x60
    CLOCK_MESSAGE = 0x2B


#: Commands that change the board's firmware state for good (boot loader, draughts
#: scan modes written to EEPROM), dump 8 KB of EEPROM over a 9600-baud line, or
#: leave single-board mode. :func:`check_command` refuses them.
FORBIDDEN_COMMANDS = frozenset(
    {
        Command.STARTBOOTLOADER,
        Command.SCAN_50B,
        Command.SCAN_50W,
        Command.SCAN_100,
        Command.SEND_EE_MOVES,
        Command.TO_BUSMODE,
    }
)

#: Commands only a Revelation II understands; other boards may freeze on them.
REVELATION_ONLY_COMMANDS = frozenset({Command.SET_LEDS})


class Clock(IntEnum):
    """Clock commands carried inside ``CLOCK_MESSAGE`` (0x2b) frames."""

    DISPLAY = 0x01
    ICONS = 0x02
    END = 0x03
    BUTTON = 0x08
    VERSION = 0x09
    SETNRUN = 0x0A
    BEEP = 0x0B
    ASCII = 0x0C
    REV2_ASCII = 0x0D


_CLOCK_START = 0x03
_CLOCK_END = 0x00


def reset() -> bytes:
    """Put the board in IDLE: it then sends nothing unasked."""
    return bytes([Command.SEND_RESET])


def request_board() -> bytes:
    """Ask for a full board dump (64 piece codes)."""
    return bytes([Command.SEND_BRD])


def update_nice() -> bytes:
    """Field updates, plus clock times only when they change: the default mode."""
    return bytes([Command.SEND_UPDATE_NICE])


def update() -> bytes:
    """Field updates, plus clock times at least once a second."""
    return bytes([Command.SEND_UPDATE])


def update_board() -> bytes:
    """Field updates only (no clock times, no clock acks)."""
    return bytes([Command.SEND_UPDATE_BRD])


def request_serial() -> bytes:
    """Ask for the 5-digit serial number (also the link's liveness probe)."""
    return bytes([Command.RETURN_SERIALNR])


def request_long_serial() -> bytes:
    """Ask for the 10-character serial number."""
    return bytes([Command.RETURN_LONG_SERIALNR])


def request_bus_address() -> bytes:
    """Ask for the bus address (the serial number as a 14-bit value)."""
    return bytes([Command.RETURN_BUSADRES])


def request_trademark() -> bytes:
    """Ask for the trademark text ("Digital Game Technology ...")."""
    return bytes([Command.SEND_TRADEMARK])


def request_version() -> bytes:
    """Ask for the firmware version (major, minor)."""
    return bytes([Command.SEND_VERSION])


def request_battery() -> bytes:
    """Ask for the battery status (Bluetooth boards)."""
    return bytes([Command.SEND_BATTERY_STATUS])


def request_ee_moves() -> bytes:
    """The board's EEPROM log (about 8 KB, some 8 s at 9600 baud): sent only on
    purpose (``check_command(..., ee_moves=True)``), after an outage."""
    return bytes([Command.SEND_EE_MOVES])


def request_clock() -> bytes:
    """Ask for one clock-times message now."""
    return bytes([Command.SEND_CLK])


def _clock_frame(command: Clock, payload: bytes = b"") -> bytes:
    body = bytes([_CLOCK_START, command]) + payload + bytes([_CLOCK_END])
    return bytes([Command.CLOCK_MESSAGE, len(body)]) + body


#: Seven-segment glyphs of the DGT XL display (bit 0 = segment a ... bit 6 = g).
XL_GLYPHS: dict[str, int] = {
    "0": 0x3F,
    "1": 0x06,
    "2": 0x5B,
    "3": 0x4F,
    "4": 0x66,
    "5": 0x6D,
    "6": 0x7D,
    "7": 0x07,
    "8": 0x7F,
    "9": 0x6F,
    "-": 0x40,
    " ": 0x00,
    "_": 0x08,
    "a": 0x77,
    "b": 0x7C,
    "c": 0x58,
    "d": 0x5E,
    "e": 0x79,
    "f": 0x71,
    "g": 0x3D,
    "h": 0x74,
    "i": 0x04,
    "j": 0x1E,
    "l": 0x38,
    "n": 0x54,
    "o": 0x5C,
    "p": 0x73,
    "q": 0x67,
    "r": 0x50,
    "s": 0x6D,
    "t": 0x78,
    "u": 0x1C,
    "y": 0x6E,
}


def clock_display_xl(text: str, icons: int = 0, beep: bool = False) -> bytes:
    """Show six characters on a DGT XL (or a DGT 3000 in XL mode).

    ``text`` is read left to right as digits A B C (left half) and D E F (right
    half); the frame sends them in the order the clock wants, C B A F E D.
    Characters without a seven-segment glyph show blank. ``icons``: 0x01 right
    dot, 0x02 right colon, 0x04 right "1", 0x08/0x10/0x20 the same on the left.
    """
    chars = (text + " " * 6)[:6].lower()
    segments = [XL_GLYPHS.get(char, 0x00) for char in chars]
    ordered = [segments[i] for i in (2, 1, 0, 5, 4, 3)]
    return _clock_frame(Clock.DISPLAY, bytes([*ordered, icons & 0x3F, 0x03 if beep else 0x01]))


def clock_icons(icons: bytes = bytes(4), special: int = 0) -> bytes:
    """Set the DGT 3000 icons: 4 icon bytes as the header defines them, plus the
    special byte (bit 0 = clear all). The three reserved bytes are sent as zero."""
    if len(icons) != 4:
        raise ValueError("clock_icons needs exactly 4 icon bytes")
    return _clock_frame(Clock.ICONS, bytes(icons) + bytes([special & 0x7F, 0, 0, 0]))


def clock_end() -> bytes:
    """Return the clock to its normal time display."""
    return _clock_frame(Clock.END)


def clock_buttons() -> bytes:
    """Ask the clock which buttons are pressed (the ack carries no data)."""
    return _clock_frame(Clock.BUTTON)


def clock_version() -> bytes:
    """Ask the clock's version (major 2 = DGT 3000)."""
    return _clock_frame(Clock.VERSION)


def _hms(seconds: int) -> tuple[int, int, int]:
    if not 0 <= seconds <= 9 * 3600 + 59 * 60 + 59:
        raise ValueError(f"clock time {seconds} s is outside 0:00:00-9:59:59")
    return seconds // 3600, seconds // 60 % 60, seconds % 60


def clock_set_and_run(
    left_s: int,
    right_s: int,
    left_counts: bool = True,
    right_counts: bool = True,
    pause: bool = False,
    toggle: bool = True,
) -> bytes:
    """Set both times and the run state (clock mode 23 only), in plain binary.

    ``left_counts``/``right_counts``: that side counts down; ``pause``: the
    clock stands still; ``toggle``: pressing the lever switches sides.
    """
    flags = (
        (0x01 if left_counts else 0)
        | (0x02 if right_counts else 0)
        | (0x04 if pause else 0)
        | (0x08 if toggle else 0)
    )
    return _clock_frame(Clock.SETNRUN, bytes([*_hms(int(left_s)), *_hms(int(right_s)), flags]))


def clock_beep(ms: int) -> bytes:
    """Beep for about ``ms`` milliseconds (units of 64 ms, at most 8.1 s)."""
    return _clock_frame(Clock.BEEP, bytes([max(1, min(0x7F, round(ms / 64)))]))


def _ascii(text: str, width: int) -> bytes:
    encoded = text.encode("ascii", "replace")[:width]
    return encoded.ljust(width, b" ")


def clock_ascii(text8: str, beep: int = 0) -> bytes:
    """Show 8 ASCII characters on a DGT 3000; ``beep`` 0-15 (62.5 ms + beep/16 s)."""
    return _clock_frame(Clock.ASCII, _ascii(text8, 8) + bytes([max(0, min(15, beep))]))


def revelation_ascii(text11: str, beep: int = 0) -> bytes:
    """Show 11 characters on a Revelation II's built-in clock. Revelation II only."""
    return _clock_frame(Clock.REV2_ASCII, _ascii(text11, 11) + bytes([max(0, min(15, beep))]))


def revelation_leds(pattern: int, from_square: int, to_square: int) -> bytes:
    """Light Revelation II LEDs between two DGT squares (0x40 with pattern 0 = all
    off). Revelation II only: other boards freeze on it."""
    return bytes([Command.SET_LEDS, 0x04, pattern & 0x7F, from_square & 0x7F, to_square & 0x7F, 0])


class UnsafeCommand(ValueError):
    """A command the link must never send to this board."""


def check_command(frame: bytes, revelation: bool = False, ee_moves: bool = False) -> bytes:
    """Return ``frame`` if it is safe to send, else raise :class:`UnsafeCommand`.

    The link calls this on every write, so a bug elsewhere can never start the
    boot loader, rewrite the scan mode, trigger the 8 KB EEPROM dump, leave
    single-board mode, or send Revelation II commands to a plain board.
    ``ee_moves`` lets the EEPROM dump through: the link asks for it on purpose,
    once, after an outage in which the board changed (``request_ee_moves``).
    """
    if not frame:
        raise UnsafeCommand("empty command")
    first = frame[0]
    if first == Command.SEND_EE_MOVES and ee_moves and len(frame) == 1:
        return frame
    if first in FORBIDDEN_COMMANDS:
        raise UnsafeCommand(f"command 0x{first:02x} ({Command(first).name}) is never sent")
    if first == Command.CLOCK_MESSAGE:
        if len(frame) < 4 or frame[1] != len(frame) - 2:
            raise UnsafeCommand(f"malformed clock frame {frame.hex()}")
        if frame[3] == Clock.REV2_ASCII and not revelation:
            raise UnsafeCommand("Revelation II text sent to a board that is not one")
        return frame
    if first in REVELATION_ONLY_COMMANDS and not revelation:
        raise UnsafeCommand("Revelation II LED command sent to a board that is not one")
    if first & 0x80:
        raise UnsafeCommand(f"bus-mode command 0x{first:02x} is never sent")
    if first not in Command.__members__.values():
        raise UnsafeCommand(f"unknown command 0x{first:02x}")
    return frame


# ---------------------------------------------------------------------------
# Squares and pieces


#: DGT piece codes 1-12 as FEN letters.
PIECE_BY_CODE: dict[int, str] = dict(enumerate("PRNBKQprnbkq", start=1))
CODE_BY_PIECE: dict[str, int] = {letter: code for code, letter in PIECE_BY_CODE.items()}

#: DGT's "magic pieces": not chess pieces, result signals.
MagicMeaning = Literal["draw", "white_wins", "black_wins"]
MAGIC_BY_CODE: dict[int, MagicMeaning] = {
    0x0D: "draw",
    0x0E: "white_wins",
    0x0F: "black_wins",
}
CODE_BY_MAGIC: dict[str, int] = {meaning: code for code, meaning in MAGIC_BY_CODE.items()}

#: The highest meaningful piece code (the third magic piece).
MAX_PIECE_CODE = 0x0F

_FILES = "abcdefgh"


def square_name(index: int) -> str:
    """The name of a DGT square index: 0 = a8, 7 = h8, 56 = a1, 63 = h1."""
    if not 0 <= index <= 63:
        raise ValueError(f"DGT square index {index} is outside 0-63")
    return f"{_FILES[index % 8]}{8 - index // 8}"


def square_index(name: str) -> int:
    """The DGT index of a square name (inverse of :func:`square_name`)."""
    if len(name) != 2 or name[0] not in _FILES or name[1] not in "12345678":
        raise ValueError(f"unknown square {name!r}")
    return (8 - int(name[1])) * 8 + _FILES.index(name[0])


def placement_from_codes(codes: tuple[int, ...] | bytes) -> str:
    """FEN placement of 64 codes; empty, magic and unknown codes count as empty."""
    rows = []
    for rank in range(8):
        row, empty = "", 0
        for code in codes[rank * 8 : rank * 8 + 8]:
            letter = PIECE_BY_CODE.get(code)
            if letter is None:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += letter
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows)


def codes_from_placement(placement: str) -> bytes:
    """The 64 piece codes of a FEN placement (a8 first)."""
    codes = bytearray()
    for char in placement:
        if char == "/":
            continue
        if char.isdigit():
            codes.extend(bytes(int(char)))
        else:
            codes.append(CODE_BY_PIECE[char])
    if len(codes) != 64:
        raise ValueError(f"placement {placement!r} does not describe 64 squares")
    return bytes(codes)


# ---------------------------------------------------------------------------
# Messages, board -> PC


class MessageId(IntEnum):
    """Message ids as they appear on the wire (top bit included)."""

    BOARD_DUMP = 0x86
    BWTIME = 0x8D
    FIELD_UPDATE = 0x8E
    EE_MOVES = 0x8F
    BUSADRES = 0x90
    SERIALNR = 0x91
    TRADEMARK = 0x92
    VERSION = 0x93
    BOARD_DUMP_50B = 0x94
    BOARD_DUMP_50W = 0x95
    BATTERY_STATUS = 0xA0
    LONG_SERIALNR = 0xA2


@dataclass(eq=False, repr=False)
class BoardDumpMessage(FrozenRecord):
    """64 raw piece codes, a8 first. ``placement`` leaves magic pieces out;
    ``magic`` lists them so they are never silently dropped."""

    codes: tuple[int, ...]

    @property
    def placement(self) -> str:
        return placement_from_codes(self.codes)

    @property
    def magic(self) -> tuple[tuple[str, MagicMeaning], ...]:
        """(square, meaning) of every magic piece on the board."""
        return tuple(
            (square_name(i), MAGIC_BY_CODE[c])
            for i, c in enumerate(self.codes)
            if c in MAGIC_BY_CODE
        )


@dataclass(eq=False, repr=False)
class FieldUpdate(FrozenRecord):
    """One square changed. ``code`` has bit 6 (undocumented "S" bit) masked off;
    ``raw`` keeps the byte as received."""

    square: int
    code: int
    raw: int

    @property
    def square_name(self) -> str:
        return square_name(self.square)

    @property
    def piece(self) -> str | None:
        """FEN letter of a real piece, else None (empty, magic or unknown code)."""
        return PIECE_BY_CODE.get(self.code)

    @property
    def magic(self) -> str | None:
        """ "draw", "white_wins" or "black_wins" for a magic piece, else None."""
        return MAGIC_BY_CODE.get(self.code)


@dataclass(eq=False, repr=False)
class ClockSideTime(FrozenRecord):
    """One side of the clock as the BWTIME message encodes it."""

    hours: int
    minutes: int
    seconds: int
    flag_fallen: bool  # bit 4: flag fallen and clock blocked at zero
    time_per_move: bool  # bit 5: Fischer/Bronstein indicator
    flag_shown: bool  # bit 6

    @property
    def total_seconds(self) -> int:
        return self.hours * 3600 + self.minutes * 60 + self.seconds


@dataclass(eq=False, repr=False)
class ClockTimes(FrozenRecord):
    """A BWTIME message carrying clock times (left/right as the clock sees them)."""

    left: ClockSideTime
    right: ClockSideTime
    running: bool
    lever_right_high: bool
    battery_low: bool
    right_to_move: bool
    left_to_move: bool
    no_clock: bool  # status bit 5: no clock connected, the times are meaningless
    raw: bytes  # the 7 data bytes


#: Button codes in an auto-generated "button pressed" ack (ack3).
BUTTON_BY_CODE: dict[int, str] = {
    0x31: "back",
    0x32: "plus",
    0x33: "run",
    0x34: "minus",
    0x35: "ok",
}
CODE_BY_BUTTON: dict[str, int] = {name: code for code, name in BUTTON_BY_CODE.items()}

ACK_OK = 0x10
ACK_ERROR = 0x40
ACK_AUTO_READY = 0x81
ACK_AUTO_BUTTON = 0x88


@dataclass(eq=False, repr=False)
class ClockAck(FrozenRecord):
    """A BWTIME message carrying a clock ack: the four rebuilt ack bytes."""

    ack: tuple[int, int, int, int]

    @property
    def ok(self) -> bool:
        return self.ack[0] == ACK_OK

    @property
    def error(self) -> bool:
        return self.ack[0] == ACK_ERROR

    @property
    def auto_generated(self) -> bool:
        """Sent by the clock on its own (ready, a button press), not an answer."""
        return bool(self.ack[1] & 0x80)

    @property
    def command(self) -> int | None:
        """The clock command this ack answers (a :class:`Clock` value), if any."""
        return None if self.auto_generated else self.ack[1]

    @property
    def button(self) -> str | None:
        """The button of an auto-generated "button pressed" ack, if it names one."""
        if self.ack[1] != ACK_AUTO_BUTTON:
            return None
        return BUTTON_BY_CODE.get(self.ack[3])

    @property
    def version(self) -> tuple[int, int] | None:
        """(major, minor) of a clock-version ack; major 2 means a DGT 3000."""
        if self.ack[1] != Clock.VERSION:
            return None
        return self.ack[2] >> 4, self.ack[2] & 0x0F


@dataclass(eq=False, repr=False)
class InvalidClockData(FrozenRecord):
    """A BWTIME message that is neither readable times nor an ack."""

    raw: bytes
    reason: str


@dataclass(eq=False, repr=False)
class BusAddress(FrozenRecord):
    address: int  # 14-bit


@dataclass(eq=False, repr=False)
class SerialNumber(FrozenRecord):
    serial: str  # 5 ASCII digits


@dataclass(eq=False, repr=False)
class LongSerialNumber(FrozenRecord):
    serial: str  # 10 ASCII characters


@dataclass(eq=False, repr=False)
class Trademark(FrozenRecord):
    text: str


@dataclass(eq=False, repr=False)
class Version(FrozenRecord):
    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor:02d}"


@dataclass(eq=False, repr=False)
class BatteryStatus(FrozenRecord):
    """Battery report of a Bluetooth board. The sources disagree on its size, so
    only the first byte (per cent left) is interpreted; ``raw`` keeps the rest."""

    raw: bytes

    @property
    def percent(self) -> int | None:
        return self.raw[0] if self.raw and self.raw[0] <= 100 else None


@dataclass(eq=False, repr=False)
class EePieceChange(FrozenRecord):
    """EEPROM log: a square changed (``quick``: less than ~250 ms after the last tag)."""

    square: int
    code: int
    quick: bool


@dataclass(eq=False, repr=False)
class EeClockTime(FrozenRecord):
    """EEPROM log: one side's clock time, written when the lever was pressed."""

    left: bool
    hours: int
    minutes: int
    seconds: int


@dataclass(eq=False, repr=False)
class EeTag(FrozenRecord):
    """EEPROM log: a one-byte tag (power-up, begin position, end of data...)."""

    name: str
    byte: int


EE_TAGS: dict[int, str] = {
    0x6A: "powerup",
    0x6B: "eof",
    0x6C: "fourrows",
    0x6D: "emptyboard",
    0x6E: "downloaded",
    0x6F: "beginpos",
    0x7A: "beginpos_rot",
    0x7B: "start_tag",
    0x7C: "watchdog_action",
    0x7F: "nop",
    0x00: "nop2",
}

EeEvent = EePieceChange | EeClockTime | EeTag

#: The EEPROM log's size (a cyclic buffer) and two of its tags.
EE_SIZE = 0x1F00
EE_POWERUP = 0x6A
EE_EOF = 0x6B


@dataclass(eq=False, repr=False)
class EeMoves(FrozenRecord):
    """The board's EEPROM event log (arrives unasked on some boards). Kept raw;
    ``events()`` reads it, a recovery path after a crash mid-game."""

    data: bytes

    def events(self) -> list[EeEvent]:
        """The log's events in order; bytes that fit no encoding become ``EeTag("unknown")``."""
        out: list[EeEvent] = []
        data, i = self.data, 0
        while i < len(data):
            byte = data[i]
            if 0x40 <= byte <= 0x5F and i + 1 < len(data):
                out.append(EePieceChange(data[i + 1] & 0x3F, byte & 0x0F, bool(byte & 0x10)))
                i += 2
            elif (0x60 <= byte <= 0x69 or 0x70 <= byte <= 0x79) and i + 2 < len(data):
                minutes, seconds = _bcd(data[i + 1]), _bcd(data[i + 2])
                if minutes is None or seconds is None:
                    out.append(EeTag("unknown", byte))
                    i += 1
                    continue
                out.append(EeClockTime(bool(byte & 0x10), byte & 0x0F, minutes, seconds))
                i += 3
            else:
                out.append(EeTag(EE_TAGS.get(byte, "unknown"), byte))
                i += 1
        return out


#: Field changes an outage may span in the EEPROM log (a few minutes of play).
EE_HISTORY_LIMIT = 1500


def ee_history(
    events: list[EeEvent],
    before: tuple[int, ...],
    after: tuple[int, ...],
    recent: tuple[tuple[int, int], ...] = (),
) -> list[str] | None:
    """The placements an EEPROM log says the board passed through from ``before``
    (its 64 codes when the link was lost) to ``after`` (its codes now), oldest first.

    The log is a cyclic record of every field change, so the changes since the loss
    are a tail of it. Any tail long enough ends on ``after`` when applied to
    ``before`` (each square shows its last change), so that does not place the loss:
    the tail begins where the board, told backwards from ``after`` by the log (each
    square as its last change before that point set it; one the log had not changed
    yet, as ``before`` has it), showed ``before``: the latest such point (it may have
    shown it earlier too) that follows the last updates the link saw (``recent``,
    oldest first; the board logged them too). Taken as the shortest tail that fits,
    a lift later covered by another piece fell out of it, and the history began with
    a piece that had left its square: no line of moves followed it (a restarted
    daemon lost the game, issue 29). None when no point fits (the log wrapped, was
    cleared, or the board was off meanwhile)."""
    changes = [(e.square, e.code) for e in events if isinstance(e, EePieceChange)]
    if not changes:
        return None
    overwritten: list[int | None] = []  # what each change replaced, by the log
    last: dict[int, int] = {}
    for square, code in changes:
        overwritten.append(last.get(square))
        last[square] = code
    shown = list(after)  # the board just before changes[start:]
    differing = sum(1 for a, b in zip(shown, before, strict=True) if a != b)
    k = len(recent)
    found: int | None = None
    for start in range(len(changes), max(-1, len(changes) - EE_HISTORY_LIMIT), -1):
        if start < len(changes):
            square = changes[start][0]
            old = overwritten[start]
            differing -= shown[square] != before[square]
            shown[square] = before[square] if old is None else old
            differing += shown[square] != before[square]
        if differing:
            continue
        if recent and (start < k or tuple(changes[start - k : start]) != recent):
            continue
        found = start
        break
    if found is None:
        return None
    codes = list(before)
    placements = []
    for square, code in changes[found:]:
        codes[square] = code
        placements.append(placement_from_codes(tuple(codes)))
    return placements


@dataclass(eq=False, repr=False)
class Bwtime(FrozenRecord):
    """A BWTIME message: clock times, a clock ack, or unreadable clock data."""

    clock: ClockTimes | ClockAck | InvalidClockData


@dataclass(eq=False, repr=False)
class UnknownMessage(FrozenRecord):
    """A well-framed message this codec does not interpret (for example a draughts
    dump, or a known id with an unexpected size)."""

    message_id: int
    data: bytes


@dataclass(eq=False, repr=False)
class Garbage(FrozenRecord):
    """Bytes the parser skipped while resynchronising (reported, not raised)."""

    data: bytes


Message = (
    BoardDumpMessage
    | FieldUpdate
    | Bwtime
    | BusAddress
    | SerialNumber
    | LongSerialNumber
    | Trademark
    | Version
    | BatteryStatus
    | EeMoves
    | UnknownMessage
    | Garbage
)


def _bcd(byte: int) -> int | None:
    tens, units = byte >> 4, byte & 0x0F
    if tens > 9 or units > 9:
        return None
    return tens * 10 + units


def _side(hour_byte: int, minute_byte: int, second_byte: int) -> ClockSideTime | None:
    minutes, seconds = _bcd(minute_byte), _bcd(second_byte)
    if minutes is None or seconds is None:
        return None
    return ClockSideTime(
        hours=hour_byte & 0x0F,
        minutes=minutes,
        seconds=seconds,
        flag_fallen=bool(hour_byte & 0x10),
        time_per_move=bool(hour_byte & 0x20),
        flag_shown=bool(hour_byte & 0x40),
    )


def decode_bwtime(data: bytes) -> ClockTimes | ClockAck | InvalidClockData:
    """Decode the 7 data bytes of a BWTIME message, faithfully and without filtering.

    An ack is recognised by a low nibble of 0x0a in byte 0 or byte 3 (masked, as
    the header means it). Times are decoded as BCD; a nibble above 9 is not BCD
    and gives :class:`InvalidClockData`. Range checks, all-zero messages and the
    no-clock bit are left to the clock interpreter.
    """
    data = bytes(data)
    if len(data) != 7:
        return InvalidClockData(data, f"BWTIME carries {len(data)} data bytes, not 7")
    d0, d1, d2, d3, d4, d5, d6 = data
    if (d0 & 0x0F) == 0x0A or (d3 & 0x0F) == 0x0A:
        return ClockAck(
            (
                (d1 & 0x7F) | ((d3 << 3) & 0x80),
                (d2 & 0x7F) | ((d3 << 2) & 0x80),
                (d4 & 0x7F) | ((d0 << 3) & 0x80),
                (d5 & 0x7F) | ((d0 << 2) & 0x80),
            )
        )
    right, left = _side(d0, d1, d2), _side(d3, d4, d5)
    if right is None or left is None:
        return InvalidClockData(data, "clock time is not BCD")
    return ClockTimes(
        left=left,
        right=right,
        running=bool(d6 & 0x01),
        lever_right_high=bool(d6 & 0x02),
        battery_low=bool(d6 & 0x04),
        left_to_move=bool(d6 & 0x08),
        right_to_move=bool(d6 & 0x10),
        no_clock=bool(d6 & 0x20),
        raw=data,
    )


def _text(data: bytes) -> str:
    return data.decode("ascii", "replace").rstrip("\x00 ")


def decode_message(message_id: int, data: bytes) -> Message:
    """Decode one framed message (id with its top bit, data without the header)."""
    data = bytes(data)
    size = len(data)
    # A piece code above 0x0f is corruption, not a piece: such a dump or update is
    # reported as unknown rather than turned into an empty square.
    if message_id == MessageId.BOARD_DUMP and size == 64 and max(data) <= MAX_PIECE_CODE:
        return BoardDumpMessage(tuple(data))
    if (
        message_id == MessageId.FIELD_UPDATE
        and size == 2
        and data[0] < 64
        and data[1] & 0x3F <= MAX_PIECE_CODE
    ):
        return FieldUpdate(square=data[0], code=data[1] & 0x3F, raw=data[1])
    if message_id == MessageId.BWTIME:
        return Bwtime(decode_bwtime(data))
    if message_id == MessageId.BUSADRES and size == 2:
        return BusAddress((data[0] << 7) | data[1])
    if message_id == MessageId.SERIALNR:
        return SerialNumber(_text(data))
    if message_id == MessageId.LONG_SERIALNR:
        return LongSerialNumber(_text(data))
    if message_id == MessageId.TRADEMARK:
        return Trademark(_text(data))
    if message_id == MessageId.VERSION and size == 2:
        return Version(data[0], data[1])
    if message_id == MessageId.BATTERY_STATUS:
        return BatteryStatus(data)
    if message_id == MessageId.EE_MOVES:
        return EeMoves(data)
    return UnknownMessage(message_id, data)


class MessageParser:
    """Incremental board -> PC parser: feed it any bytes, get whole messages.

    It never raises. Bytes before a message id, a message cut short by a new id
    byte, or a header with an impossible length come back as :class:`Garbage`
    so the link can count line noise; parsing then restarts at the next id byte.
    """

    #: Longest message accepted: the EEPROM dump (0x1f00 data bytes) plus slack.
    MAX_LENGTH = 0x2000

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def pending(self) -> int:
        """Bytes held back waiting for the rest of a message."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[Message]:
        messages: list[Message] = []
        buffer = self._buffer
        buffer.extend(data)
        while buffer:
            if not buffer[0] & 0x80:
                start = next((i for i, b in enumerate(buffer) if b & 0x80), len(buffer))
                messages.append(Garbage(bytes(buffer[:start])))
                del buffer[:start]
                continue
            # Look for an id byte inside what should be this message's header/data.
            if len(buffer) < 3:
                if any(b & 0x80 for b in buffer[1:]):
                    messages.append(Garbage(bytes(buffer[:1])))
                    del buffer[:1]
                    continue
                break
            length = (buffer[1] << 7) | buffer[2]
            if buffer[1] & 0x80 or buffer[2] & 0x80 or not 3 <= length <= self.MAX_LENGTH:
                messages.append(Garbage(bytes(buffer[:1])))
                del buffer[:1]
                continue
            body_end = min(length, len(buffer))
            interrupt = next((i for i in range(3, body_end) if buffer[i] & 0x80), None)
            if interrupt is not None:
                messages.append(Garbage(bytes(buffer[:interrupt])))
                del buffer[:interrupt]
                continue
            if len(buffer) < length:
                break
            messages.append(decode_message(buffer[0], bytes(buffer[3:length])))
            del buffer[:length]
        return messages


# ---------------------------------------------------------------------------
# Replies, board -> PC (for the emulator and the tests)


def _frame(message_id: int, data: bytes) -> bytes:
    length = len(data) + 3
    return bytes([message_id, (length >> 7) & 0x7F, length & 0x7F]) + data


def encode_board_dump(codes: bytes | tuple[int, ...]) -> bytes:
    if len(codes) != 64:
        raise ValueError("a board dump has 64 codes")
    return _frame(MessageId.BOARD_DUMP, bytes(codes))


def encode_field_update(square: int, code: int) -> bytes:
    return _frame(MessageId.FIELD_UPDATE, bytes([square & 0x3F, code & 0x7F]))


def _to_bcd(value: int) -> int:
    if not 0 <= value <= 99:
        raise ValueError(f"{value} does not fit in two BCD digits")
    return (value // 10) << 4 | value % 10


def encode_side(side: ClockSideTime) -> bytes:
    hour = (
        (side.hours & 0x0F)
        | (0x10 if side.flag_fallen else 0)
        | (0x20 if side.time_per_move else 0)
        | (0x40 if side.flag_shown else 0)
    )
    return bytes([hour, _to_bcd(side.minutes), _to_bcd(side.seconds)])


def side_time(seconds: int, **flags: bool) -> ClockSideTime:
    """A :class:`ClockSideTime` from a number of seconds (clamped to 0:00:00-9:59:59)."""
    seconds = max(0, min(int(seconds), 9 * 3600 + 59 * 60 + 59))
    return ClockSideTime(seconds // 3600, seconds // 60 % 60, seconds % 60, **_side_flags(flags))


def _side_flags(flags: dict[str, bool]) -> dict[str, bool]:
    defaults = {"flag_fallen": False, "time_per_move": False, "flag_shown": False}
    unknown = set(flags) - set(defaults)
    if unknown:
        raise TypeError(f"unknown clock side flags {sorted(unknown)}")
    return defaults | flags


def bwtime_times_data(
    left: ClockSideTime,
    right: ClockSideTime,
    running: bool = False,
    lever_right_high: bool = False,
    battery_low: bool = False,
    right_to_move: bool = False,
    left_to_move: bool = False,
    no_clock: bool = False,
) -> bytes:
    """The 7 data bytes of a clock-times BWTIME (inverse of :func:`decode_bwtime`)."""
    status = (
        (0x01 if running else 0)
        | (0x02 if lever_right_high else 0)
        | (0x04 if battery_low else 0)
        | (0x08 if left_to_move else 0)
        | (0x10 if right_to_move else 0)
        | (0x20 if no_clock else 0)
    )
    return encode_side(right) + encode_side(left) + bytes([status])


def encode_bwtime_times(*args: object, **kwargs: object) -> bytes:
    """A whole clock-times BWTIME message; arguments as :func:`bwtime_times_data`."""
    # Passed through unchanged: bwtime_times_data's own signature checks them.
    return _frame(MessageId.BWTIME, bwtime_times_data(*args, **kwargs))  # type: ignore[arg-type]


def bwtime_ack_data(ack: tuple[int, int, int, int]) -> bytes:
    """The 7 data bytes of a clock-ack BWTIME: bytes 0 and 3 carry the 0x0a marker
    and the ack bytes' top bits (inverse of the rebuild in :func:`decode_bwtime`)."""
    a0, a1, a2, a3 = (b & 0xFF for b in ack)
    d0 = 0x0A | ((a2 & 0x80) >> 3) | ((a3 & 0x80) >> 2)
    d3 = 0x0A | ((a0 & 0x80) >> 3) | ((a1 & 0x80) >> 2)
    return bytes([d0, a0 & 0x7F, a1 & 0x7F, d3, a2 & 0x7F, a3 & 0x7F, 0])


def encode_bwtime_ack(ack: tuple[int, int, int, int]) -> bytes:
    return _frame(MessageId.BWTIME, bwtime_ack_data(ack))


def encode_button_ack(button: str) -> bytes:
    """The auto-generated ack a DGT 3000 sends when a button is pressed."""
    return encode_bwtime_ack((ACK_OK, ACK_AUTO_BUTTON, 0, CODE_BY_BUTTON[button]))


def encode_version(major: int, minor: int) -> bytes:
    return _frame(MessageId.VERSION, bytes([major & 0x7F, minor & 0x7F]))


def encode_serial(serial: str) -> bytes:
    return _frame(MessageId.SERIALNR, _ascii(serial, 5))


def encode_long_serial(serial: str) -> bytes:
    return _frame(MessageId.LONG_SERIALNR, _ascii(serial, 10))


def encode_trademark(text: str) -> bytes:
    return _frame(MessageId.TRADEMARK, bytes(b & 0x7F for b in text.encode("ascii", "replace")))


def encode_bus_address(address: int) -> bytes:
    return _frame(MessageId.BUSADRES, bytes([(address >> 7) & 0x7F, address & 0x7F]))


def encode_battery(raw: bytes) -> bytes:
    return _frame(MessageId.BATTERY_STATUS, bytes(b & 0x7F for b in raw))


def encode_ee_moves(data: bytes) -> bytes:
    return _frame(MessageId.EE_MOVES, bytes(b & 0x7F for b in data))


# ---------------------------------------------------------------------------
# Commands as the board receives them (for the emulator)


@dataclass(eq=False, repr=False)
class ReceivedCommand(FrozenRecord):
    """A command as a board reads it: the command byte and any frame payload.

    For a clock message, ``clock`` is the clock command and ``payload`` its
    parameters (start and end markers stripped); ``valid`` is False when the
    frame's markers are wrong.
    """

    code: int
    clock: int | None = None
    payload: bytes = b""
    valid: bool = True
    raw: bytes = field(default=b"", repr=False)


class CommandParser:
    """Incremental PC -> board parser (what the emulator runs). Never raises."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[ReceivedCommand]:
        commands: list[ReceivedCommand] = []
        buffer = self._buffer
        buffer.extend(data)
        while buffer:
            code = buffer[0]
            if code in (Command.CLOCK_MESSAGE, Command.SET_LEDS):
                if len(buffer) < 2 or len(buffer) < 2 + buffer[1]:
                    break
                raw = bytes(buffer[: 2 + buffer[1]])
                del buffer[: len(raw)]
                commands.append(_framed_command(raw))
                continue
            del buffer[:1]
            commands.append(ReceivedCommand(code, raw=bytes([code])))
        return commands


def _framed_command(raw: bytes) -> ReceivedCommand:
    code, body = raw[0], raw[2:]
    if code == Command.SET_LEDS:
        return ReceivedCommand(code, payload=body[:-1], valid=body[-1:] == b"\x00", raw=raw)
    valid = len(body) >= 3 and body[0] == _CLOCK_START and body[-1] == _CLOCK_END
    return ReceivedCommand(
        code,
        clock=body[1] if len(body) >= 2 else None,
        payload=body[2:-1] if len(body) >= 3 else b"",
        valid=valid,
        raw=raw,
    )
