"""The journal: every event on disk, the PGN beside it, resume, and a failing disk."""

from __future__ import annotations

import io
import json
from pathlib import Path

import chess
import chess.pgn

from daemon.storage.journal import Journal, find_unfinished, resume_point
from tests.daemon.feed import feed_of_game, illegal

OPENING = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5c6", "d7c6", "e1g1"]


def pgn_moves(text: str) -> list[str]:
    game = chess.pgn.read_game(io.StringIO(text))
    return [m.uci() for m in game.mainline_moves()]


def test_every_event_is_on_disk_and_the_pgn_follows_each_move(tmp_path: Path) -> None:
    journal = Journal(tmp_path, fsync=True)
    feed = feed_of_game(OPENING)
    for count, event in enumerate(feed, 1):
        assert journal.record_event(event) == []
        on_disk = [json.loads(line) for line in journal.path.read_text().splitlines()]
        assert on_disk == feed[:count]
        assert pgn_moves(journal.pgn_path.read_text()) == OPENING[: count - 1]
    assert not list(tmp_path.glob(".*.tmp")), "the PGN's temporary file was left behind"


def test_append_puts_the_line_on_disk_and_leaves_fsync_and_pgn_to_sync(
    tmp_path: Path, monkeypatch
) -> None:
    """The daemon hands a move to the speech between append and sync: the line must be
    readable from the file at once (a crashed daemon loses nothing), and the slow
    steps (fsync, the PGN) must come only with sync."""
    import daemon.storage.journal as journal_module

    synced: list[int] = []
    real_fsync = journal_module.os.fsync
    monkeypatch.setattr(journal_module.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    journal = Journal(tmp_path, fsync=True)
    feed = feed_of_game(OPENING[:2])
    for event in feed[:2]:
        assert journal.append(event) == []
    assert [json.loads(line) for line in journal.path.read_text().splitlines()] == feed[:2]
    assert synced == [] and not journal.pgn_path.exists()
    assert journal.sync() == []
    assert synced and pgn_moves(journal.pgn_path.read_text()) == OPENING[:1]
    synced.clear()
    assert journal.sync() == []  # nothing new: nothing to do
    assert synced == []
    journal.append(feed[2])
    journal.close()  # closing finishes what append left
    assert pgn_moves(journal.pgn_path.read_text()) == OPENING[:2]


def test_each_game_gets_its_own_journal(tmp_path: Path) -> None:
    journal = Journal(tmp_path, clock=lambda: 1_700_000_000.0)
    for event in feed_of_game(OPENING[:2], result="1-0") + feed_of_game(OPENING[:4]):
        journal.record_event(event)
    files = sorted(tmp_path.glob("*.jsonl"))
    assert len(files) == 2
    assert [len(f.read_text().splitlines()) for f in files] == [4, 5]
    assert len(list(tmp_path.glob("*.pgn"))) == 2


def test_an_unfinished_game_is_found_with_its_moves_and_illegal_counts(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    feed = feed_of_game(OPENING[:5])
    feed.insert(3, illegal(2.5, "black", 1))
    feed.insert(5, illegal(3.5, "white", 1))
    feed.insert(6, illegal(3.6, "white", 2))
    for event in feed:
        journal.record_event(event)
    point = find_unfinished(tmp_path)
    assert point is not None
    assert point.uci_moves == OPENING[:5]
    assert point.illegal_counts == {"white": 2, "black": 1}
    assert point.start_fen == chess.STARTING_FEN
    assert point.last_t == 5.0


def test_a_finished_game_is_not_resumed(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    for event in feed_of_game(OPENING[:3], result="1/2-1/2"):
        journal.record_event(event)
    assert find_unfinished(tmp_path) is None


def test_a_torn_last_line_is_dropped_and_appends_start_clean(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    feed = feed_of_game(OPENING[:4])
    for event in feed:
        journal.record_event(event)
    journal.close()
    with open(journal.path, "a") as handle:
        handle.write('{"t": 5.0, "type": "move", "ply": 5, "uc')  # the power went here
    point = resume_point(journal.path)
    assert point.uci_moves == OPENING[:4]

    resumed = Journal(tmp_path)
    resumed.reopen(point)
    next_move = feed_of_game(OPENING[:5])[-1]
    resumed.record_event(next_move)
    lines = journal.path.read_text().splitlines()
    assert [json.loads(line) for line in lines] == [*feed, next_move]
    assert pgn_moves(resumed.pgn_path.read_text()) == OPENING[:5]


def test_a_failing_directory_is_reported_once_and_nothing_is_lost(tmp_path: Path) -> None:
    blocker = tmp_path / "storage"
    blocker.write_text("a file where the directory should be")
    journal = Journal(blocker)
    feed = feed_of_game(OPENING)
    notices = []
    for event in feed[:5]:
        notices += journal.record_event(event)
    assert [n["code"] for n in notices] == ["storage_error"]
    assert "STORAGE FAILURE" in notices[0]["message"]
    assert journal.record.ply == 4, "the game goes on in memory"

    blocker.unlink()  # the arbiter fixes the disk
    for event in feed[5:]:
        notices += journal.record_event(event)
    assert [n["code"] for n in notices] == ["storage_error", "storage_recovered"]
    on_disk = [json.loads(line) for line in journal.path.read_text().splitlines()]
    assert on_disk == feed
    assert pgn_moves(journal.pgn_path.read_text()) == OPENING
