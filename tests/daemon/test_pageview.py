"""The page reads the board's one record as of the last event on the card
(``daemon.boards.pageview``): never a move the card does not have yet, never a second fold."""

from __future__ import annotations

from collections.abc import Callable

from daemon.boards.pageview import PageView
from daemon.game.events import from_dict
from daemon.game.record import GameRecord
from tests.daemon.feed import feed_of_game

OPENING = ["e2e4", "e7e5", "g1f3", "b8c6"]


class Card:
    """A disk writer held by hand: ``when_durable`` callbacks wait for ``done``."""

    def __init__(self) -> None:
        self.waiting: list[Callable[[], None]] = []

    def when_durable(self, callback: Callable[[], None]) -> None:
        self.waiting.append(callback)

    def done(self) -> None:
        waiting, self.waiting = self.waiting, []
        for callback in waiting:
            callback()


def test_the_page_reads_the_record_as_of_the_last_event_on_the_card() -> None:
    record = GameRecord()
    card = Card()
    shown: list[tuple[str, list[str], str]] = []
    view: PageView

    def show(data: dict) -> None:
        current = view.current()
        shown.append((data["type"], [m.uci for m in current.moves], current.pgn()))

    view = PageView(record, show, card.when_durable)
    feed = feed_of_game(OPENING)
    pgn_after: list[str] = []
    for event in feed:
        view.before_fold()
        record.apply(event)
        view.receive(from_dict(event))
        pgn_after.append(record.pgn())
        # nothing on the card yet: the page reads the game as it was before it all
        assert view.current() is not record and view.current().moves == []
    assert shown == []
    card.done()
    # each event shown with the game as it stood after it, its PGN as it was then
    assert [moves for _, moves, _ in shown] == [OPENING[:n] for n in range(len(feed))]
    assert [pgn for _, _, pgn in shown] == pgn_after
    assert view.current() is record, "once all is on the card, the page reads the record"


def test_without_a_disk_writer_the_page_reads_the_record_itself() -> None:
    record = GameRecord()
    seen: list[GameRecord] = []
    view = PageView(record, lambda data: seen.append(view.current()))
    for event in feed_of_game(OPENING):
        view.before_fold()
        record.apply(event)
        view.receive(from_dict(event))
    assert seen and all(current is record for current in seen)


def test_a_snapshot_keeps_its_game_while_the_record_goes_on_and_takes_its_rejection() -> None:
    record = GameRecord()
    feed = feed_of_game(OPENING)
    for event in feed[:3]:
        record.apply(event)
    before = record.pgn()
    snap = record.snapshot()
    record.apply({"type": "penalty", "t": 2.5, "to": "white", "seconds": 120, "article": "7.5b"})
    for event in feed[3:]:
        record.apply(event)
    snap.apply(feed[-1])  # a snapshot is read, never folded
    assert "Penalty 7.5b" in record.pgn() and "Penalty" not in snap.pgn()
    assert snap.pgn() == before and "2. Nf3" in record.pgn()
    assert snap.board().fen() != record.board().fen()
    assert snap._replayed is None, "the snapshot replayed nothing of its own"
