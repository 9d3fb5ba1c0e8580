"""The schedule on simulated time: what a blind player hears, in which order."""

from __future__ import annotations

import itertools

import pytest

from daemon.speech.schedule import (
    Announcement,
    Pacing,
    SpeechSchedule,
    quicker_rate,
    spoken_seconds,
)

_ids = itertools.count(1)


def item(kind: str, text: str = "", t: float = 0.0, **kw) -> Announcement:
    return Announcement(id=next(_ids), kind=kind, created=t, text=text, **kw)


def answer(phrases: list[tuple[str, str]], t: float = 0.0) -> Announcement:
    return item(
        "answer", "answer", t, compose=lambda: phrases, resume_text="Weiter:",
        dropped_text="Stellung abgebrochen",
    )  # fmt: skip


def heard(schedule: SpeechSchedule, now: float = 0.0) -> list[str]:
    """Play everything left, in order, each finishing at once."""
    out = []
    while (phrase := schedule.next(now)) is not None:
        out.append(phrase.written)
        schedule.done(phrase, now)
    return out


def test_a_move_waits_for_the_move_playing_and_waiting_moves_are_said_together() -> None:
    schedule = SpeechSchedule()
    schedule.offer(item("move", "Bauer Eva vier", ply=1), 0.0)
    playing = schedule.next(0.0)
    assert playing is not None and playing.written == "Bauer Eva vier"
    for ply, text in enumerate(["Bauer Cesar fuenf", "Springer Felix drei", "Dame Bella sechs"], 2):
        schedule.offer(item("move", text, ply=ply), 0.1 * ply)
    schedule.done(playing, 1.0)  # heard in full: nothing cut it
    together = schedule.next(1.0)
    assert together is not None
    assert together.written == "Bauer Cesar fuenf; Springer Felix drei; Dame Bella sechs"
    assert together.plies == (2, 3, 4)
    schedule.done(together, 2.0)
    assert [o.outcome for o in schedule.outcomes] == ["heard", "heard"]
    assert schedule.outcomes[1].plies == (2, 3, 4)


def test_at_most_max_combined_moves_in_one_phrase() -> None:
    schedule = SpeechSchedule(pacing=Pacing(max_combined=2))
    for ply in range(1, 6):
        schedule.offer(item("move", f"m{ply}", ply=ply), 0.0)
    assert heard(schedule) == ["m1; m2", "m3; m4", "m5"]


def test_the_budget_follows_the_pace_of_the_game() -> None:
    schedule = SpeechSchedule(pacing=Pacing(share=0.5, min_budget=0.4, pace_window=4))
    assert schedule.budget(1) is None  # no pace yet: the configured rate
    for t in (0.0, 30.0, 50.0):
        schedule.note_move(t)
    assert schedule.budget(1) == pytest.approx(12.5)  # classical: no hurry
    for t in (52.0, 54.0, 56.0, 58.0):
        schedule.note_move(t)
    assert schedule.budget(1) == pytest.approx(1.0)  # blitz
    assert schedule.budget(2) == pytest.approx(2.0)
    for t in (58.5, 59.0, 59.5, 60.0):
        schedule.note_move(t)
    assert schedule.budget(1) == pytest.approx(0.4)  # bullet: the floor


def test_quicker_rate_fits_the_budget_within_the_limit() -> None:
    assert quicker_rate(1.0, None, 150, 360) is None
    assert quicker_rate(1.0, 1.2, 150, 360) is None
    assert quicker_rate(2.0, 1.0, 150, 360) == 320  # 150 * 2 * 1.05, in steps of 10
    assert quicker_rate(4.0, 1.0, 150, 360) == 360  # the limit
    assert quicker_rate(4.0, 1.0, 150, 150) is None  # never quicker when so configured


def test_an_answer_gives_way_to_a_move_at_the_phrase_boundary_then_goes_on() -> None:
    schedule = SpeechSchedule()
    schedule.offer(answer([("w:K", "Weiß: König Gustav eins"), ("w:Q", "Dame David eins")]), 0.0)
    first = schedule.next(0.0)
    assert first is not None and first.written == "Weiß: König Gustav eins"
    schedule.offer(item("move", "Bauer Eva vier", ply=1), 0.5)  # not cut: waits for the phrase
    schedule.done(first, 1.0)
    assert heard(schedule, 1.0) == ["Bauer Eva vier", "Weiter: Dame David eins"]
    assert schedule.idle


def test_an_answer_interrupted_too_often_is_dropped_and_the_player_told() -> None:
    schedule = SpeechSchedule(max_interruptions=1)
    phrases = [(str(n), f"phrase {n}") for n in range(5)]
    schedule.offer(answer(phrases), 0.0)
    said = []
    for ply in (1, 2):
        phrase = schedule.next(0.0)
        assert phrase is not None
        said.append(phrase.written)
        schedule.offer(item("move", f"move {ply}", ply=ply), 0.1)
        schedule.done(phrase, 0.2)
        move = schedule.next(0.2)
        assert move is not None
        said.append(move.written)
        schedule.done(move, 0.3)
    said += heard(schedule, 0.3)
    assert said == ["phrase 0", "move 1", "Weiter: phrase 1", "move 2", "Stellung abgebrochen"]
    dropped = [o for o in schedule.outcomes if o.outcome == "dropped"]
    assert len(dropped) == 1 and dropped[0].reason == "interrupted by moves"


def test_an_answer_is_composed_when_each_phrase_is_said() -> None:
    schedule = SpeechSchedule()
    seconds = {"white": 300}
    schedule.offer(
        item("answer", "clock", compose=lambda: [("white", f"Weiß {seconds['white']}")]), 0.0
    )
    schedule.offer(item("move", "Bauer Eva vier", ply=1), 0.0)  # a move first
    move = schedule.next(0.0)
    assert move is not None
    seconds["white"] = 290  # the clock ran while the move was said
    schedule.done(move, 1.0)
    assert heard(schedule, 1.0) == ["Weiß 290"]


def test_irregularities_keep_their_place_among_moves_and_are_never_dropped() -> None:
    schedule = SpeechSchedule(stale_after=10.0)
    schedule.offer(item("move", "Turm Anna eins", ply=9), 0.0)
    schedule.offer(item("important", "Unmöglicher Zug. Springer zurück auf Gustav eins"), 0.1)
    schedule.offer(item("move", "Springer Felix drei", ply=10), 0.2)
    schedule.offer(answer([("c", "Weiß 5 Minuten")]), 0.3)
    schedule.offer(item("info", "Remis kann beansprucht werden"), 0.3)
    # The engine was stuck for a minute: the clock answer and the info are out of date.
    assert heard(schedule, 60.0) == [
        "Turm Anna eins",
        "Unmöglicher Zug. Springer zurück auf Gustav eins",
        "Springer Felix drei",
        "Stellung abgebrochen",  # the player is told, never left waiting
    ]
    dropped = sorted(o.text for o in schedule.outcomes if o.outcome == "dropped")
    assert dropped == ["Remis kann beansprucht werden", "answer"]


def test_a_correction_of_a_move_not_yet_said_replaces_it() -> None:
    schedule = SpeechSchedule()
    schedule.offer(item("move", "Springer Felix drei", ply=5), 0.0)
    schedule.offer(item("move", "Springer Eva zwei", ply=5), 0.3)
    assert heard(schedule, 0.4) == ["Springer Eva zwei"]
    assert [(o.outcome, o.reason) for o in schedule.outcomes[:1]] == [("cancelled", "corrected")]


def test_a_takeback_cancels_only_the_moves_it_took_back() -> None:
    schedule = SpeechSchedule()
    schedule.offer(item("important", "Unmöglicher Zug. Bauer zurück auf Eva zwei"), 0.0)
    schedule.offer(item("move", "Dame Hector fuenf", ply=4), 0.1)
    schedule.offer(item("important", "Zug zurückgenommen", takeback_ply=4), 0.2)
    assert heard(schedule, 0.3) == [
        "Unmöglicher Zug. Bauer zurück auf Eva zwei",
        "Zug zurückgenommen",
    ]
    assert next(o.outcome for o in schedule.outcomes) == "cancelled"


def test_info_goes_stale_with_the_next_move() -> None:
    schedule = SpeechSchedule()
    schedule.offer(item("info", "Position wiederhergestellt"), 0.0)
    schedule.offer(item("move", "Bauer Eva vier", ply=1), 0.1)
    assert schedule.idle is False
    assert heard(schedule) == ["Bauer Eva vier"]
    assert schedule.idle


def test_in_fast_play_an_answer_takes_a_gap_it_fits_and_waits_out_a_busy_moment() -> None:
    schedule = SpeechSchedule(max_rate=360)
    for t in (0.0, 2.0, 4.0, 6.0):  # blitz: a move every 2 s
        schedule.note_move(t)
    schedule.offer(answer([("w", "Weiß 4 Minuten")]), 6.0)
    # just after a move: 1.7 s before the next may come, and it may wait 0.6 s
    assert schedule.gap(6.1) == pytest.approx(0.9 * 2.0 - 0.1 + 0.6)
    phrase = schedule.next(6.1)
    assert phrase is not None and phrase.budget == 0.0  # said at max_rate
    assert quicker_rate(1.0, phrase.budget, 150, 360) == 360
    schedule.done(phrase, 6.9)
    schedule.offer(answer([("b", "Weiß: Koenig Gustav eins, Dame David eins")]), 7.0)
    assert schedule.next(7.6) is None  # too long for what is left before the next move
    assert schedule.wake_at(7.6) == pytest.approx(6.0 + 4.0)  # a pause: then at leisure
    late = schedule.next(10.0)
    assert late is not None and late.budget is None


def test_the_next_move_is_expected_after_the_shortest_recent_interval() -> None:
    schedule = SpeechSchedule(max_rate=360)
    for t in (0.0, 3.0, 4.2, 7.0, 9.5):  # intervals 3.0, 1.2, 2.8, 2.5: median 2.65
        schedule.note_move(t)
    assert schedule.pace == pytest.approx(2.65)
    # A move may come 1.2 s after the last one: an answer phrase of about 1 s at 360
    # words per minute started 0.3 s after it would hold that move up.
    assert schedule.gap(9.8) == pytest.approx(0.9 * 1.2 - 0.3 + 0.6)
    schedule.offer(answer([("w", "Weiß 4 Minuten 27 Sekunden")]), 9.6)
    assert schedule.next(9.8) is None


def test_the_players_own_thinking_time_is_a_gap_for_answers() -> None:
    """Only the opponent's moves said: after his move, the next move said is two
    half-moves away, so a clock answer fits where it would not with both sides."""
    text = "Weiß 4 Minuten 27 Sekunden, Schwarz 3 Minuten"
    both, opponent = SpeechSchedule(max_rate=360), SpeechSchedule(max_rate=360)
    for t in (0.0, 1.5, 3.0, 4.5):
        both.note_move(t, spoken_in=1)
        opponent.note_move(t, spoken_in=2)
    for schedule in (both, opponent):
        schedule.offer(answer([("c", text)]), 4.6)
    assert both.next(4.7) is None
    assert opponent.gap(4.7) == pytest.approx(0.9 * 1.5 * 2 - 0.2 + 0.6)
    said = opponent.next(4.7)
    assert said is not None and said.written == text
    nobody = SpeechSchedule()
    for t in (0.0, 1.5, 3.0):
        nobody.note_move(t, spoken_in=None)  # no move is said: answers at leisure
    assert nobody.gap(3.1) is None


def test_a_move_that_waited_is_said_quicker_to_catch_up() -> None:
    schedule = SpeechSchedule(pacing=Pacing(share=0.5, min_budget=0.45, lag_target=1.0))
    for t in (0.0, 2.0, 4.0, 6.0):
        schedule.note_move(t)
    schedule.offer(item("move", "Turm Felix drei", t=6.0, ply=4), 6.0)
    on_time = schedule.next(6.05)
    assert on_time is not None and on_time.budget == pytest.approx(0.95)  # 1.0 s lag target
    schedule.done(on_time, 6.6)
    schedule.offer(item("move", "Dame Cesar sieben", t=8.0, ply=5), 8.0)
    late = schedule.next(8.7)  # waited 0.7 s behind a phrase
    assert late is not None and late.budget == pytest.approx(0.45)  # the floor
    in_classical = SpeechSchedule()
    for t in (0.0, 30.0, 60.0):
        in_classical.note_move(t)
    in_classical.offer(item("move", "Turm Felix drei", t=60.0, ply=3), 60.0)
    unhurried = in_classical.next(62.0)
    assert unhurried is not None and unhurried.budget == pytest.approx(15.0)


def test_while_an_answer_waits_for_a_gap_the_moves_are_said_at_max_rate() -> None:
    schedule = SpeechSchedule(max_rate=360)
    for t in (0.0, 2.0, 4.0, 6.0):
        schedule.note_move(t)
    schedule.offer(item("move", "Turm Felix drei", t=6.0, ply=4), 6.0)
    alone = schedule.next(6.05)
    assert alone is not None and alone.budget == pytest.approx(0.95)
    schedule.done(alone, 6.7)
    schedule.note_move(8.0)
    schedule.offer(answer([("w", "Weiß: Koenig Gustav eins, Dame David eins")]), 8.0)
    schedule.offer(item("move", "Dame Cesar sieben", t=8.0, ply=5), 8.0)
    hurried = schedule.next(8.05)
    assert hurried is not None and hurried.kind == "move" and hurried.budget == 0.0
    assert quicker_rate(1.0, hurried.budget, 150, 360) == 360


def test_numbers_count_as_the_words_they_are_said_as() -> None:
    assert spoken_seconds("Zug 57, Schwarz am Zug", 360) > spoken_seconds(
        "Zug fünf, Schwarz am Zug", 360
    )
    # Measured with espeak-ng's German voice at 360: 1.44 s; the estimate errs long.
    assert spoken_seconds("Weiß 3 Minuten 55 Sekunden", 360) >= 1.44


def test_a_message_in_parts_gives_way_to_a_move_at_the_next_boundary() -> None:
    schedule = SpeechSchedule()
    message = item(
        "important", "Unmöglicher Zug. Springer zurück auf Gustav acht. Unmögliche Züge: 2",
        parts=("Unmöglicher Zug", "Springer zurück auf Gustav acht", "Unmögliche Züge: 2"),
        fix_parts=frozenset({1}), resume_text="Weiter, Unmöglicher Zug:",
    )  # fmt: skip
    schedule.offer(message, 0.0)
    first = schedule.next(0.0)
    assert first is not None and first.written == "Unmöglicher Zug" and not first.last
    schedule.offer(item("move", "Bauer Eva fuenf", t=0.5, ply=2), 0.5)  # while it plays
    schedule.done(first, 1.0)
    # The move at the boundary; then the rest without the fix (the board was put
    # right, or the move would not have been recognised), with its context again.
    assert heard(schedule, 1.0) == [
        "Bauer Eva fuenf",
        "Weiter, Unmöglicher Zug: Unmögliche Züge: 2",
    ]
    outcomes = [(o.outcome, o.text) for o in schedule.outcomes]
    assert ("dropped", "Springer zurück auf Gustav acht") in outcomes
    assert outcomes[-1] == ("heard", message.text)
    assert schedule.idle


def test_a_message_in_parts_with_no_move_waiting_is_said_on_in_one_go() -> None:
    schedule = SpeechSchedule()
    parts = ("Grundstellung falsch: Dame Weiß auf David eins", "Turm Weiß auf Anna eins")
    schedule.offer(item("important", ", ".join(parts), parts=parts, fix_parts=frozenset({1})), 0)
    assert heard(schedule) == list(parts)
    assert [o.outcome for o in schedule.outcomes] == ["heard"]


def test_a_burst_of_events_is_no_pace() -> None:
    schedule = SpeechSchedule()
    for t in (5.0, 5.01, 5.02, 5.03):  # a resumed game's moves folded at once
        schedule.note_move(t)
    assert schedule.pace is None and schedule.budget(1) is None


def reading(phrases: list[tuple[str, ...]], t: float = 0.0) -> Announcement:
    """A board reading: patient, its phrases with all four forms (``Spoken``)."""
    return item("answer", "Stellung", t, compose=lambda: phrases, patient=True)


SQUARES = [  # (key, text, after an interruption, when it follows in one utterance)
    ("white:K:0", "Weiß: Koenig Gustav eins", "Weiß: Koenig Gustav eins", ". Weiß: Koenig"),
    ("white:P:0", "Bauern Anna zwei", "Weiß: Bauern Anna zwei", ". Bauern Anna zwei"),
    ("white:P:1", "Bella zwei", "Weiß: Bauern Bella zwei", ", Bella zwei"),
    ("white:P:2", "Cesar zwei", "Weiß: Bauern Cesar zwei", ", Cesar zwei"),
    ("white:P:3", "David zwei", "Weiß: Bauern David zwei", ", David zwei"),
]  # fmt: skip


def test_a_reading_goes_on_beyond_the_gap_and_gives_way_to_a_move_at_once() -> None:
    """Blitz, both sides said: the gap after a move holds about one square. A board
    reading's phrase that does not fit it is still said, but a move that comes
    meanwhile cuts it at once (the move is never held up by it), and the square is
    said again whole, with its colour, after the move."""
    schedule = SpeechSchedule(max_rate=300)
    for t in (0.0, 1.2, 2.4, 3.6):  # a move every 1.2 s
        schedule.note_move(t)
    schedule.offer(reading(SQUARES), 3.6)
    first = schedule.next(3.7)  # 1.08 - 0.1 + 0.6 s: the king, and no more
    assert first is not None and first.written == "Weiß: Koenig Gustav eins"
    assert not first.gives_way and first.keys == ("white:K:0",)
    schedule.done(first, 4.7)
    beyond = schedule.next(4.7)  # the next move is due: said all the same
    assert beyond is not None and beyond.written == "Bauern Anna zwei" and beyond.gives_way
    schedule.note_move(4.8)
    schedule.offer(item("move", "Springer Felix drei", t=4.8, ply=8), 4.8)
    assert schedule.give_way(4.8)  # cut at once: the move first
    schedule.done(beyond, 4.8, heard=False, reason="cut")
    move = schedule.next(4.8)
    assert move is not None and move.written == "Springer Felix drei"
    schedule.done(move, 5.5)
    again = schedule.next(5.5)  # the square cut is said again, with its colour
    assert again is not None and again.written == "Weiß: Bauern Anna zwei"
    outcomes = [(o.outcome, o.kind) for o in schedule.outcomes]
    assert ("cut", "answer") in outcomes and ("dropped", "answer") not in outcomes


def test_a_reading_phrase_about_to_end_is_not_cut_and_nothing_else_is() -> None:
    schedule = SpeechSchedule(max_rate=300)
    for t in (0.0, 1.2, 2.4, 3.6):
        schedule.note_move(t)
    schedule.offer(reading(SQUARES[1:]), 3.6)
    schedule.done(schedule.next(3.7), 4.9)  # type: ignore[arg-type]
    beyond = schedule.next(4.9)
    assert beyond is not None and beyond.gives_way
    schedule.offer(item("move", "Springer Felix drei", t=5.0, ply=8), 5.0)
    assert schedule.give_way(5.0)
    ends = 4.9 + spoken_seconds(beyond.written, 300)
    assert not schedule.give_way(ends - 0.2)  # due to end: the move waits that little
    clock = SpeechSchedule(max_rate=300)  # any other answer: at phrase boundaries only
    for t in (0.0, 1.2, 2.4, 3.6):
        clock.note_move(t)
    clock.offer(answer([("w", "Weiß: 4 Minuten 27 Sekunden, Schwarz: 3 Minuten")]), 3.6)
    assert clock.next(3.7) is None


def test_a_reading_says_as_many_squares_as_the_gap_holds_and_three_at_leisure() -> None:
    pawns = [
        (f"white:P:{n}", text if n else f"Weiß: Bauern {text}", f"Weiß: Bauern {text}",
         f", {text}" if n else f". Weiß: Bauern {text}")
        for n, text in enumerate(["Anna zwei", "Bella zwei", "Cesar zwei", "David zwei"])
    ]  # fmt: skip
    slow = SpeechSchedule(max_rate=300)
    slow.offer(reading(pawns), 0.0)
    said = heard(slow)
    assert said == ["Weiß: Bauern Anna zwei, Bella zwei, Cesar zwei", "David zwei"]
    fast = SpeechSchedule(max_rate=300)
    for t in (0.0, 2.0, 4.0, 6.0):  # 2 s a move: room for three squares, not four
        fast.note_move(t)
    fast.offer(reading(pawns), 6.0)
    phrase = fast.next(6.1)
    assert phrase is not None and phrase.keys == ("white:P:0", "white:P:1", "white:P:2")
    assert spoken_seconds(phrase.written, 300) <= fast.gap(6.1)  # type: ignore[operator]
    assert not phrase.gives_way
