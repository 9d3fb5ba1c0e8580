"""The queue policy on simulated time: what a blind player hears, in which order."""

from __future__ import annotations

import itertools

from daemon.speech.queue import Announcement, SpeechQueue

_ids = itertools.count(1)


def item(kind: str, text: str, t: float = 0.0, **kw) -> Announcement:
    return Announcement(id=next(_ids), kind=kind, written=text, spoken=text, created=t, **kw)


def heard(queue: SpeechQueue, now: float = 0.0) -> list[str]:
    """Play everything left, in order, each finishing at once."""
    out = []
    while (current := queue.next(now)) is not None:
        out.append(current.written)
        queue.finished(current)
    return out


def test_a_new_move_cancels_queued_moves_and_interrupts_the_playing_one() -> None:
    queue = SpeechQueue()
    first = item("move", "Bauer Eva vier", ply=1)
    queue.offer(first, 0.0)
    assert queue.next(0.1) is first  # playing
    second = item("move", "Bauer Eva fuenf", ply=2, t=0.5)
    decision = queue.offer(second, 0.5)
    assert decision.interrupt is first
    queue.finished(first)
    third = item("move", "Springer Felix drei", ply=3, t=0.6)
    decision = queue.offer(third, 0.6)
    assert [c.written for c in decision.cancelled] == ["Bauer Eva fuenf"]
    assert heard(queue, 0.7) == ["Springer Felix drei"]


def test_an_irregularity_is_never_cancelled_by_a_later_move() -> None:
    queue = SpeechQueue()
    queue.offer(item("important", "Unmöglicher Zug. Springer zurück auf Gustav eins"), 0.0)
    playing = queue.next(0.0)
    assert playing is not None
    queue.offer(item("important", "Figur verschoben: Turm auf Anna eins"), 0.1)
    decision = queue.offer(item("move", "Springer Felix drei", ply=1), 0.2)
    assert decision.interrupt is None  # the irregularity playing is not cut
    assert decision.cancelled == []
    queue.finished(playing)
    assert heard(queue, 100.0) == ["Figur verschoben: Turm auf Anna eins", "Springer Felix drei"]


def test_an_answer_goes_first_but_does_not_cut_what_plays() -> None:
    queue = SpeechQueue()
    queue.offer(item("move", "Bauer Eva vier", ply=1), 0.0)
    playing = queue.next(0.0)
    queue.offer(item("important", "Position wiederhergestellt"), 0.1)
    decision = queue.offer(item("answer", "Letzter Zug: Bauer Eva vier"), 0.2)
    queue.offer(item("answer", "Zug 1, Schwarz am Zug"), 0.3)
    assert decision.interrupt is None
    queue.finished(playing)
    assert heard(queue, 0.4) == [
        "Letzter Zug: Bauer Eva vier",
        "Zug 1, Schwarz am Zug",  # answers in the order asked
        "Position wiederhergestellt",
    ]


def test_a_correction_replaces_the_move_it_corrects() -> None:
    queue = SpeechQueue()
    wrong = item("move", "Springer Felix drei", ply=5)
    queue.offer(wrong, 0.0)
    assert queue.next(0.0) is wrong
    correction = item("move", "Korrektur: Springer Eva zwei", ply=5)
    decision = queue.offer(correction, 0.3)
    assert decision.interrupt is wrong
    queue.finished(wrong)
    assert heard(queue, 0.4) == ["Korrektur: Springer Eva zwei"]


def test_a_takeback_cancels_only_the_moves_it_took_back() -> None:
    queue = SpeechQueue()
    queue.offer(item("important", "Unmöglicher Zug. Bauer zurück auf Eva zwei"), 0.0)
    queue.offer(item("move", "Dame Hector fuenf", ply=4), 0.1)
    decision = queue.offer(item("important", "Zug zurückgenommen", takeback_ply=4), 0.2)
    assert [c.written for c in decision.cancelled] == ["Dame Hector fuenf"]
    assert heard(queue, 0.3) == [
        "Unmöglicher Zug. Bauer zurück auf Eva zwei",
        "Zug zurückgenommen",
    ]


def test_stale_answers_expire_but_moves_and_irregularities_do_not() -> None:
    queue = SpeechQueue(stale_after=10.0)
    queue.offer(item("move", "Turm Anna eins", ply=9, t=0.0), 0.0)
    queue.offer(item("answer", "Weiß 5 Minuten 0 Sekunden", t=0.0), 0.0)
    queue.offer(item("info", "Remis kann beansprucht werden", t=0.0), 0.0)
    queue.offer(item("important", "Zeit abgelaufen: Weiß", t=0.0), 0.0)
    # The engine was stuck for a minute: the clock answer is wrong by now.
    assert heard(queue, 60.0) == ["Turm Anna eins", "Zeit abgelaufen: Weiß"]
    assert sorted(x.written for x in queue.expired) == [
        "Remis kann beansprucht werden",
        "Weiß 5 Minuten 0 Sekunden",
    ]


def test_info_goes_stale_with_the_next_move() -> None:
    queue = SpeechQueue()
    queue.offer(item("info", "Position wiederhergestellt"), 0.0)
    decision = queue.offer(item("move", "Bauer Eva vier", ply=1), 0.1)
    assert [c.written for c in decision.cancelled] == ["Position wiederhergestellt"]
    assert queue.idle is False
    assert heard(queue) == ["Bauer Eva vier"]
    assert queue.idle
