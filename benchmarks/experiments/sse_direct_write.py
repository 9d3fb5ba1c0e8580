"""Experiment: what the SSE fan-out costs with the proposed change to the broadcast.

    python -m benchmarks.experiments.sse_direct_write [--viewers 500] [--runs 2]

Runs ``benchmarks.fanout``'s SSE measurement three ways, in this process:

- ``product``: the broadcast as it is;
- ``timeout``: ``Subscriber.get`` and the viewer's write under ``asyncio.timeout``
  instead of ``asyncio.wait_for`` (which creates a task and a timer per call);
- ``direct``: each message's frame encoded once and written straight to every
  viewer's transport from ``Hub.publish`` (chunked, as aiohttp streams it), a viewer
  whose write buffer passes 1 MB being dropped; no task wake-up per viewer.

It patches ``daemon.broadcast`` in memory only, and only for this process.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import sys
from collections.abc import Sequence
from typing import Any

from benchmarks.common import footer, header, percentile
from benchmarks.fanout import sse_run
from daemon.broadcast import hub as hub_module
from daemon.broadcast import web

HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}


@functools.lru_cache(maxsize=64)
def frame_of(seq: int | None, data: str) -> bytes:
    head = f"id: {seq}\n" if seq is not None else ""
    return f"{head}data: {data}\n\n".encode()


async def get_with_timeout(self: Any, timeout: float) -> Any:
    if not self.queue and not self.dropped:
        self._wakeup.clear()
        try:
            async with asyncio.timeout(timeout):
                await self._wakeup.wait()
        except TimeoutError:
            return None
    if self.dropped or not self.queue:
        return None
    return self.queue.popleft()


async def sse_with_timeout(request: Any) -> Any:
    hub = request.app[web.HUB_KEY]
    with_state = request.query.get("state") in ("1", "true", "yes")
    response = web.web.StreamResponse(headers=HEADERS)
    await response.prepare(request)
    subscriber = hub.subscribe(None, with_state=with_state, last_seq=web._last_seq(request))
    subscriber.on_drop = web._closer(request)
    try:
        await response.write(b"retry: 1000\n\n")
        while not subscriber.dropped:
            message = await subscriber.get(hub.settings.keepalive)
            if subscriber.dropped or request.transport is None:
                break
            frame = b": keep-alive\n\n" if message is None else frame_of(message.seq, message.data)
            async with asyncio.timeout(hub.settings.write_timeout):
                await response.write(frame)
    except (ConnectionError, TimeoutError, RuntimeError):
        pass
    finally:
        hub.unsubscribe(subscriber)
    return response


async def sse_direct(request: Any) -> Any:
    hub = request.app[web.HUB_KEY]
    with_state = request.query.get("state") in ("1", "true", "yes")
    response = web.web.StreamResponse(headers=HEADERS)
    await response.prepare(request)
    await response.write(b"retry: 1000\n\n")
    subscriber = hub.subscribe(None, with_state=with_state, last_seq=web._last_seq(request))
    while subscriber.queue:  # the snapshot, the normal way
        message = subscriber.queue.popleft()
        await response.write(frame_of(message.seq, message.data))
    transport = request.transport
    gone = asyncio.Event()

    def offer(message: Any) -> bool:
        if transport.is_closing() or transport.get_write_buffer_size() > 1 << 20:
            gone.set()
            return False
        frame = frame_of(message.seq, message.data)
        transport.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
        return True

    subscriber.offer = offer
    try:
        await gone.wait()
    finally:
        hub.unsubscribe(subscriber)
    return response


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=500)
    parser.add_argument("--moves", type=int, default=60)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args(argv)
    header("experiment: SSE fan-out with the proposed broadcast changes (patched in memory)")
    original_get, original_sse = hub_module.Subscriber.get, web.events_sse
    for variant in ("product", "timeout", "direct"):
        hub_module.Subscriber.get, web.events_sse = original_get, original_sse
        if variant == "timeout":
            hub_module.Subscriber.get = get_with_timeout  # type: ignore[method-assign]
            web.events_sse = sse_with_timeout
        elif variant == "direct":
            web.events_sse = sse_direct
        p99s, cpus, missing = [], [], 0
        for _ in range(args.runs):
            result = asyncio.run(sse_run(args.viewers, args.moves, 0.2, 2))
            p99s.append(percentile(result["delays"], 0.99))
            cpus.append(result["server_cpu"])
            missing += result["missing"]
        print(
            f"{variant:8}: {args.viewers} viewers, p99 publish to last viewer "
            f"{statistics.median(p99s) * 1e3:6.1f} ms, server CPU "
            f"{statistics.median(cpus) * 1e3:5.1f} ms per message, missing {missing}"
        )
    hub_module.Subscriber.get, web.events_sse = original_get, original_sse
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
