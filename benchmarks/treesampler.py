"""Where a slow move's time went: the CPU each kind of process of the daemon's tree ran
and waited for, sampled every few milliseconds, and its CPU groups' throttled time."""

from __future__ import annotations

import bisect
import contextlib
import math
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.processes import STAND_IN, command_name, descendants, thread_name


class TreeSampler:
    """Every ``EVERY`` s: the CPU each kind of process of the daemon's tree has run and
    waited for (``/proc/PID/task/TID/schedstat``: run and run-queue wait, ns, summed
    over its threads) and the time its groups were throttled (``cpu.stat``). A slow
    move is then told apart: the daemon busy (its own CPU), the daemon runnable but
    not running (the quota spent, by it or by a process sharing it), or neither (the
    time went outside the tree: the emulator, the pty, this process)."""

    EVERY = 0.004

    def __init__(self, root: int, groups: Sequence[Path] | Any = ()) -> None:
        self.root = root
        self.groups = groups
        self.times: list[float] = []
        #: per sample: kind -> (run ns, wait ns), and the groups' throttled ns
        self.samples: list[tuple[dict[str, tuple[int, int]], int]] = []
        self._kinds: dict[int, str] = {}
        self._threads: dict[int, str] = {}  # the daemon's threads: loop, synthesis, other
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _group_paths(self) -> list[Path]:
        return list(self.groups() if callable(self.groups) else self.groups)

    def _run(self) -> None:
        pids: list[int] = []
        refreshed = 0.0
        while not self._stop.wait(self.EVERY):
            now = time.time()
            if now - refreshed > 0.1:
                pids, refreshed = descendants(self.root), now
            by_kind: dict[str, tuple[int, int]] = {}
            for pid in pids:
                kind = self._kinds.get(pid) or self._kinds.setdefault(pid, command_name(pid))
                with contextlib.suppress(OSError):
                    for task in os.listdir(f"/proc/{pid}/task"):
                        with contextlib.suppress(OSError, ValueError, IndexError):
                            fields = Path(f"/proc/{pid}/task/{task}/schedstat").read_text()
                            r, w = fields.split()[:2]
                            part = self._part(kind, pid, int(task))
                            old = by_kind.get(part, (0, 0))
                            by_kind[part] = (old[0] + int(r), old[1] + int(w))
            throttled = 0
            for path in self._group_paths():
                with contextlib.suppress(OSError, ValueError):
                    for line in (path / "cpu.stat").read_text().splitlines():
                        if line.startswith("throttled_time "):
                            throttled += int(line.split()[1])
            self.times.append(now)
            self.samples.append((by_kind, throttled))

    def _part(self, kind: str, pid: int, task: int) -> str:
        """The daemon's threads apart (where a phrase's first sample waits on one
        core: the event loop, the pyttsx3 synthesis thread and libespeak-ng's, the
        others: MQTT's, the disk writer); every other process whole."""
        if kind != "daemon":
            return kind
        part = self._threads.get(task)
        if part is None:
            from daemon.speech.synthesis import OS_THREAD_NAME

            if task == pid:
                part = "daemon loop"
            elif thread_name(pid, task) == OS_THREAD_NAME:
                part = "daemon synthesis"
            else:
                part = "daemon other"
            self._threads[task] = part
        return part

    def window(self, start: float, end: float) -> tuple[dict[str, tuple[float, float]], float]:
        """Milliseconds each kind ran and waited between ``start`` and ``end`` (wall
        times; the samples just outside them), and the groups' throttled ms."""
        if len(self.times) < 2:
            return {}, math.nan
        first = max(0, bisect.bisect_right(self.times, start) - 1)
        last = min(len(self.times) - 1, bisect.bisect_left(self.times, end))
        (before, t0), (after, t1) = self.samples[first], self.samples[last]
        spent = {
            kind: ((run - before.get(kind, (0, 0))[0]) / 1e6,
                   (wait - before.get(kind, (0, 0))[1]) / 1e6)
            for kind, (run, wait) in after.items()
        }  # fmt: skip
        return spent, (t1 - t0) / 1e6


def describe_window(sampler: TreeSampler | None, start: float, end: float) -> str:
    """``daemon 3.1+0.4`` (ms run + ms waiting to run) per kind, and throttled ms."""
    if sampler is None:
        return ""
    spent, throttled = sampler.window(start, end)
    short = {"daemon loop": "loop", "daemon synthesis": "synthesis", "daemon other": "threads",
             "speech worker": "worker", STAND_IN: "player"}  # fmt: skip
    parts = [f"{short.get(k, k[:12])} {r:.1f}+{w:.1f}" for k, (r, w) in sorted(spent.items())]
    return ", ".join(parts) + (f"; throttled {throttled:.1f}" if throttled == throttled else "")
