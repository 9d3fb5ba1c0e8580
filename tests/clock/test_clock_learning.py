"""With no time control configured, the clock tracker learns the increment from the clock.

The shipped configuration has no time control: the tracker must still take each
press's increment at once (a blind player asking for the clock hears the time the
clock shows), take a real change the clock keeps showing once seen twice, and keep
a single glitch out.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from drivers.clock.tracker import ClockTracker, RawReading


def reading(left: float, right: float, runs: str | None) -> RawReading:
    """What a clock without its time-per-move indicator shows (the emulator, a USB clock)."""
    return RawReading(left=left, right=right, running=runs)  # type: ignore[arg-type]


def left_right(tracker: ClockTracker) -> tuple[float, float]:
    report = tracker.last_report
    assert report is not None
    return report.left, report.right


def test_the_first_press_shows_its_increment_at_once_and_it_is_learnt() -> None:
    tracker = ClockTracker()
    tracker.check(0.0, reading(5400, 5400, "left"))
    tracker.check(1.0, reading(5399, 5400, "left"))
    tracker.check(1.4, reading(5429, 5400, "right"))  # 5399 - 0.4 + 30, as the clock shows it
    assert left_right(tracker) == (5429, 5400)
    assert tracker.learnt_increment == 30
    tracker.check(2.4, reading(5429, 5399, "right"))
    tracker.check(3.0, reading(5429, 5429, "left"))
    assert left_right(tracker) == (5429, 5429)
    assert tracker.rejected == 0


def test_more_than_the_learnt_increment_at_a_press_waits_for_a_second_reading() -> None:
    tracker = ClockTracker()
    tracker.check(0.0, reading(300, 300, "left"))
    tracker.check(1.0, reading(302, 300, "right"))  # 299 + 3: learnt
    tracker.check(2.0, reading(302, 299, "right"))
    tracker.check(3.0, reading(302, 320, "left"))  # 298 + 3 expected, 22 more shown
    assert left_right(tracker) == (302, 299)
    tracker.check(4.0, reading(301, 320, "left"))  # the clock keeps showing it: real
    assert left_right(tracker) == (301, 320)


def test_time_the_arbiter_adds_to_a_running_clock_is_taken_once_seen_twice() -> None:
    tracker = ClockTracker(time_control=None)
    tracker.check(0.0, reading(600, 600, "left"))
    tracker.check(1.0, reading(599, 720, "left"))  # two minutes to Black (7.5.5)
    assert left_right(tracker) == (599, 600)
    tracker.check(2.0, reading(598, 720, "left"))
    assert left_right(tracker) == (598, 720)


def test_a_new_game_learns_its_own_increment() -> None:
    tracker = ClockTracker()
    tracker.check(0.0, reading(300, 300, "left"))
    tracker.check(1.0, reading(302, 300, "right"))  # +3
    assert tracker.learnt_increment == 3
    tracker.new_game()
    tracker.check(2.0, reading(900, 900, None))  # set up 15+10
    tracker.check(3.0, reading(900, 900, "left"))
    tracker.check(4.0, reading(909, 900, "right"))  # 899 + 10
    assert left_right(tracker) == (909, 900)
    assert tracker.learnt_increment == 10


@given(
    st.lists(st.integers(1, 20), min_size=4, max_size=40),
    st.integers(0, 1000),
    st.integers(-600, 600).filter(lambda d: abs(d) > 30),
    st.sampled_from(["left", "right"]),
)
def test_once_learnt_a_single_glitch_never_shows(thinks, where, delta, side) -> None:
    """A 5+3 game with no time control configured and one corrupted reading after the
    first press (which taught the increment): no report carries it, and every true
    time comes through."""
    tracker = ClockTracker()
    times = {"left": 303, "right": 303}
    runner = "left"
    readings: list[tuple[float, dict[str, int], str]] = [(0.0, dict(times), runner)]
    t = 0.0
    first_press = 0
    for think in thinks:
        for _ in range(think):
            t += 1
            times[runner] -= 1
            readings.append((t, dict(times), runner))
        times[runner] += 3
        runner = "right" if runner == "left" else "left"
        t += 0.5
        readings.append((t, dict(times), runner))
        first_press = first_press or len(readings) - 1
    glitch_at = first_press + 1 + where % (len(readings) - first_press - 1)
    seen = set()
    for i, (when, shown, runs) in enumerate(readings):
        if i == glitch_at:
            bad = dict(shown)
            bad[side] = max(0, bad[side] + delta)
            for report in tracker.check(when - 0.25, reading(bad["left"], bad["right"], runs)):
                seen.add((report.left, report.right))
        for report in tracker.check(when, reading(shown["left"], shown["right"], runs)):
            seen.add((report.left, report.right))
    truth = {(float(s["left"]), float(s["right"])) for _, s, _ in readings}
    assert seen <= truth
    assert left_right(tracker) == (readings[-1][1]["left"], readings[-1][1]["right"])
