"""The sensor-log format: every kind of line in and out, and clear errors."""

import io

import pytest

from drivers.sensorlog import SensorLogError, event_to_dict, read_events, write_event
from drivers.sensors import BoardDump, ClockReading, ClockReport, SquareChange

LOG = """\
# a comment line
{"t": 0.0, "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}
{"t": 1.2, "square": "e2", "piece": null}
{"t": 1.45, "square": "e4", "piece": "P"}
{"t": 1.8, "clock": {"white": 5398.2, "black": 5400.0, "running": "black"}}
{"t": 1.9, "clock": {"left": 5398.2, "right": 5399.0, "running": "right", "flags": ["left"]}}
{"t": 2.0, "button": "plus"}
{"t": 2.5, "request": "new_game", "args": {}}
{"t": 3.0, "magic": "draw", "square": "e4"}
{"t": 9.0, "connection": "lost", "detail": "read error"}
"""


def test_every_kind_of_line_round_trips():
    events = list(read_events(io.StringIO(LOG)))
    assert [type(e).__name__ for e in events] == [
        "BoardDump",
        "SquareChange",
        "SquareChange",
        "ClockReport",
        "ClockReading",
        "ButtonPress",
        "Request",
        "MagicPiece",
        "ConnectionChange",
    ]
    assert events[1] == SquareChange(1.2, "e2", None)
    assert events[3] == ClockReport(1.8, 5398.2, 5400.0, "black")
    assert events[4] == ClockReading(1.9, 5398.2, 5399.0, "right", ("left",))
    out = io.StringIO()
    for event in events:
        write_event(out, event)
    assert list(read_events(io.StringIO(out.getvalue()))) == events


def test_real_capture_log_parses(shared):
    path = shared / "data" / "dgt-capture-1" / "sensor-log.jsonl"
    events = list(read_events(path.open()))
    assert isinstance(events[0], BoardDump)
    assert sum(isinstance(e, SquareChange) for e in events) > 100


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"t": 1, "square": "i9", "piece": null}', "unknown square 'i9'"),
        ('{"t": 1, "square": "e4", "piece": "X"}', "unknown piece 'X'"),
        ('{"t": 1, "board": "8/8/8"}', "8 ranks"),
        ('{"t": -1, "board": "8/8/8/8/8/8/8/8"}', "non-negative"),
        ('{"t": 1, "clock": {"white": 1, "black": 2, "running": "left"}}', "running"),
        ('{"t": 1, "clock": {"left": 1, "right": 2, "running": "white"}}', "running"),
        ('{"t": 1, "clock": {"left": 1, "right": 2, "flags": ["black"]}}', "flags"),
        ('{"t": 1, "clock": {"left": 1, "black": 2, "running": null}}', "not both"),
        ('{"t": 1, "clock": {"left": "1:30", "right": 2, "running": null}}', "clock 'left'"),
        ('{"t": 1, "square": "e4"', "not valid JSON"),
        ('{"t": 1, "sneeze": true}', "needs one of the keys"),
    ],
)
def test_bad_line_is_named_with_its_number(line, message):
    text = '{"t": 0.0, "board": "8/8/8/8/8/8/8/8"}\n' + line + "\n"
    with pytest.raises(SensorLogError) as error:
        list(read_events(io.StringIO(text)))
    assert error.value.line_number == 2
    assert message in str(error.value)


def test_time_going_backwards_is_rejected():
    text = '{"t": 5, "square": "e2", "piece": null}\n{"t": 4, "square": "e4", "piece": "P"}\n'
    with pytest.raises(SensorLogError, match=r"line 2: time 4\.0 goes backwards"):
        list(read_events(io.StringIO(text)))


def test_event_to_dict_keeps_clock_flags():
    line = event_to_dict(ClockReport(3.0, 0.0, 12.0, None, ("white",)))
    assert line["clock"]["flags"] == ["white"]


def test_a_clock_line_is_what_the_clock_shows_left_and_right():
    """The drivers' clock line: the sides as the players sit, no colours (the daemon
    maps them as it reads the log); flags left first."""
    reading = ClockReading(3.0, 0.0, 12.0, None, ("left",))
    assert event_to_dict(reading) == {
        "t": 3.0,
        "clock": {"left": 0.0, "right": 12.0, "running": None, "flags": ["left"]},
    }
    line = '{"t": 1, "clock": {"left": 0, "right": 0, "running": null, "flags": ["left", "right"]}}'
    [read] = read_events(io.StringIO(line))
    assert read == ClockReading(1.0, 0.0, 0.0, None, ("left", "right"))
