"""Which clock readings the page and MQTT are sent: only what their own count of the
running side does not foresee (``daemon.clock.ticks``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from daemon.clock.ticks import RESYNC, TOLERANCE, ClockTicks


def clock(t: float, white: float, black: float, running: str | None = "white") -> dict:
    return {"type": "clock", "t": t, "white": white, "black": black, "running": running}


def test_a_running_clock_read_every_second_is_sent_once_then_at_each_resync():
    ticks = ClockTicks()
    sent = [t for t in range(31) if ticks.is_news(clock(t, 180.0 - t, 180.0))]
    assert sent == list(range(0, 31, round(RESYNC)))  # the first, then every RESYNC


def test_a_press_a_pause_and_the_arbiter_s_correction_are_always_sent():
    ticks = ClockTicks()
    assert ticks.is_news(clock(0.0, 180.0, 180.0))
    assert not ticks.is_news(clock(1.0, 179.0, 180.0))
    assert ticks.is_news(clock(2.0, 180.0, 180.0, "black")), "a press (with the increment)"
    assert ticks.is_news(clock(3.0, 180.0, 179.0, None)), "paused"
    assert ticks.is_news(clock(4.0, 180.0, 179.0, "black")), "running again"
    assert not ticks.is_news(clock(5.0, 180.0, 178.0, "black"))
    assert ticks.is_news(clock(6.0, 180.0, 237.0, "black")), "the arbiter adds a minute"
    assert ticks.is_news(clock(7.0, 170.0, 236.0, "black")), "the waiting side's time changed"


def test_a_reading_that_drifts_from_the_count_is_sent():
    ticks = ClockTicks()
    assert ticks.is_news(clock(0.0, 100.0, 100.0))
    assert not ticks.is_news(clock(2.0, 98.0 - TOLERANCE, 100.0))
    assert ticks.is_news(clock(3.0, 97.0 - TOLERANCE - 0.5, 100.0)), "1.5 s behind the count"


def test_every_other_event_is_sent():
    ticks = ClockTicks()
    assert ticks.is_news({"type": "move", "t": 1.0, "uci": "e2e4"})
    assert ticks.is_news({"type": "clock", "t": "not a number"})


@given(st.lists(st.tuples(st.floats(0.1, 5.0), st.floats(-3.0, 3.0)), max_size=40))
def test_what_a_viewer_counts_is_never_more_than_the_tolerance_from_a_reading(steps):
    """Whatever the readings, the count from the last one sent is within TOLERANCE
    of every reading not sent."""
    ticks = ClockTicks()
    t, white = 0.0, 300.0
    shown = (t, white)
    assert ticks.is_news(clock(t, white, 300.0))
    for gap, jitter in steps:
        t += gap
        white = max(0.0, white - gap + jitter)
        if ticks.is_news(clock(t, white, 300.0)):
            shown = (t, white)
        else:
            assert abs(white - (shown[1] - (t - shown[0]))) <= TOLERANCE
            assert t - shown[0] < RESYNC
