"""Sensor logs: JSON Lines of what the board and clock reported.

A sensor log is the interface between the hardware and everything else: the
link writes it (``dgt-bridge record``), the emulator plays it, the rules core
replays it at full speed. A bug report is a log file; a test is a log file.

One JSON object per line, each with ``t`` (seconds since the log began,
non-decreasing) and exactly one of these keys::

    {"t": 0.0,  "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}
    {"t": 1.2,  "square": "e2", "piece": null}
    {"t": 1.45, "square": "e4", "piece": "P"}
    {"t": 1.8,  "clock": {"left": 5400.0, "right": 5398.2, "running": "right"}}
    {"t": 2.0,  "button": "plus"}
    {"t": 2.5,  "request": "new_game", "args": {}}
    {"t": 3.0,  "magic": "draw", "square": "e4"}
    {"t": 9.0,  "connection": "lost", "detail": "read error"}
    {"t": 9.5,  "heard": true}

A board line after an outage may carry ``"history"``: the placements the
board's EEPROM log says it passed through while the link was down.

A clock line holds what the clock shows, ``left`` and ``right`` (optional
``flags``: the sides whose flag is down); the daemon decides whose side is whose
as it reads the line, live and in a replay alike. A clock line with ``white`` and
``black`` instead (every log written before the clock reported sides, and a
hand-written one) is already mapped and goes to the rules core as it is.

Blank lines and lines starting with ``#`` are ignored, so a log can carry a
comment saying what it reproduces.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from typing import IO, Any

import chess

from drivers.sensors import (
    CLOCK_BUTTONS,
    PIECE_LETTERS,
    BoardDump,
    BoardHeard,
    ButtonPress,
    ClockReading,
    ClockReport,
    ConnectionChange,
    MagicPiece,
    Request,
    SensorEvent,
    SquareChange,
)

_MAGIC_MEANINGS = ("draw", "white_wins", "black_wins")


class SensorLogError(ValueError):
    """A line of a sensor log that cannot be understood; names the line."""

    def __init__(self, line_number: int, message: str) -> None:
        super().__init__(f"line {line_number}: {message}")
        self.line_number = line_number
        self.message = message


def parse_placement(placement: str) -> str:
    """Check a FEN placement field; return it unchanged or raise ValueError."""
    rows = placement.split("/")
    if len(rows) != 8:
        raise ValueError(f"board {placement!r} must have 8 ranks separated by '/'")
    for row in rows:
        width = 0
        for char in row:
            if char.isdigit() and char not in "09":
                width += int(char)
            elif char in PIECE_LETTERS:
                width += 1
            else:
                raise ValueError(f"board {placement!r}: unexpected character {char!r}")
        if width != 8:
            raise ValueError(f"board {placement!r}: rank {row!r} is not 8 squares wide")
    return placement


def _time(obj: dict[str, Any]) -> float:
    t = obj.get("t")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        raise ValueError(f"'t' must be a non-negative number of seconds, not {t!r}")
    return float(t)


def _seconds(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"clock '{name}' must be a number of seconds, not {value!r}")
    return float(value)


def _square(value: Any) -> str:
    if not isinstance(value, str) or value not in chess.SQUARE_NAMES:
        raise ValueError(f"unknown square {value!r} (expected a1..h8)")
    return value


#: The key that says what kind of event a line is (``square`` is also the magic
#: piece's square, so it names the kind only without ``magic``).
KIND_KEYS = ("board", "square", "clock", "button", "request", "magic", "connection")


def event_from_dict(obj: dict[str, Any]) -> SensorEvent:
    """Build a sensor event from one decoded log line; ValueError says what is wrong."""
    if not isinstance(obj, dict):
        raise ValueError("each line must be a JSON object")
    kinds = [k for k in KIND_KEYS if k in obj and not (k == "square" and "magic" in obj)]
    if len(kinds) > 1:
        # Which one was meant cannot be known: taking either would lose the other.
        raise ValueError(f"one event per line, but this one has {' and '.join(kinds)}")
    t = _time(obj)
    if "board" in obj:
        board = obj["board"]
        if not isinstance(board, str):
            raise ValueError("'board' must be a FEN placement string")
        history = obj.get("history", [])
        if not isinstance(history, list) or not all(isinstance(h, str) for h in history):
            raise ValueError("'history' must be a list of FEN placement strings")
        return BoardDump(t, parse_placement(board), tuple(parse_placement(h) for h in history))
    if "square" in obj and "magic" not in obj:
        piece = obj.get("piece")
        if piece is not None and (not isinstance(piece, str) or piece not in PIECE_LETTERS):
            raise ValueError(f"unknown piece {piece!r} (expected one of PNBRQKpnbrqk or null)")
        since = obj.get("since")  # a polled board's previous read (optional)
        if since is not None:
            if isinstance(since, bool) or not isinstance(since, int | float):
                raise ValueError(f"'since' must be a number of seconds, not {since!r}")
            since = min(t, float(since))
        return SquareChange(t, _square(obj["square"]), piece, since)
    if "clock" in obj:
        return _clock_line(t, obj["clock"])
    if "button" in obj:
        if obj["button"] not in CLOCK_BUTTONS:
            raise ValueError(f"unknown button {obj['button']!r} (expected one of {CLOCK_BUTTONS})")
        return ButtonPress(t, obj["button"])
    if "request" in obj:
        action, args = obj["request"], obj.get("args", {})
        if not isinstance(action, str) or not isinstance(args, dict):
            raise ValueError("'request' must be a name and 'args' an object")
        return Request(t, action, dict(args))
    if "magic" in obj:
        if obj["magic"] not in _MAGIC_MEANINGS:
            raise ValueError(f"unknown magic piece {obj['magic']!r}")
        return MagicPiece(t, _square(obj.get("square")), obj["magic"])
    if "connection" in obj:
        if obj["connection"] not in ("connected", "lost"):
            raise ValueError("'connection' must be 'connected' or 'lost'")
        return ConnectionChange(t, obj["connection"], str(obj.get("detail", "")))
    if "heard" in obj:
        if obj["heard"] is not True:
            raise ValueError("'heard' must be true (the board answered the link's probe)")
        return BoardHeard(t)
    raise ValueError(
        "a line needs one of the keys board, square, clock, button, request, magic, "
        "connection, heard"
    )


def _clock_line(t: float, clock: Any) -> ClockReading | ClockReport:
    """A clock line: in the clock's own terms, left and right (what the drivers
    record), or by colour (an older or hand-written log: already mapped)."""
    if not isinstance(clock, dict):
        raise ValueError("'clock' must be an object with left, right and running")
    sides = "left" in clock or "right" in clock
    if sides and ("white" in clock or "black" in clock):
        raise ValueError("a clock line has left and right, or white and black, not both")
    first, second = ("left", "right") if sides else ("white", "black")
    running = clock.get("running")
    if running not in (first, second, None):
        raise ValueError(f"clock 'running' must be '{first}', '{second}' or null, not {running!r}")
    flags = clock.get("flags", [])
    if not isinstance(flags, list) or any(f not in (first, second) for f in flags):
        raise ValueError(f"clock 'flags' must be a list of '{first}'/'{second}'")
    times = (_seconds(clock.get(first), first), _seconds(clock.get(second), second))
    if sides:
        return ClockReading(t, *times, running, tuple(flags))
    return ClockReport(t, *times, running, tuple(flags))


def event_to_dict(event: SensorEvent) -> dict[str, Any]:
    """The log line of a sensor event (the inverse of ``event_from_dict``)."""
    t = round(event.t, 6)
    match event:
        case BoardDump():
            if event.history:
                return {"t": t, "board": event.placement, "history": list(event.history)}
            return {"t": t, "board": event.placement}
        case SquareChange():
            line = {"t": t, "square": event.square, "piece": event.piece}
            if event.since is not None:
                line["since"] = round(event.since, 6)
            return line
        case ClockReading() | ClockReport():
            return {"t": t, "clock": _clock_object(event)}
        case ButtonPress():
            return {"t": t, "button": event.button}
        case Request():
            return {"t": t, "request": event.action, "args": event.args}
        case MagicPiece():
            return {"t": t, "magic": event.meaning, "square": event.square}
        case ConnectionChange():
            return {"t": t, "connection": event.state, "detail": event.detail}
        case BoardHeard():
            return {"t": t, "heard": True}
    raise TypeError(f"not a sensor event: {event!r}")


def _clock_object(event: ClockReading | ClockReport) -> dict[str, Any]:
    """A clock line's object: the sides (a driver's reading) or the colours."""
    clock: dict[str, Any]
    if isinstance(event, ClockReading):
        clock = {"left": event.left, "right": event.right, "running": event.running}
    else:
        clock = {"white": event.white, "black": event.black, "running": event.running}
    if event.flags:
        clock["flags"] = list(event.flags)
    return clock


def read_events(lines: Iterable[str]) -> Iterator[SensorEvent]:
    """Yield the events of a log; raise SensorLogError naming the first bad line."""
    last_t = 0.0
    for number, line in _numbered(lines):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            event = event_from_dict(json.loads(text))
        except json.JSONDecodeError as error:
            raise SensorLogError(number, f"not valid JSON ({error.msg})") from None
        except ValueError as error:
            raise SensorLogError(number, str(error)) from None
        if event.t < last_t:
            raise SensorLogError(number, f"time {event.t} goes backwards (previous {last_t})")
        last_t = event.t
        yield event


def _numbered(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """The lines with their numbers; a file that is not text (a binary file, another
    encoding) is a SensorLogError at the line where decoding failed, not a traceback."""
    iterator = iter(lines)
    number = 0
    while True:
        try:
            line = next(iterator)
        except StopIteration:
            return
        except UnicodeDecodeError as error:
            raise SensorLogError(number + 1, f"not UTF-8 text ({error.reason})") from None
        number += 1
        yield number, line


def read_log(path: str) -> list[SensorEvent]:
    """All events of the log file at ``path``."""
    with open(path, encoding="utf-8") as handle:
        return list(read_events(handle))


def write_event(stream: IO[str], event: SensorEvent) -> None:
    """Append one event as a line; the caller decides when to flush."""
    stream.write(json.dumps(event_to_dict(event), separators=(", ", ": ")) + "\n")
