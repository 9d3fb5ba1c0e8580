"""The hall benchmark's crowd of viewers (``benchmarks.viewers``) goes through a Wi-Fi
blip as phones do: every feed closed and reopened at once, each viewer sent every
board's state anew, and still every move of every board, in order, by the end."""

from __future__ import annotations

import asyncio

import chess

from benchmarks.viewers import Scraped, Seen, follow, scrape
from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings
from daemon.game import events

GAME = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7"]


def moves(ucis: list[str]) -> list[dict[str, object]]:
    board = chess.Board()
    feed: list[dict[str, object]] = [events.GameStart(t=0.0, fen=board.fen()).to_dict()]
    for ply, uci in enumerate(ucis, start=1):
        move = chess.Move.from_uci(uci)
        by = "white" if board.turn else "black"
        san = board.san(move)
        board.push(move)
        feed.append(events.Move(t=float(ply), ply=ply, uci=uci, san=san, fen=board.fen(),
                                by=by, speech=san).to_dict())  # fmt: skip
    return feed


async def until(test, seconds: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + seconds
    while not test():
        assert asyncio.get_running_loop().time() < deadline, "not in time"
        await asyncio.sleep(0.05)


async def test_viewers_reopen_their_feeds_at_a_storm_and_miss_no_move():
    settings = BroadcastSettings(address="127.0.0.1", port=0,
                                 boards=[BoardSettings(id="1"), BoardSettings(id="2")])  # fmt: skip
    broadcaster = Broadcaster(settings, start_seq=0)
    await broadcaster.start()
    storms, stop = asyncio.Event(), asyncio.Event()
    seen = [Seen() for _ in range(3)]
    crowd = asyncio.create_task(
        follow(f"http://127.0.0.1:{broadcaster.port}", seen, "/", storms, stop)
    )
    try:
        await until(lambda: all(s.messages for s in seen))  # each has its snapshot
        feed = {board: moves(GAME) for board in ("1", "2")}
        for board, events_of in feed.items():
            for event in events_of[:5]:
                broadcaster.publish(board, event)
        await until(lambda: all(len(s.moves.get("2", [])) == 4 for s in seen))
        storms.set()  # every feed closed ...
        storms.clear()
        for board, events_of in feed.items():  # ... while these are published
            for event in events_of[5:8]:
                broadcaster.publish(board, event)
        await until(lambda: all(s.reconnects == 1 for s in seen))
        for board, events_of in feed.items():
            for event in events_of[8:]:
                broadcaster.publish(board, event)
        await until(lambda: all(s.moves.get(b) == GAME for s in seen for b in feed))
    finally:
        stop.set()
        await crowd
        await broadcaster.stop()
    for viewer in seen:
        assert not viewer.error and viewer.page_ok
        assert all(len(viewer.moves_at[b]) == len(GAME) for b in feed), "a time for each move"


async def test_scrapers_read_the_state_and_the_pgn_in_turn_until_stopped():
    """The hall's scrapers (``--scrapers``): each polls ``/state.json`` and
    ``/game.pgn`` in turn, and a read the server refuses counts as failed."""
    settings = BroadcastSettings(address="127.0.0.1", port=0, boards=[BoardSettings(id="1")])
    broadcaster = Broadcaster(settings, start_seq=0)
    await broadcaster.start()
    for event in moves(GAME):
        broadcaster.publish("1", event)
    url = f"http://127.0.0.1:{broadcaster.port}"
    stop = asyncio.Event()
    scraped, refused = Scraped(), Scraped()
    readers = [asyncio.create_task(scrape(url, i, 2, 0.05, scraped, stop)) for i in range(2)]
    readers.append(asyncio.create_task(scrape(url + "/no", 0, 1, 0.05, refused, stop)))
    try:
        await until(lambda: len(scraped.seconds) >= 6 and len(refused.seconds) >= 2)
    finally:
        stop.set()
        await asyncio.gather(*readers)
        await broadcaster.stop()
    assert scraped.failed == 0 and all(s >= 0 for s in scraped.seconds)
    assert refused.failed == len(refused.seconds), "404s are failed reads"
