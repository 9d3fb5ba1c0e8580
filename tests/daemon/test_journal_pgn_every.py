"""storage.pgn_every: a hall's PGN files rewritten now and then, the journal always."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import daemon.storage.journal as journal_module
from daemon.boards.pipeline import JournalSync
from daemon.storage.journal import Journal
from tests.daemon.feed import feed_of_game
from tests.daemon.test_journal import OPENING, pgn_moves


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_pgn_waits_its_interval_the_journal_does_not_and_the_end_is_written_at_once(
    tmp_path: Path, monkeypatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(journal_module.time, "monotonic", clock)
    journal = Journal(tmp_path, fsync=False, pgn_every=10.0)
    feed = feed_of_game(OPENING[:4], result="1-0")
    for event in feed[:3]:  # game start, two moves, one second apart
        journal.append(event)
        journal.sync()
        clock.now += 1.0
    assert [json.loads(line) for line in journal.path.read_text().splitlines()] == feed[:3]
    assert pgn_moves(journal.pgn_path.read_text()) == []  # written at the start only
    assert journal.pgn_wait is not None and 7.0 <= journal.pgn_wait <= 8.0
    clock.now += 8.0
    journal.append(feed[3])
    journal.sync()
    assert pgn_moves(journal.pgn_path.read_text()) == OPENING[:3]  # due: rewritten
    journal.append(feed[4])
    journal.append(feed[5])  # the game's end: the PGN whole at once
    journal.sync()
    assert pgn_moves(journal.pgn_path.read_text()) == OPENING[:4]
    assert '[Result "1-0"]' in journal.pgn_path.read_text()


async def test_a_deferred_pgn_is_written_when_due_without_another_move(tmp_path: Path) -> None:
    journal = Journal(tmp_path, fsync=False, pgn_every=0.2)
    sync = JournalSync(journal, lambda event: None)
    feed = feed_of_game(OPENING[:2])
    for event in feed:
        journal.append(event)
        sync.soon()
        await asyncio.sleep(0)
    assert pgn_moves(journal.pgn_path.read_text()) == []
    for _ in range(100):
        await asyncio.sleep(0.02)
        if pgn_moves(journal.pgn_path.read_text()) == OPENING[:2]:
            break
    assert pgn_moves(journal.pgn_path.read_text()) == OPENING[:2]
    journal.close()
