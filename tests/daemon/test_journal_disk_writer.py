"""The journal's fsync and PGN rewrite on the disk writer's thread (issue 28).

On a Pi's SD card an fsync takes 20-200 ms; on the event loop it held every board's
next press and the bus polling. With the daemon's ``DiskWriter`` the loop goes on
while the card works, the page is told of a move only once it is on the card, and a
card that fails is still said loudly, with nothing lost.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import threading
import time
from pathlib import Path

import chess.pgn

from daemon.storage.diskwriter import DiskWriter
from daemon.storage.journal import Journal, resume_point
from tests.daemon.feed import feed_of_game

OPENING = ["e2e4", "e7e5", "g1f3", "b8c6"]


def slow_card(monkeypatch, seconds: float) -> list[str]:
    """Every fsync sleeps ``seconds`` first; the threads that fsynced are noted."""
    real = os.fsync
    threads: list[str] = []

    def fsync(fd: int) -> None:
        threads.append(threading.current_thread().name)
        time.sleep(seconds)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return threads


async def test_the_loop_goes_on_while_the_card_fsyncs_and_the_page_waits_for_it(
    tmp_path: Path, monkeypatch
) -> None:
    threads = slow_card(monkeypatch, 0.2)
    writer = DiskWriter()
    journal = Journal(tmp_path, fsync=True, writer=writer)
    shown: list[str] = []
    ticks = 0

    async def loop_ticks() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    ticker = asyncio.create_task(loop_ticks())
    try:
        for index, event in enumerate(feed_of_game(OPENING)):
            journal.append(event)
            journal.when_durable(lambda kind=event["type"]: shown.append(kind))
            before = ticks
            journal.sync()  # hands the fsync to the writer: returns at once
            await asyncio.sleep(0.05)
            assert ticks > before, "the event loop waited for the card"
            assert len(shown) <= index, "the page heard of it before the card had it"
        for _ in range(200):
            if len(shown) == 1 + len(OPENING):
                break
            await asyncio.sleep(0.02)
    finally:
        ticker.cancel()
        journal.close()
        writer.stop()
    assert shown == ["game_start"] + ["move"] * len(OPENING)  # in order, every one
    assert threads and all(name == "dgt-bridge-disk" for name in threads), threads
    on_disk = [json.loads(line)["type"] for line in journal.path.read_text().splitlines()]
    assert on_disk.count("move") == len(OPENING)
    game = chess.pgn.read_game(io.StringIO(journal.pgn_path.read_text()))
    assert [m.uci() for m in game.mainline_moves()] == OPENING


async def test_the_page_hears_of_a_move_only_after_its_fsync(tmp_path: Path, monkeypatch) -> None:
    slow_card(monkeypatch, 0.3)
    writer = DiskWriter()
    journal = Journal(tmp_path, fsync=True, writer=writer)
    feed = feed_of_game(OPENING[:1])
    shown: list[float] = []
    try:
        for event in feed:
            journal.append(event)
        started = time.monotonic()
        journal.when_durable(lambda: shown.append(time.monotonic() - started))
        journal.sync()
        assert shown == []  # not yet on the card
        for _ in range(100):
            if shown:
                break
            await asyncio.sleep(0.02)
    finally:
        journal.close()
        writer.stop()
    assert shown and shown[0] >= 0.3


async def test_a_card_that_fails_in_the_writer_is_said_and_everything_written_later(
    tmp_path: Path, monkeypatch
) -> None:
    real = os.fsync
    failing = {"on": True}

    def fsync(fd: int) -> None:
        if failing["on"]:
            raise OSError(5, "Input/output error")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    writer = DiskWriter()
    journal = Journal(tmp_path, fsync=True, writer=writer)
    reported: list[dict] = []
    journal.report_later = reported.extend
    feed = feed_of_game(OPENING)
    try:
        journal.append(feed[0])
        journal.append(feed[1])
        journal.sync()
        for _ in range(100):
            if reported:
                break
            await asyncio.sleep(0.02)
        assert [n["code"] for n in reported] == ["storage_error"]
        failing["on"] = False
        for event in feed[2:]:
            reported.extend(journal.append(event))
            reported.extend(journal.sync())
    finally:
        journal.close()
        writer.stop()
    assert "storage_recovered" in [n["code"] for n in reported]
    on_disk = [json.loads(line) for line in journal.path.read_text().splitlines()]
    assert on_disk == feed  # every event once, in order


async def test_a_chain_s_boards_on_a_slow_card_write_each_journal_once_a_turn(
    tmp_path: Path, monkeypatch
) -> None:
    """Twelve boards' moves interleaved on one writer: while a board's job waits its
    turn it takes in that board's later ones, so the card is asked for fewer fsyncs
    than there are moves, and every board's page still hears of every move, in order.
    Before, only the job at the queue's end took in the next one: with the boards
    interleaved that never happened, each move cost three fsyncs (the journal, the PGN
    and its directory) and the page fell seconds behind the board."""
    threads = slow_card(monkeypatch, 0.02)
    writer = DiskWriter()
    journals = [Journal(tmp_path / f"board-{n}", fsync=True, writer=writer) for n in range(12)]
    feeds = [feed_of_game(OPENING) for _ in journals]
    shown: list[list[str]] = [[] for _ in journals]
    try:
        for step in range(max(len(feed) for feed in feeds)):
            for journal, feed, seen in zip(journals, feeds, shown, strict=True):
                if step < len(feed):
                    journal.append(feed[step])
                    journal.when_durable(lambda k=feed[step]["type"], s=seen: s.append(k))
                    journal.sync()
            await asyncio.sleep(0.005)
        for _ in range(500):
            if all(len(seen) == 1 + len(OPENING) for seen in shown):
                break
            await asyncio.sleep(0.02)
    finally:
        for journal in journals:
            journal.close()
        writer.stop()
    moves = sum(len(feed) for feed in feeds)
    assert all(seen == ["game_start"] + ["move"] * len(OPENING) for seen in shown), shown
    assert len(threads) < moves, f"{len(threads)} fsyncs for {moves} events"
    for journal in journals:
        game = chess.pgn.read_game(io.StringIO(journal.pgn_path.read_text()))
        assert [m.uci() for m in game.mainline_moves()] == OPENING


async def _until(condition, seconds: float = 5.0) -> bool:
    for _ in range(int(seconds / 0.02)):
        if condition():
            return True
        await asyncio.sleep(0.02)
    return condition()


async def test_a_move_costs_the_card_one_fsync_and_the_game_s_end_puts_the_pgn_on_it(
    tmp_path: Path, monkeypatch
) -> None:
    """During a game the page waits for the journal's fsync alone (the PGN is made
    from the journal: written, not fsynced); the game's end fsyncs the PGN too,
    file and directory. Three fsyncs a move made a slow card's queue three times
    as long (``benchmarks.pihall --hall zero2w --slow-card``)."""
    fsyncs = slow_card(monkeypatch, 0.0)
    writer = DiskWriter()
    journal = Journal(tmp_path, fsync=True, writer=writer)
    feed = feed_of_game(OPENING, result="1-0")
    shown: list[str] = []
    try:
        for count, event in enumerate(feed[:-1], 1):  # each on the card before the next
            journal.append(event)
            journal.when_durable(lambda kind=event["type"]: shown.append(kind))
            journal.sync()
            assert await _until(lambda count=count: len(shown) == count)
        assert len(fsyncs) == len(feed) - 1, "one fsync a move: the journal's"
        game = chess.pgn.read_game(io.StringIO(journal.pgn_path.read_text()))
        assert [m.uci() for m in game.mainline_moves()] == OPENING, "the PGN is written"
        journal.append(feed[-1])  # the game's end
        journal.sync()
        assert await _until(lambda: len(fsyncs) == len(feed) + 2)
        await asyncio.sleep(0.1)
        assert len(fsyncs) == len(feed) + 2, "the end: the journal, the PGN and its directory"
    finally:
        journal.close()
        writer.stop()
    assert journal.pgn_path.read_text().rstrip().endswith("1-0")


def test_a_restart_writes_the_pgn_again_from_the_journal(tmp_path: Path) -> None:
    """A PGN not fsynced mid-game may be behind the journal after a power cut: the
    resumed game's first sync makes it afresh from the journal, before any move."""
    journal = Journal(tmp_path, fsync=True)
    for event in feed_of_game(OPENING):
        journal.record_event(event)
    pgn_before_cut = chess.pgn.read_game(io.StringIO(journal.pgn_path.read_text()))
    assert pgn_before_cut is not None
    journal.pgn_path.write_text("")  # the card kept none of the PGN's last writes
    point = resume_point(journal.path)
    assert point is not None

    resumed = Journal(tmp_path, fsync=True)
    resumed.reopen(point)
    resumed.sync()
    game = chess.pgn.read_game(io.StringIO(resumed.pgn_path.read_text()))
    assert game is not None and [m.uci() for m in game.mainline_moves()] == OPENING


async def test_jobs_done_while_the_loop_is_busy_come_back_in_one_wake_in_order(
    tmp_path: Path,
) -> None:
    """A round's first moves on a busy Pi: every board's journal done while the loop
    worked is reported at its next turn, together (one wake, not one a board), each
    board's completion in the order the card did them, one that fails no bar to the
    others."""
    from daemon.storage.diskwriter import DiskJob

    loop = asyncio.get_running_loop()
    wakes = 0
    real = loop.call_soon_threadsafe

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal wakes
        wakes += 1
        return real(*args, **kwargs)

    loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
    writer = DiskWriter()
    done: list[int] = []

    def on_card(board: int):  # type: ignore[no-untyped-def]
        def call(error: OSError | None) -> None:
            assert error is None
            done.append(board)
            if board == 2:
                raise RuntimeError("a completion that fails")

        return call

    try:
        for board in range(6):
            fd = os.open(tmp_path / f"board-{board}.jsonl", os.O_WRONLY | os.O_CREAT)
            writer.submit(DiskJob(key=board, path=tmp_path, fd=fd, done=[on_card(board)]))
        assert writer.drain(10)
        time.sleep(0.05)  # the loop still busy: all six done meanwhile
        await asyncio.sleep(0)
        assert done == list(range(6))
        assert wakes == 1
    finally:
        loop.call_soon_threadsafe = real  # type: ignore[method-assign]
        writer.stop()
