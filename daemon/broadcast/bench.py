"""How much the broadcast costs the daemon, and how fast viewers see a move.

    python -m daemon.broadcast.bench [--viewers 50] [--moves 60]

1. ``publish`` time per event with many in-process viewers: what the rules
   core's loop pays per event (it never waits for the network).
2. End to end: real SSE viewers over loopback, time from ``publish`` to the
   last viewer having the message.

Numbers, not a test: the machine and its load decide them.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import aiohttp
import chess

from daemon import events
from daemon.broadcast.hub import Hub
from daemon.broadcast.server import Broadcaster
from daemon.broadcast.settings import BroadcastSettings


def _feed(moves: int) -> list[dict]:
    board = chess.Board()
    feed = [events.GameStart(t=0, fen=board.fen()).to_dict()]
    for ply in range(1, moves + 1):
        move = next(iter(sorted(board.legal_moves, key=lambda m: m.uci())))
        san = board.san(move)
        by = "white" if board.turn else "black"
        board.push(move)
        feed.append(
            events.Move(t=ply, ply=ply, uci=move.uci(), san=san, fen=board.fen(), by=by,
                        speech=san, clock={"white": 300.0, "black": 300.0}).to_dict()
        )  # fmt: skip
        if board.is_game_over():
            break
    return feed


async def publish_cost(viewers: int, moves: int, with_state: bool) -> float:
    hub = Hub(BroadcastSettings(client_queue=10_000))
    hub.bind_loop()
    for _ in range(viewers):
        hub.subscribe(with_state=with_state)
    feed = _feed(moves)
    start = time.perf_counter()
    for event in feed:
        hub.publish("1", event)
    return (time.perf_counter() - start) / len(feed)


async def end_to_end(viewers: int, moves: int) -> list[float]:
    broadcaster = Broadcaster(BroadcastSettings(address="127.0.0.1", port=0))
    await broadcaster.start()
    url = f"http://127.0.0.1:{broadcaster.port}/events?state=1"
    feed = _feed(moves)
    received: list[dict[int, float]] = [{} for _ in range(viewers)]
    ready = 0

    async def viewer(index: int, session: aiohttp.ClientSession) -> None:
        nonlocal ready
        async with session.get(url) as response:
            ready += 1
            async for line in response.content:
                if line.startswith(b"id: "):
                    seq = int(line[4:])
                    received[index][seq] = time.perf_counter()
                    if seq == len(feed):
                        return

    sent: dict[int, float] = {}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        tasks = [asyncio.create_task(viewer(i, session)) for i in range(viewers)]
        while ready < viewers:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        for seq, event in enumerate(feed, start=1):
            sent[seq] = time.perf_counter()
            broadcaster.publish("1", event)
            await asyncio.sleep(0.02)  # moves arrive one at a time
        await asyncio.wait_for(asyncio.gather(*tasks), 60)
    await broadcaster.stop()
    return [max(r[seq] for r in received) - sent[seq] for seq in sent]


async def main(viewers: int, moves: int) -> None:
    for count in (0, 100, 1000):
        for with_state in (False, True):
            cost = await publish_cost(count, moves, with_state)
            kind = "page viewers" if with_state else "feed viewers"
            print(f"publish with {count:4d} {kind}: {cost * 1e6:8.1f} µs per event")
    delays = await end_to_end(viewers, moves)
    print(
        f"end to end, {viewers} SSE viewers over loopback, {len(delays)} events: "
        f"median {statistics.median(delays) * 1e3:.1f} ms, "
        f"max {max(delays) * 1e3:.1f} ms until the last viewer has it"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--moves", type=int, default=60)
    options = parser.parse_args()
    asyncio.run(main(options.viewers, options.moves))
