"""benchmarks/memorymap.py: the growth benchmark's split of a process's dirty pages
by what holds them, which says where a day's step of memory is."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from benchmarks.memorymap import KINDS, private_dirty_by_kind

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")


def rollup_dirty_mb() -> float:
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("Private_Dirty:"):
            return int(line.split()[1]) / 1e3
    raise AssertionError("no Private_Dirty in smaps_rollup")


def test_the_split_adds_up_to_the_process_dirty_pages() -> None:
    # The test process's other threads (xdist's) touch pages while smaps is read, so
    # the kernel's own total is read on either side and the split must fall between.
    before = rollup_dirty_mb()
    split = private_dirty_by_kind()
    after = rollup_dirty_mb()
    assert set(split) == set(KINDS)
    assert min(before, after) - 0.5 <= sum(split.values()) <= max(before, after) + 0.5
    assert split["main heap"] > 0 and split["other anonymous"] > 0


@pytest.mark.skipif("MALLOC_ARENA_MAX" in os.environ, reason="one arena for every thread")
def test_what_a_thread_keeps_in_its_heap_shows_as_the_thread_arenas() -> None:
    before = private_dirty_by_kind()["thread arenas"]
    kept: list[bytes] = []
    during: list[float] = []
    # A new thread may be given the arena of a thread gone before it in this process
    # (another test's), with its freed pages still dirty: 8 MB beyond all of those
    # must show (a CI run's thread found 14 MB free there, and its 8 MB added nothing).
    blocks = 8000 + int(before * 1000)

    def keep_blocks() -> None:  # blocks above pymalloc's 512 bytes: glibc's, this thread's
        kept.extend(bytes(1000) + bytes([i % 256]) for i in range(blocks))
        during.append(private_dirty_by_kind()["thread arenas"])

    worker = threading.Thread(target=keep_blocks)
    worker.start()
    worker.join(30)
    assert during and during[0] - before > 6.0  # 8 MB written in the thread's arena
