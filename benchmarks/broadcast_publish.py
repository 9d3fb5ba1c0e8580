"""What ``publish`` costs the daemon's loop per feed event, by number of viewers.

    python -m benchmarks.broadcast_publish [--viewers 0,100,1000] [--moves 60] [--quick]

``Hub.publish`` numbers the event, folds it into the board's record, serialises it
(once without, once with the page state) and writes it to every viewer. Here every
viewer is the web app's own ``TransportSink`` over a transport that takes the bytes
and sends them nowhere, so the figure is the server's side of the fan-out without
the kernel's: what the rules core's loop pays per event. (``benchmarks.fanout``
measures the whole path, real sockets and real viewers in other processes.)

Numbers, not a test: the machine and its load decide them.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from benchmarks.common import footer, header
from benchmarks.fanout import game_feed
from daemon.broadcast.hub import Hub
from daemon.broadcast.settings import BroadcastSettings
from daemon.broadcast.viewers import SSE_CHUNKED, TransportSink


class NullTransport:
    """Takes every write at once, as a socket whose peer keeps up."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, data: bytes) -> None:
        self.bytes += len(data)

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return False


async def publish_cost(viewers: int, feed: list[dict[str, Any]], with_state: bool) -> float:
    """Seconds of this thread's CPU per ``publish`` with ``viewers`` SSE viewers."""
    hub = Hub(BroadcastSettings())
    hub.bind_loop()
    for _ in range(viewers):
        sink = TransportSink(NullTransport(), SSE_CHUNKED, ping=None, max_messages=256)  # type: ignore[arg-type]
        hub.subscribe(with_state=with_state, sink=sink)
    start = time.thread_time()
    for event in feed:
        hub.publish("1", event)
    return (time.thread_time() - start) / len(feed)


async def run(viewer_counts: list[int], moves: int, runs: int) -> None:
    feed = game_feed(moves)
    for count in viewer_counts:
        for with_state in (False, True):
            costs = [await publish_cost(count, feed, with_state) for _ in range(runs)]
            kind = "page viewers (?state=1)" if with_state else "feed viewers"
            print(
                f"publish with {count:4d} {kind}: median {statistics.median(costs) * 1e6:8.1f} µs "
                f"of CPU per event ({runs} runs of {len(feed)} events)"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", default="0,100,1000", help="viewer counts (0,100,1000)")
    parser.add_argument("--moves", type=int, default=60, help="moves per run (60)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each (3)")
    parser.add_argument("--quick", action="store_true", help="a few viewers and moves")
    args = parser.parse_args(argv)
    counts = [int(part) for part in args.viewers.split(",") if part]
    if args.quick:
        counts, args.moves, args.runs = [0, 10], 5, 1
    header("broadcast publish cost per event (in process, viewers' sockets excluded)")
    asyncio.run(run(counts, args.moves, args.runs))
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
