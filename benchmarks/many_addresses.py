"""The page against one machine with many addresses (issue 24): what new viewers
and the token guard see.

    python -m benchmarks.many_addresses [--addresses 15] [--feeds 63] [--max 940]
                                        [--guessers 200] [--guesses 3] [--quick]

1. feeds: ``--addresses`` loopback addresses (127.0.3.x) each open ``--feeds``
   WebSockets against a server of ``--max`` connections (940 is what a Pi's 1024
   files leave), and keep them; then 20 newcomers from 20 other addresses each
   open one. Printed: the attacker's feeds held, the newcomers that got a feed.
2. tokens: ``--guessers`` addresses (127.0.5.x) send ``--guesses`` wrong tokens
   each, twenty addresses at a time. Printed: how many were compared (403) and
   how many answered 429 unread.

Counts, not timings: it runs anywhere with a 127.0.0.0/8 loopback (Linux).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import aiohttp

from benchmarks.common import footer, header
from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings


def _session(source: str) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(source, 0), limit=0))


async def _feed(session: aiohttp.ClientSession, url: str) -> Any:
    """An open WebSocket that had its snapshot, or the refusal's status."""
    try:
        ws = await session.ws_connect(url + "/ws")
        await ws.receive_json(timeout=10)
        return ws
    except aiohttp.WSServerHandshakeError as refused:
        return refused.status


async def feeds(addresses: int, per_address: int, maximum: int) -> str:
    settings = BroadcastSettings(address="127.0.0.1", port=0, max_connections=maximum,
                                 boards=[BoardSettings()])  # fmt: skip
    broadcaster = Broadcaster(settings, start_seq=0)
    await broadcaster.start()
    url = f"http://127.0.0.1:{broadcaster.port}"
    sessions: list[aiohttp.ClientSession] = []
    kept: list[Any] = []  # a WebSocket not referenced is closed by the collector
    try:
        for i in range(addresses):
            sessions.append(_session(f"127.0.3.{i + 1}"))
            kept += await asyncio.gather(*(_feed(sessions[-1], url) for _ in range(per_address)))
        status = broadcaster.status() or {}
        held, live = status.get("connections"), len(broadcaster.hub.subscribers)
        newcomers = 0
        for i in range(20):
            sessions.append(_session(f"127.0.4.{i + 1}"))
            kept.append(await _feed(sessions[-1], url))
            newcomers += not isinstance(kept[-1], int)
    finally:
        for session in sessions:
            await session.close()
        await broadcaster.stop()
    return (f"feeds: {addresses} addresses x {per_address} WebSockets, max_connections "
            f"{maximum}: the server holds {held} connections, {live} of them feeds; "
            f"new viewers with a feed: {newcomers} of 20")  # fmt: skip


async def _guesses(url: str, source: str, count: int) -> list[int]:
    async with _session(source) as session:
        answers = []
        for i in range(count):
            async with session.post(url + "/control/result", json={"result": "1-0"},
                                    headers={"Authorization": f"Bearer x{i}"}) as r:  # fmt: skip
                answers.append(r.status)
        return answers


async def tokens(guessers: int, guesses: int) -> str:
    settings = BroadcastSettings(address="127.0.0.1", port=0, token="s3cret",
                                 boards=[BoardSettings()])  # fmt: skip
    broadcaster = Broadcaster(settings, on_request=lambda board, request: None, start_seq=0)
    await broadcaster.start()
    url = f"http://127.0.0.1:{broadcaster.port}"
    statuses: list[int] = []
    started = time.monotonic()
    try:
        sources = [f"127.0.5.{i + 1}" for i in range(guessers)]
        for first in range(0, guessers, 20):
            batch = sources[first : first + 20]
            for answers in await asyncio.gather(*(_guesses(url, s, guesses) for s in batch)):
                statuses += answers
    finally:
        await broadcaster.stop()
    seconds = time.monotonic() - started
    compared = statuses.count(403)
    return (f"tokens: {guessers} addresses x {guesses} wrong tokens in {seconds:.1f} s: "
            f"{compared} compared, {statuses.count(429)} answered 429 unread")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--addresses", type=int, default=15)
    parser.add_argument("--feeds", type=int, default=63)
    parser.add_argument("--max", type=int, default=940)
    parser.add_argument("--guessers", type=int, default=200)
    parser.add_argument("--guesses", type=int, default=3)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a small run (3 addresses x 20 feeds, 60 connections; 40 guessers)",
    )
    args = parser.parse_args()
    if args.quick:
        args.addresses, args.feeds, args.max, args.guessers = 3, 20, 60, 40
    header("the page against one machine's many addresses (loopback)")
    print(asyncio.run(feeds(args.addresses, args.feeds, args.max)))
    print(asyncio.run(tokens(args.guessers, args.guesses)))
    footer()


if __name__ == "__main__":
    main()
