"""The DGT XL / 3000 clock on the board: BWTIME bytes to sensor events, left and right;
and the daemon's side mapper making them the rules core's colours."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.clock.sides import SideMapper
from drivers.clock.dgt3000 import DgtClockInterpreter
from drivers.dgt import protocol
from drivers.dgt.protocol import (
    ACK_OK,
    Bwtime,
    ClockAck,
    ClockTimes,
    InvalidClockData,
    MessageParser,
    side_time,
)
from drivers.sensors import ButtonPress, ClockReading, ClockReport
from drivers.timecontrol import parse_time_control


def decode(frame: bytes):
    """The BWTIME a frame decodes to, through the real codec."""
    messages = MessageParser().feed(frame)
    assert len(messages) == 1 and isinstance(messages[0], Bwtime), messages
    return messages[0].clock


def times_frame(
    left: int,
    right: int,
    runs: str | None = None,
    *,
    left_flag: bool = False,
    right_flag: bool = False,
    per_move: bool = True,
    no_clock: bool = False,
    battery_low: bool = False,
) -> bytes:
    """A clock-times BWTIME as a real clock sends it (status bits as in the capture)."""
    return protocol.encode_bwtime_times(
        side_time(left, time_per_move=per_move, flag_fallen=left_flag),
        side_time(right, time_per_move=per_move, flag_fallen=right_flag),
        running=runs is not None,
        lever_right_high=runs == "right",
        left_to_move=runs == "left",
        right_to_move=runs == "right",
        no_clock=no_clock,
        battery_low=battery_low,
    )


class Clock:
    """An interpreter fed frames at simulated times."""

    def __init__(self, **kwargs) -> None:
        self.interpreter = DgtClockInterpreter(**kwargs)

    def feed(self, t: float, frame: bytes) -> list:
        return self.interpreter.interpret(t, decode(frame))

    def report(self, t: float, frame: bytes) -> ClockReading | None:
        events = self.feed(t, frame)
        assert all(isinstance(e, ClockReading) for e in events)
        return events[-1] if events else None


class MappedClock(Clock):
    """The interpreter and the daemon's side mapper (``clock.sides``) after it: what
    the rules core reads, by colour."""

    def __init__(self, sides: str = "auto", **kwargs) -> None:
        super().__init__(**kwargs)
        self.sides = SideMapper(sides, clock=self.interpreter)  # type: ignore[arg-type]

    def feed(self, t: float, frame: bytes) -> list:
        out: list = []
        for event in super().feed(t, frame):
            out += self.sides.reports_for(event) if isinstance(event, ClockReading) else [event]
        return out

    def report(self, t: float, frame: bytes) -> ClockReport | None:  # type: ignore[override]
        events = self.feed(t, frame)
        assert all(isinstance(e, ClockReport) for e in events)
        return events[-1] if events else None


# --- decoding every variant ---------------------------------------------------------


#: Bytes from the real capture dgt-capture-1: 3:02 each, then the left side runs, then
#: its player presses (the Fischer increment lands on his clock) and the right runs.
CAPTURED = ["8d000a20030220030208", "8d000a20030220030109", "8d000a20030220030113"]


def test_real_clock_bytes_decode_to_left_and_right_and_the_daemon_maps_them():
    """The driver reads sides; with White on the left (``clock.sides: left_white``)
    the daemon's mapper makes them White's time running, White's press, Black's."""
    frames = [bytes.fromhex(frame) for frame in CAPTURED]
    clock, mapped = Clock(), MappedClock("left_white")
    readings = [clock.report(t, frame) for t, frame in enumerate(frames)]
    reports = [mapped.report(t, frame) for t, frame in enumerate(frames)]
    assert [(r.left, r.right, r.running) for r in readings] == [
        (182, 182, None),
        (181, 182, "left"),
        (181, 182, "right"),
    ]
    assert [(r.white, r.black, r.running) for r in reports] == [
        (182, 182, None),
        (181, 182, "white"),
        (181, 182, "black"),
    ]


def test_hours_minutes_seconds_are_bcd():
    clock = Clock()
    # Right side 1:05:09 (bytes 3-5), left side 9:59:58 (bytes 6-8), clock stopped.
    report = clock.report(0.0, bytes.fromhex("8d000a01050909595800"))
    assert (report.left, report.right) == (9 * 3600 + 59 * 60 + 58, 3600 + 5 * 60 + 9)


@pytest.mark.parametrize(
    ("left_flag", "right_flag", "flags"),
    [(True, False, ("white",)), (False, True, ("black",)), (True, True, ("white", "black"))],
)
def test_fallen_flags_are_reported_by_colour(left_flag, right_flag, flags):
    clock = MappedClock("left_white")
    report = clock.report(0.0, times_frame(0, 0, left_flag=left_flag, right_flag=right_flag))
    assert report.flags == flags


def test_fallen_flags_are_read_by_side():
    clock = Clock()
    assert clock.report(0.0, times_frame(0, 0, right_flag=True)).flags == ("right",)
    assert clock.report(1.0, times_frame(0, 0, left_flag=True, right_flag=True)).flags == (
        "left",
        "right",
    )


def test_flag_shown_bit_counts_as_a_flag():
    clock = MappedClock("right_white")
    frame = bytearray(times_frame(0, 25))
    frame[6] |= 0x40  # left side's "flag shown" bit (data byte d3)
    assert clock.report(0.0, bytes(frame)).flags == ("black",)


def test_lever_and_turn_bits_say_whose_time_runs():
    clock = Clock()
    assert clock.report(0.0, times_frame(300, 300, "right")).running == "right"
    assert clock.report(1.0, times_frame(300, 299, "left")).running == "left"
    assert clock.report(2.0, times_frame(299, 299, None)).running is None


def test_all_zero_messages_are_ignored():
    clock = Clock()
    clock.feed(0.0, times_frame(300, 300, "left"))
    assert clock.feed(1.0, bytes.fromhex("8d000a00000000000000")) == []
    assert clock.interpreter.ignored["all_zero"] == 1
    # The next real message goes on from the good times, no jump to zero or back.
    assert clock.report(2.0, times_frame(298, 300, "left")).left == 298


def test_no_clock_connected_keeps_the_last_good_times():
    clock = Clock()
    clock.feed(0.0, times_frame(300, 250, "left"))
    [stopped] = clock.feed(1.0, times_frame(0, 0, no_clock=True))  # nobody's time runs
    assert (stopped.left, stopped.right, stopped.running) == (300, 250, None)
    assert clock.interpreter.clock_connected is False
    assert clock.interpreter.tracker.last_report.left == 300
    assert clock.interpreter.tracker.last_report.right == 250
    assert clock.report(2.0, times_frame(298, 250, "left")).left == 298
    assert clock.interpreter.clock_connected is True


@pytest.mark.parametrize(
    "data",
    [
        "0b000000000001",  # right hours 11
        "00600000000001",  # right minutes 60
        "00006000000001",  # right seconds 60
        "0f595900000001",  # right hours 15
    ],
)
def test_out_of_range_times_are_ignored(data):
    clock = Clock()
    clock.feed(0.0, times_frame(300, 300, "left"))
    frame = bytes.fromhex("8d000a") + bytes.fromhex(data)
    assert isinstance(decode(frame), ClockTimes)
    assert clock.feed(1.0, frame) == []
    assert clock.interpreter.ignored["out_of_range"] == 1


def test_non_bcd_times_never_reach_the_interpreter():
    assert isinstance(decode(bytes.fromhex("8d000a005a0000000001")), InvalidClockData)


@pytest.mark.parametrize("button", ["back", "minus", "run", "plus", "ok"])
def test_button_acks_become_button_presses(button):
    clock = Clock()
    assert clock.feed(3.5, protocol.encode_button_ack(button)) == [ButtonPress(3.5, button)]


def test_button_ack_from_raw_bytes():
    """ack1 0x88 (button pressed), ack3 0x35: OK. ack1's top bit rides in d3 bit 5."""
    ack = decode(bytes.fromhex("8d000a0a10082a003500"))
    assert isinstance(ack, ClockAck) and ack.button == "ok"
    assert Clock().feed(1.0, bytes.fromhex("8d000a0a10082a003500")) == [ButtonPress(1.0, "ok")]


@pytest.mark.parametrize(("major", "model"), [(2, "dgt3000"), (1, "xl")])
def test_version_ack_tells_the_clock_model(major, model):
    clock = Clock()
    assert clock.feed(0.0, protocol.encode_bwtime_ack((ACK_OK, 0x09, major << 4 | 2, 0))) == []
    assert clock.interpreter.version == (major, 2)
    assert clock.interpreter.model == model


@pytest.mark.parametrize(
    "ack",
    [
        (protocol.ACK_ERROR, 0x0A, 0, 0),  # SetNRun refused (clock not in mode 23)
        (ACK_OK, 0x81, 0, 0),  # ready
        (ACK_OK, 0x01, 0, 0),  # display done
        (ACK_OK, 0x0C, 0, 0),  # ASCII done
    ],
)
def test_other_acks_make_no_sensor_events(ack):
    assert Clock().feed(0.0, protocol.encode_bwtime_ack(ack)) == []


# --- defensive filters --------------------------------------------------------------


def test_a_time_jumping_up_while_running_is_ignored():
    clock = Clock(time_control=parse_time_control("5+3"))
    clock.feed(0.0, times_frame(250, 260, "left"))
    # A glitch: the running left time jumps up 40 s.
    assert clock.feed(1.0, times_frame(290, 260, "left")) == []
    assert clock.report(2.0, times_frame(248, 260, "left")).left == 248
    assert clock.interpreter.tracker.rejected == 1


def test_the_increment_at_a_press_is_not_a_jump():
    clock = Clock(time_control=parse_time_control("5+3"))
    clock.feed(0.0, times_frame(250, 260, "left"))
    report = clock.report(1.0, times_frame(252, 260, "right"))  # 249 + 3 at the press
    assert (report.left, report.running) == (252, "right")


def test_more_than_the_increment_at_a_press_is_held_back():
    clock = Clock(time_control=parse_time_control("5+3"))
    clock.feed(0.0, times_frame(250, 260, "left"))
    report = clock.report(1.0, times_frame(280, 260, "right"))
    # The press itself still counts (the move completes); the bad time does not.
    assert (report.left, report.running) == (250, "right")


def test_the_next_period_arrives_with_the_fortieth_move():
    clock = Clock(time_control=parse_time_control("40/5400:1800+30"))
    clock.feed(0.0, times_frame(5400, 5400, "left"))
    t = 0.0
    for _ in range(39):  # both players press 39 times, fast
        t += 1
        clock.feed(t, times_frame(5400, 5400, "right"))
        t += 1
        clock.feed(t, times_frame(5400, 5400, "left"))
    report = clock.report(t + 1, times_frame(5400 + 1830, 5400, "right"))
    assert report.left == 7230


def test_an_unexpected_but_lasting_change_is_accepted_after_confirmation():
    """Without a known time control a period's time looks like a jump; the clock
    keeps showing it, so after three readings it is believed."""
    clock = Clock(confirmations=3)
    clock.feed(0.0, times_frame(100, 200, "left", per_move=False))
    clock.feed(1.0, times_frame(99, 1999, "left", per_move=False))
    assert clock.interpreter.tracker.last_report.right == 200
    clock.feed(2.0, times_frame(98, 1999, "left", per_move=False))
    assert clock.interpreter.tracker.last_report.right == 200
    assert clock.report(3.0, times_frame(97, 1999, "left", per_move=False)).right == 1999


def test_a_running_time_cannot_fall_faster_than_time_passes():
    """A false 0:00 would announce a false flag fall."""
    clock = Clock()
    clock.feed(0.0, times_frame(100, 200, "left"))
    assert clock.feed(1.0, times_frame(0, 200, "left")) == []
    assert clock.report(2.0, times_frame(98, 200, "left")).left == 98


def test_times_set_on_a_stopped_clock_are_taken_at_once():
    clock = Clock()
    clock.feed(0.0, times_frame(100, 200, None))
    assert clock.report(1.0, times_frame(900, 900, None)).left == 900


@pytest.mark.parametrize("time_control", [None, "90+30"])
@pytest.mark.parametrize(("left", "right", "runs"), [(5400, 5400, "left"), (5397, 5400, "left"),
                                                      (5400, 5399, "right")])  # fmt: skip
def test_a_clock_set_and_started_between_two_readings_shows_the_new_game_at_once(
    time_control, left, right, runs
):
    """The last game's times read on a stopped clock, then the new game's already
    running (set and started between two readings: Black pressed at once). Both
    times are the new game's at once: held for a second reading, White's first move
    went out with the old game's 300 s, and the relay refused the rise that followed."""
    tc = parse_time_control(time_control) if time_control else None
    clock = Clock(time_control=tc)
    clock.feed(0.0, times_frame(300, 300, None))
    report = clock.report(1.0, times_frame(left, right, runs))
    assert (report.left, report.right, report.running) == (left, right, runs)
    # A new game's clock: its first press is the first, and the increment learnt anew.
    assert clock.interpreter.tracker.presses("left") == 0


@pytest.mark.parametrize(("left", "right"), [(300, 5400), (5400, 900), (5400, 5390)])
def test_a_stopped_clock_that_starts_with_a_side_jumping_up_is_not_believed_at_once(left, right):
    """Only both sides set to one game's time make a new game's clock: one side
    jumping up as the clock starts, or two unequal times, is held until seen again
    (a glitch never reaches the rules core)."""
    clock = Clock()
    clock.feed(0.0, times_frame(300, 300, None))
    assert clock.report(1.0, times_frame(left, right, "left")).right != right
    assert clock.interpreter.tracker.rejected >= 1


def test_a_set_and_run_ack_lets_the_times_go_up():
    clock = Clock()
    clock.feed(0.0, times_frame(100, 200, "left"))
    clock.feed(0.5, protocol.encode_bwtime_ack((ACK_OK, 0x0A, 0, 0)))
    report = clock.report(1.0, times_frame(100, 320, "left"))  # a 2-minute penalty, 7.4b
    assert report.right == 320


# --- sides ---------------------------------------------------------------------------


def test_the_side_that_runs_first_proves_nothing():
    """A clock may run before the game (set up while running, a restart after a press
    made while the daemon was down): until a move shows whose side is whose, the
    clock is reported as stopped, never under a guessed mapping."""
    clock = MappedClock()
    clock.feed(0.0, times_frame(300, 300, None))
    report = clock.report(1.0, times_frame(300, 299, "right"))
    assert report.running is None
    assert clock.sides.white_side is None


@pytest.mark.parametrize(("sides", "white_time"), [("left_white", 120), ("right_white", 200)])
def test_configured_sides_override_learning(sides, white_time):
    clock = MappedClock(sides)
    report = clock.report(0.0, times_frame(120, 200, "right"))
    assert report.white == white_time


def test_a_pause_does_not_swap_the_sides():
    """6.12b: the clock stopped to call the arbiter, then Black's time runs again."""
    clock = MappedClock("left_white")
    clock.feed(0.0, times_frame(300, 300, "left"))
    clock.feed(5.0, times_frame(295, 300, "right"))
    clock.feed(9.0, times_frame(295, 296, None))
    report = clock.report(60.0, times_frame(295, 296, "right"))
    assert report.running == "black"


# --- the real capture -----------------------------------------------------------------


def test_the_real_capture_passes_the_filters_untouched(shared):
    """A real 3+2 game: every clock reading comes through, none is rejected, and with
    White on the left the colours match the capture's sensor log."""
    folder = shared / "data" / "dgt-capture-1"
    interpreter = DgtClockInterpreter(time_control=parse_time_control("3+2"))
    sides = SideMapper("left_white", clock=interpreter)
    parser = MessageParser()
    reports = []
    for line in (folder / "1.inbytes").read_text().splitlines():
        for message in parser.feed(base64.b64decode(line)):
            if isinstance(message, Bwtime) and not isinstance(message.clock, InvalidClockData):
                for reading in interpreter.interpret(0.0, message.clock):
                    reports += sides.reports_for(reading)
    expected = [
        json.loads(line)["clock"]
        for line in (folder / "sensor-log.jsonl").read_text().splitlines()
        if '"clock"' in line
    ]
    assert [(r.white, r.black, r.running) for r in reports] == [
        (c["white"], c["black"], c["running"]) for c in expected
    ]
    assert interpreter.tracker.rejected == 0
    moves = [w for w in (folder / "1.uci").read_text().split() if not w.endswith(".") and w != "*"]
    assert len(moves) == 57
    assert interpreter.tracker.presses("left") + interpreter.tracker.presses("right") == len(moves)


# --- property: glitches never show ------------------------------------------------------


@given(
    st.lists(st.integers(1, 20), min_size=4, max_size=40),
    st.integers(0, 1000),
    st.integers(-600, 600).filter(lambda d: abs(d) > 30),
    st.sampled_from(["left", "right"]),
)
def test_a_single_glitch_never_reaches_the_rules_core(thinks, where, delta, side):
    """A blitz game at 5+3 with one corrupted reading: no report carries it."""
    tc = parse_time_control("5+3")
    clock = Clock(time_control=tc)
    times = {"left": 303, "right": 303}
    runner = "left"
    true_readings = [(0.0, dict(times), None)]
    t = 0.0
    for think in thinks:
        for _ in range(think):
            t += 1
            times[runner] -= 1
            true_readings.append((t, dict(times), runner))
        times[runner] += 3
        runner = "right" if runner == "left" else "left"
        true_readings.append((t + 0.5, dict(times), runner))
        t += 0.5
    glitch_at = 1 + where % (len(true_readings) - 1)
    seen = set()
    for i, (when, shown, runs) in enumerate(true_readings):
        if i == glitch_at:
            bad = dict(shown)
            bad[side] = max(0, bad[side] + delta)
            for report in clock.feed(when - 0.25, times_frame(bad["left"], bad["right"], runs)):
                seen.add((report.left, report.right))
        for report in clock.feed(when, times_frame(shown["left"], shown["right"], runs)):
            seen.add((report.left, report.right))
    truth = {(float(s["left"]), float(s["right"])) for _, s, _ in true_readings}
    assert seen <= truth
    last = true_readings[-1][1]
    assert clock.interpreter.tracker.last_report.left == last["left"]


def test_a_resumed_game_reuses_the_journals_sides_and_places_the_periods():
    """The daemon restarted mid-game with Black to move; the journal kept White's
    side (the right one): the running left clock is Black's at once, and the move
    counts place the 40-move control."""
    clock = MappedClock(time_control=parse_time_control("40/5400:1800+30"))
    clock.sides.resume_game(white_moves=40, black_moves=39, white_side="right")
    report = clock.report(0.0, times_frame(2000, 1500, "left"))
    assert (report.black, report.running) == (2000, "black")
    # Black completes move 40: the second period arrives at once, not a jump.
    report = clock.report(1.0, times_frame(1999 + 1830, 1500, "right"))
    assert (report.black, report.white, report.running) == (3829, 1500, "white")


def test_a_clock_unplugged_mid_game_counts_as_stopped_once():
    """The clock's cable pulled while White's time runs: no press can come any more,
    so the clock is reported stopped (the core then decides moves on the settle
    time), once; plugged in again, its times count as before."""
    clock = MappedClock("left_white")
    assert clock.report(0.0, times_frame(300, 300, "left")).running == "white"
    stopped = clock.report(1.0, times_frame(0, 0, None, no_clock=True))
    assert (stopped.white, stopped.black, stopped.running) == (300, 300, None)
    assert clock.feed(2.0, times_frame(0, 0, None, no_clock=True)) == []
    back = clock.report(30.0, times_frame(290, 300, "left"))
    assert (back.white, back.running) == (290, "white")
