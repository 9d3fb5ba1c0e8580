"""The time-control model: notations, Article 6.2 arithmetic, 6.11, penalties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.timecontrol import (
    ILLEGAL_MOVE_PENALTY,
    INCORRECT_CLAIM_PENALTY,
    Period,
    TimeControl,
    TimeControlError,
    apply_penalty,
    is_last_period,
    moves_made_by,
    parse_time_control,
    period_for_ply,
    remaining,
)

# --- notations -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "periods"),
    [
        ("90+30", [Period(5400, None, increment=30)]),
        ("5+3", [Period(300, None, increment=3)]),
        ("3|2", [Period(180, None, increment=2)]),
        ("15", [Period(900)]),
        ("40/5400:1800+30", [Period(5400, 40), Period(1800, None, increment=30)]),
        (
            "40/5400+30:1800+30",
            [Period(5400, 40, increment=30), Period(1800, None, increment=30)],
        ),
        ("40/7200:20/3600:900+30", [Period(7200, 40), Period(3600, 20), Period(900, increment=30)]),
        ("G/60 d5", [Period(3600, delay=5)]),
        ("G/60;d5", [Period(3600, delay=5)]),
        ("SD/30+5", [Period(1800, increment=5)]),
        ("g/90 inc30", [Period(5400, increment=30)]),
        ("pgn:300+5", [Period(300, increment=5)]),
        ("3600d5", None),  # a bare number with d is not minutes+seconds: an error below
    ],
)
def test_notations_read_as_the_arbiter_means_them(text, periods):
    if periods is None:
        with pytest.raises(TimeControlError):
            parse_time_control(text)
        return
    assert parse_time_control(text) == TimeControl(tuple(periods))


@pytest.mark.parametrize("text", ["", "  ", "-", "none", None])
def test_no_time_control_is_none(text):
    assert parse_time_control(text) is None


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("ninety", "cannot read time control 'ninety'"),
        ("90++30", "cannot read"),
        ("40/5400:1800:600", "only the last period"),
        ("*180", "hourglass"),
        ("0+0", "without any time"),
        ("40/5400:abc", "cannot read the period 'abc'"),
        ("0/5400", "at least one move"),
        ("G/60 d5+3", "cannot read"),
    ],
)
def test_bad_time_controls_say_what_is_wrong(text, hint):
    with pytest.raises(TimeControlError) as error:
        parse_time_control(text)
    assert hint in str(error.value)
    assert "90+30" in str(error.value) or "time control" in str(error.value)


def test_a_period_cannot_have_both_increment_and_delay():
    with pytest.raises(TimeControlError, match="not both"):
        Period(600, increment=5, delay=5)


def test_pgn_tag_values():
    assert parse_time_control("90+30").to_pgn() == "5400+30"
    assert parse_time_control("40/5400:1800+30").to_pgn() == "40/5400:1800+30"
    assert parse_time_control("G/60 d5").to_pgn() == "3600d5"
    assert parse_time_control("40/5400:1800+30").describe() == (
        "40 moves in 90 min, then 30 min +30 s per move"
    )
    assert TimeControl.from_pgn("40/7200").describe() == "40 moves in 120 min, repeating"
    # A PGN tag is seconds even without a slash.
    assert TimeControl.from_pgn("300+5") == parse_time_control("5+5")


# --- arithmetic -------------------------------------------------------------------


def test_fischer_blitz_matches_a_real_dgt_clock():
    """The real capture dgt-capture-1 (3+2): both clocks start at 3:02; White
    spends 3 s on move 1 and shows 3:01 after the press."""
    tc = parse_time_control("3+2")
    assert tc.initial_seconds() == 182
    assert remaining(tc, 0, 0.0) == 182
    assert remaining(tc, 0, 0.0, thinking=3) == 179
    assert remaining(tc, 1, 3.0) == 181


def test_moves_in_a_period_then_the_rest():
    tc = parse_time_control("40/5400:1800+30")
    assert tc.initial_seconds() == 5400
    # 39 moves, an hour used: no increment in the first period.
    assert remaining(tc, 39, 3600.0) == 1800
    # The 40th move's press adds the second period and its first increment.
    assert tc.added_on_press(40) == 1800 + 30
    assert remaining(tc, 40, 3700.0) == 5400 + 1830 - 3700
    assert remaining(tc, 41, 3800.0) == 5400 + 1830 + 30 - 3800
    assert [tc.period_index(n) for n in (1, 40, 41, 100)] == [0, 0, 1, 1]


def test_time_saved_carries_over_into_the_next_period():
    tc = parse_time_control("40/5400:1800")
    assert remaining(tc, 40, 600.0) == 5400 + 1800 - 600


def test_a_repeating_period_adds_its_time_again():
    tc = TimeControl.from_pgn("40/7200")
    assert tc.repeats
    assert [tc.added_on_press(n) for n in (39, 40, 79, 80)] == [0, 7200, 0, 7200]
    assert remaining(tc, 80, 10000.0) == 3 * 7200 - 10000


def test_delay_main_time_runs_only_after_the_delay():
    tc = parse_time_control("G/60 d5")
    # Moves within the delay cost nothing (6.2b) ...
    assert remaining(tc, 3, [2.0, 5.0, 4.9]) == 3600
    # ... and longer ones only cost the time beyond it.
    assert remaining(tc, 2, [12.0, 5.0], thinking=7.0) == 3600 - 7 - 2
    # There is no increment to bank: fast moves never raise the clock.
    assert all(tc.added_on_press(n) == 0 for n in range(1, 60))


def test_delay_needs_move_by_move_times():
    tc = parse_time_control("G/60 d5")
    with pytest.raises(ValueError, match="move by move"):
        remaining(tc, 2, 30.0)
    with pytest.raises(ValueError, match="3 move times given for 2 moves"):
        remaining(tc, 2, [1.0, 2.0, 3.0])


def test_moves_made_and_period_of_the_player_to_move():
    tc = parse_time_control("40/5400:1800+30")
    assert [moves_made_by("white", p) for p in (0, 1, 2, 79, 80)] == [0, 1, 1, 40, 40]
    assert [moves_made_by("black", p) for p in (0, 1, 2, 79, 80)] == [0, 0, 1, 39, 40]
    assert period_for_ply(tc, 78) == 0  # White to play move 40
    assert period_for_ply(tc, 79) == 0  # Black to play move 40
    assert period_for_ply(tc, 80) == 1  # White to play move 41


def test_last_period_for_both_flags_6_11():
    tc = parse_time_control("40/5400:1800+30")
    assert not is_last_period(tc, 50)  # both flags in the first period: play on
    assert is_last_period(tc, 80)  # in the last period: a draw
    assert is_last_period(parse_time_control("5+3"), 0)
    assert not is_last_period(TimeControl.from_pgn("40/7200"), 200)
    assert is_last_period(None, 10)


def test_penalties_go_to_the_opponent_of_the_offender():
    times = {"white": 300.0, "black": 200.0}
    assert apply_penalty(times, "black", ILLEGAL_MOVE_PENALTY) == {"white": 300, "black": 320}
    assert apply_penalty(times, "white", INCORRECT_CLAIM_PENALTY) == {"white": 480, "black": 200}
    assert times == {"white": 300.0, "black": 200.0}
    with pytest.raises(ValueError):
        apply_penalty(times, "red", 120)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        apply_penalty(times, "white", -120)


# --- properties -------------------------------------------------------------------

seconds = st.integers(min_value=1, max_value=3 * 3600).map(float)
small = st.integers(min_value=0, max_value=60).map(float)


@st.composite
def periods(draw, last: bool) -> Period:
    mode = draw(st.sampled_from(["plain", "increment", "delay"]))
    return Period(
        seconds=draw(seconds),
        moves=None if last and draw(st.booleans()) else draw(st.integers(1, 60)),
        increment=draw(small) if mode == "increment" else 0.0,
        delay=draw(small) if mode == "delay" else 0.0,
    )


@st.composite
def time_controls(draw) -> TimeControl:
    count = draw(st.integers(1, 3))
    items = [draw(periods(last=False)) for _ in range(count - 1)]
    return TimeControl((*items, draw(periods(last=True))))


@given(time_controls())
def test_pgn_tag_round_trips(tc):
    assert TimeControl.from_pgn(tc.to_pgn()) == tc


@given(time_controls(), st.lists(small, max_size=120), small)
def test_clock_is_credit_minus_time_beyond_the_delay(tc, move_times, thinking):
    n = len(move_times)
    credited = tc.initial_seconds() + sum(tc.added_on_press(k) for k in range(1, n + 1))
    used = sum(max(0.0, t - tc.period_of(k).delay) for k, t in enumerate(move_times, 1))
    used += max(0.0, thinking - tc.period_of(n + 1).delay)
    assert remaining(tc, n, move_times, thinking) == pytest.approx(credited - used)


def opening_moves(tc: TimeControl, up_to: int) -> set[int]:
    """The move numbers that open a period, counted out by hand."""
    opens, first = set(), 1
    for period in tc.periods:
        opens.add(first)
        if period.moves is None:
            return opens
        first += period.moves
    while first <= up_to:  # the last period repeats
        opens.add(first)
        first += tc.periods[-1].moves
    return opens


@given(time_controls(), st.integers(1, 300))
def test_periods_never_go_back_and_open_with_their_time(tc, move_number):
    index = tc.period_index(move_number)
    assert index <= tc.period_index(move_number + 1)
    period = tc.periods[index]
    expected = (period.seconds if move_number in opening_moves(tc, 400) else 0.0) + period.increment
    assert tc.credit(move_number) == expected


@given(time_controls(), st.lists(small, max_size=80))
def test_a_delay_saves_at_most_the_delay_of_each_move(tc, move_times):
    """6.2b: the delay only postpones the main time; it is never banked."""
    without = TimeControl(
        tuple(Period(p.seconds, p.moves, p.increment or 0.0, 0.0) for p in tc.periods)
    )
    n = len(move_times)
    saved = remaining(tc, n, move_times) - remaining(without, n, move_times)
    most = sum(min(t, tc.period_of(k).delay) for k, t in enumerate(move_times, 1))
    assert saved == pytest.approx(most)
    assert saved >= 0


@given(
    st.floats(0, 20000, allow_nan=False),
    st.floats(0, 20000, allow_nan=False),
    st.sampled_from(["white", "black"]),
    st.floats(1, 600, allow_nan=False),
)
def test_a_penalty_changes_only_the_receivers_time(white, black, to, extra):
    after = apply_penalty({"white": white, "black": black}, to, extra)
    other = "black" if to == "white" else "white"
    assert after[to] == pytest.approx({"white": white, "black": black}[to] + extra)
    assert after[other] == {"white": white, "black": black}[other]
