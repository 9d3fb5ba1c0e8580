"""The journal's slow disk work (fsync, the PGN's atomic rewrite) on a thread of its own.

An fsync on a Pi's SD card takes 20-200 ms (``benchmarks/sdcard.py``). Done on the
event loop, every board's next press, the bus polling and the page waited for it:
with twelve boards that is four fsyncs a second. So the loop only appends the
journal's lines (into the page cache: they survive a crash of the daemon) and hands
the rest here; one thread serves every board of the daemon, in order.

A job waiting its turn takes in every later one of the same file, wherever it stands
in the queue (the later fsync covers the earlier lines, the later PGN supersedes the
earlier), so a slow card makes fewer, not more, writes: with a chain's boards
interleaved, each board's journal is written once a turn of the writer instead of once
an event (with twelve boards on a slow card, the queue of one job an event grew without
end and the page fell 6-16 s behind the board: ``benchmarks.pihall --hall zero2w
--slow-card``). Each job's completion comes back to the event loop, where the journal
learns what is now on the card: at once, and together with every other job done
before the loop got to it (one wake of the loop, one turn of it, for a round's first
moves on a busy Pi, not one a board).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from drivers.records import Record

log = logging.getLogger(__name__)

Done = Callable[[OSError | None], None]


@dataclass(eq=False, repr=False)
class DiskJob(Record):
    """What one journal wants on the card: its file fsynced (a dup of its descriptor,
    so closing the journal's handle meanwhile does no harm), its PGN rewritten."""

    key: object  # the journal (jobs of one journal coalesce)
    path: Path | None  # the journal file the descriptor belongs to
    fd: int | None  # a dup'd descriptor to fsync, owned by the job
    pgn_path: Path | None = None
    pgn_text: str | None = None
    fsync: bool = True  # whether the PGN's rewrite fsyncs (at a game's end: ``Journal._flush``)
    #: other disk work in the same order (the hand-in files, ``daemon.storage.handin``); a
    #: later job of the same key replaces it (each does the whole work afresh)
    work: Callable[[], None] | None = None
    done: list[Done] = field(default_factory=list)

    def take_in(self, later: DiskJob) -> bool:
        """Absorb ``later`` (same journal, same file); False when it cannot be."""
        if later.key is not self.key or later.path != self.path:
            return False
        if later.fd is not None:
            if self.fd is None:
                self.fd = later.fd
            else:
                os.close(later.fd)  # one fsync of the same file covers both
        if later.pgn_text is not None:
            self.pgn_path, self.pgn_text = later.pgn_path, later.pgn_text
            self.fsync = self.fsync or later.fsync  # a game's end taken in stays on the card
        if later.work is not None:
            self.work = later.work
        self.done += later.done
        return True

    def run(self) -> None:
        try:
            if self.fd is not None:
                os.fsync(self.fd)
            if self.pgn_path is not None and self.pgn_text is not None:
                write_atomically(self.pgn_path, self.pgn_text, fsync=self.fsync)
            if self.work is not None:
                self.work()
        finally:
            if self.fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self.fd)
                self.fd = None


def write_atomically(path: Path, text: str, *, fsync: bool = True) -> None:
    """Replace ``path`` by ``text`` so that a reader sees the old or the new file, whole.

    Plain ``os`` calls (open, write, close, rename): a Python file object adds an
    fstat, an isatty ioctl and a seek to each of the PGN's rewrites, one per move per
    board (issue 19)."""
    temporary = f"{path.parent}/.{path.name}.tmp"
    data = text.encode("utf-8")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)
    if fsync:
        _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class DiskWriter:
    """One thread doing the daemon's journal jobs in order, started on the first."""

    def __init__(self) -> None:
        self._jobs: deque[DiskJob] = deque()
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None
        self._busy = False
        self._stopping = False
        #: the jobs' ``done`` callbacks due on the loop, with their outcome: handed to it
        #: in one call (``_report``) for every job done before it ran
        self._finished: list[tuple[Done, OSError | None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def submit(self, job: DiskJob) -> None:
        """Queue ``job`` (called on the event loop); each of its ``done`` callbacks is
        called on that loop once it is on the card (None) or failed (the error)."""
        self._loop = asyncio.get_running_loop()
        with self._lock:
            for queued in reversed(self._jobs):  # the journal's own job still waiting
                if queued.key is job.key:
                    if queued.take_in(job):
                        return
                    break  # another file of it (a new game): after that one, in order
            self._jobs.append(job)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="dgt-bridge-disk", daemon=True
                )
                self._thread.start()
            self._lock.notify()

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._jobs and not self._stopping:
                    self._lock.wait()
                if not self._jobs:
                    return
                job = self._jobs.popleft()
                self._busy = True
            error: OSError | None = None
            try:
                job.run()
            except OSError as exc:
                error = exc
            finally:
                with self._lock:
                    self._busy = False
                    self._lock.notify_all()
                    told = bool(self._finished)  # the loop is to report those already
                    self._finished += [(callback, error) for callback in job.done]
            if job.done and not told and self._loop is not None:
                with contextlib.suppress(RuntimeError):  # the loop is gone: shutting down
                    self._loop.call_soon_threadsafe(self._report)

    def _report(self) -> None:
        """On the loop: every job done since the last report, each callback in order."""
        with self._lock:
            finished, self._finished = self._finished, []
        for callback, error in finished:
            try:
                callback(error)
            except Exception:
                log.exception("a disk job's completion failed; the others go on")

    def drain(self, timeout: float = 30.0) -> bool:
        """Wait until every queued job is done (the daemon's close); True if so."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._jobs and not self._busy, timeout)

    def stop(self) -> None:
        self.drain()
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(5)
