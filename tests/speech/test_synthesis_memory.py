"""A phrase said through the synthesis thread leaves nothing behind for the garbage
collector (issue 28): a tournament day's memory grew about 15 kB a game over its
first 40 games, each phrase's job, reply queue and futures held in a reference cycle
until the collector's rare full pass (benchmarks/growth.py, RESULTS.md)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

from daemon.speech import synthesis


class InstantThread:
    """Stands in for the synthesis thread: answers each job at once (samples, done)
    and keeps only a weak reference to it, as the real thread drops its job."""

    def __init__(self) -> None:
        self.jobs: list[weakref.ref[synthesis.Job]] = []

    def hung_for(self) -> float:
        return 0.0

    def submit(self, job: synthesis.Job) -> None:
        self.jobs.append(weakref.ref(job))
        job.deliver(("pcm", b"\x00\x01" * 64))
        job.deliver(("done", 64))


def test_a_phrase_s_job_is_freed_when_it_ends_without_the_collector() -> None:
    thread = InstantThread()
    heard: list[bytes] = []

    async def on_pcm(data: bytes) -> None:
        heard.append(data)

    async def say() -> Any:
        return await synthesis.run(thread, 5.0, voice="de", volume=1.0, rate=150,
                                   text="Springer Felix drei", on_pcm=on_pcm)  # fmt: skip

    gc.collect()
    gc.disable()  # only reference counting: what a cycle keeps stays
    try:
        assert asyncio.run(say()) == 64
        assert heard == [b"\x00\x01" * 64]
        assert [job() for job in thread.jobs] == [None]
    finally:
        gc.enable()
