"""A real DGT capture decodes to exactly the board changes of its sensor log."""

from __future__ import annotations

import base64

from drivers.dgt import protocol
from drivers.dgt.clockmap import SimpleClockInterpreter
from drivers.dgt.shadow import BoardShadow
from drivers.sensorlog import read_log
from drivers.sensors import BoardDump, ClockReading, ClockReport, SquareChange


def decode_capture(path) -> list:
    parser = protocol.MessageParser()
    shadow = BoardShadow()
    clock = SimpleClockInterpreter()
    events = []
    with open(path, encoding="ascii") as lines:
        for line in lines:
            for message in parser.feed(base64.b64decode(line)):
                if isinstance(message, protocol.BoardDumpMessage):
                    events += shadow.dump(0.0, message)
                elif isinstance(message, protocol.FieldUpdate):
                    events += shadow.field_update(0.0, message)
                elif isinstance(message, protocol.Bwtime):
                    assert not isinstance(message.clock, protocol.InvalidClockData)
                    events += clock.interpret(0.0, message.clock)
                else:
                    raise AssertionError(f"unexpected message {message}")
    assert parser.pending == 0
    return events


def board_lines(events) -> list[tuple]:
    return [
        ("board", e.placement) if isinstance(e, BoardDump) else ("square", e.square, e.piece)
        for e in events
        if isinstance(e, BoardDump | SquareChange)
    ]


def test_capture_gives_the_same_board_changes_as_its_sensor_log(shared):
    capture = shared / "data" / "dgt-capture-1"
    decoded = decode_capture(capture / "1.inbytes")
    expected = read_log(str(capture / "sensor-log.jsonl"))
    assert len(board_lines(expected)) > 100
    assert board_lines(decoded) == board_lines(expected)


def test_capture_clock_reports_match_when_white_is_the_left_side(shared):
    """The log's clock lines (by colour: it was written before the clock reported
    sides) were mapped with White = the side that started running, which in this
    capture is the left side (bytes 3-5, status bit 3)."""
    capture = shared / "data" / "dgt-capture-1"
    decoded = [e for e in decode_capture(capture / "1.inbytes") if isinstance(e, ClockReading)]
    expected = [
        e for e in read_log(str(capture / "sensor-log.jsonl")) if isinstance(e, ClockReport)
    ]
    colour = {"left": "white", "right": "black", None: None}
    assert [(e.left, e.right, colour[e.running]) for e in decoded] == [
        (e.white, e.black, e.running) for e in expected
    ]
