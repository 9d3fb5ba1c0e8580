"""The per-game journal: every event on disk before the next move, and resume.

A lost move is the worst failure this product has, so the feed is written as it
happens: one JSON Lines file per game (``<storage>/<YYYYmmdd-HHMMSS>-<nn>.jsonl``,
UTC), each event a line, flushed at once and fsynced whenever the game changed (a
move, a takeback, an irregularity, the start and the end). Beside it the game's PGN is rewritten
atomically (temporary file, fsync, rename), so a reader never sees half a PGN.

After a crash, ``kill -9`` or a power cut the daemon reads the newest journal back
(``find_unfinished``): a game that started and did not end is resumed from its
moves (``ResumePoint``); a torn last line, which a power cut can leave, is dropped.

When the disk is full or the directory unwritable the journal says so loudly once
(log and a ``notice`` event, so the arbiter hears it) and the game goes on in memory;
it keeps every event and writes them all out as soon as the disk accepts them again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from daemon.game.record import GameHeaders, GameRecord, players_named, today_pgn_date
from daemon.storage.diskwriter import DiskJob, DiskWriter, write_atomically
from drivers.records import Record

log = logging.getLogger(__name__)

#: Events after which the journal is fsynced (the game changed); others are flushed.
DURABLE_TYPES = frozenset(
    {
        "game_start",
        "move",
        "takeback",
        "irregularity",
        "position_restored",
        "game_end",
        "game_resumed",
        "penalty",
        "flag",
        "clock_sides",  # a restart reuses the mapping: it must survive a crash
        "players",  # the arbiter's names: the PGN on disk carries them
    }
)
#: Events after which the PGN beside the journal is rewritten.
PGN_TYPES = frozenset(
    {"game_start", "move", "takeback", "game_end", "game_resumed", "flag", "players", "penalty"}
)

JOURNAL_SUFFIX = ".jsonl"


@dataclass(eq=False, repr=False)
class ResumePoint(Record):
    """What a restarted daemon needs to continue a game (the rules core's ``resume``)."""

    path: Path
    start_fen: str
    chess960: bool
    uci_moves: list[str]
    illegal_counts: dict[str, int]
    last_t: float
    events: list[dict[str, Any]] = field(repr=False)
    #: the ply of ``start_fen``: not 0 when the arbiter accepted a position in mid-game
    start_ply: int = 0

    @property
    def ply(self) -> int:
        return self.start_ply + len(self.uci_moves)

    @property
    def game_events(self) -> list[dict[str, Any]]:
        """The journal's events from the unfinished game's start on."""
        start = max(i for i, e in enumerate(self.events) if e.get("type") == "game_start")
        return self.events[start:]

    @property
    def clock_white_side(self) -> Literal["left", "right"] | None:
        """White's clock side as the game's journal kept it (``clock_sides``); None
        when it was never learnt or a press contradicted it. A restart reuses it:
        the first side seen running after a restart proves nothing (the player on
        move may have pressed while the daemon was down)."""
        start = max(i for i, e in enumerate(self.events) if e.get("type") == "game_start")
        for event in reversed(self.events[start:]):
            if event.get("type") == "clock_sides":
                white = event.get("white")
                if white == "left" or white == "right":
                    return white
                return None
        return None


def read_events(path: Path) -> list[dict[str, Any]]:
    """The events of a journal; a torn or garbled line (power cut) is skipped."""
    events = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            line = line.strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                log.warning("%s line %d: unreadable, skipped (torn write?)", path, number)
                continue
            if isinstance(event, dict):
                events.append(event)
    return events


def resume_point(path: Path) -> ResumePoint | None:
    """The unfinished game in one journal, or None when it ended or never started."""
    events = read_events(path)
    starts = [i for i, e in enumerate(events) if e.get("type") == "game_start"]
    if not starts:
        return None
    game = events[starts[-1] :]
    if any(e.get("type") == "game_end" for e in game):
        return None
    record = GameRecord()
    for event in game:
        record.apply(event)
    counts = {"white": 0, "black": 0}
    for event in game:
        if event.get("type") == "irregularity" and event.get("kind") == "illegal_move":
            by = event.get("by")
            if by in counts:
                count = event.get("count")
                counts[by] = max(counts[by] + 1 if count is None else int(count), counts[by])
    last_t = max((float(e["t"]) for e in events if isinstance(e.get("t"), int | float)), default=0)
    return ResumePoint(
        path=path,
        start_fen=record.start_fen,
        chess960=record.chess960,
        uci_moves=[m.uci for m in record.moves],
        illegal_counts=counts,
        last_t=last_t,
        events=events,
        start_ply=record.start_ply,
    )


def journals(directory: Path) -> list[Path]:
    """The journals in a storage directory, oldest first (names sort by start time)."""
    try:
        return sorted(p for p in directory.glob("*" + JOURNAL_SUFFIX) if p.is_file())
    except OSError:
        return []


def find_unfinished(directory: Path) -> ResumePoint | None:
    """The newest journal's game, when it is unfinished."""
    found = journals(directory)
    if not found:
        return None
    try:
        return resume_point(found[-1])
    except OSError as exc:
        log.error("cannot read journal %s: %s", found[-1], exc)
        return None


class Journal:
    """Writes the event feed of each game to disk; never raises on a disk error.

    ``append(event)`` is called for every feed event, in order; it returns the
    ``notice`` events (storage failed / recovered) the caller should publish like
    any other event, so the people in the room learn that the disk is in trouble.

    ``record``: the board's one game record, which its owner (the board's pipeline)
    folds before each ``append``; the journal writes its PGN from it, named with the
    journal's ``headers``. Without one the journal folds a record of its own (a
    journal used alone: a test, a tool).
    """

    def __init__(
        self,
        directory: Path,
        *,
        headers: GameHeaders | None = None,
        fsync: bool = True,
        clock: Callable[[], float] = time.time,
        pgn_every: float = 0.0,
        writer: DiskWriter | None = None,
        record: GameRecord | None = None,
    ) -> None:
        self.directory = directory
        self._folds = record is None  # no owner folds the record: the journal does
        # The thread that fsyncs and rewrites the PGN off the event loop (the daemon's;
        # None: at once, in the caller, as replay and the tests do).
        self.writer = writer
        #: notices of a failure the writer met later (a storage error), to publish
        self.report_later: Callable[[list[dict[str, Any]]], None] | None = None
        self._submitted = 0  # jobs handed to the writer
        self._completed = 0  # ... and done: what they carried is on the card
        self._waiters: list[tuple[int, Callable[[], None]]] = []
        # Seconds between two rewrites of the PGN in a game (0: after every move); the
        # game's end, its next game and close() always write it. Rebuilding and
        # rewriting a game's whole PGN was 3/4 of a 12-board hall's CPU (issue 19).
        self.pgn_every = pgn_every
        self._pgn_at = float("-inf")  # time.monotonic() of the last rewrite
        self.pgn_wait: float | None = None  # seconds until a deferred rewrite is due
        self.headers = headers or GameHeaders(date=today_pgn_date())
        self.fsync = fsync
        self._clock = clock
        self.path: Path | None = None
        self._record: GameRecord | None = record
        self._events: list[dict[str, Any]] = []  # the current game's events, all of them
        self._written = 0  # how many of them are on disk
        self._handle: IO[str] | None = None
        self._rewrite = False  # the file must be written afresh (after a failure)
        self._fsync_due = False  # appended events wait for sync() to be fsynced
        self._pgn_due = False  # ... and for the PGN to be rewritten
        self._pgn_now = False  # ... at once, whatever ``pgn_every`` says (the game ended)
        self.failed: str | None = None  # the error while storage is failing
        self._named: dict[str, str] = {}  # the arbiter's names (``players``), in force

    # -- resuming -----------------------------------------------------------------

    def reopen(self, point: ResumePoint) -> None:
        """Continue writing the unfinished game of ``point`` (after a restart)."""
        self._close_handle()
        self.path = point.path
        if self._folds:
            self._record = GameRecord(self.headers)
        for event in point.game_events:
            if self._folds:
                self._record.apply(event)  # type: ignore[union-attr]  # made just above
            if event.get("type") == "players":  # named before the restart
                self._keep_names(event)
        self._events = list(point.events)
        self._written = len(self._events)
        self._pgn_due = True  # the PGN may be behind the journal (``_flush``): made afresh
        try:
            _drop_torn_tail(point.path)
        except OSError as exc:
            self._fail(exc)

    # -- writing ------------------------------------------------------------------

    @property
    def record(self) -> GameRecord | None:
        """The current game as folded from its events (PGN, state); None before the
        first game."""
        return self._record if self.path is not None else None

    @property
    def game_events(self) -> list[dict[str, Any]]:
        """Every event of the current game so far (for a display joining late)."""
        return list(self._events)

    @property
    def pgn_path(self) -> Path | None:
        return self.path.with_suffix(".pgn") if self.path else None

    def record_event(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """Append one feed event and make it durable at once; returns notices to
        publish (possibly none)."""
        return self.append(event) + self.sync()

    def append(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """Write one feed event's line and flush it: from here it survives a crash or
        ``kill -9`` of the daemon (it is in the kernel's page cache).

        The slow steps (fsync, the PGN's atomic rewrite) wait for ``sync()``, so the
        daemon can hand a move to the speech before the disk has finished with it:
        an fsync on a Pi's SD card takes tens of milliseconds, and the blind player
        must hear the move at once. A power cut inside that window loses at most the
        last event from disk, which the board itself still shows; the resume compares
        the board with the journal."""
        kind = event.get("type")
        notices = self._start_game() if kind == "game_start" else []
        if kind == "players":
            self._keep_names(event)
        if self.path is None or self._record is None:
            return []  # no game yet: the feed on stdout/broadcast still has it
        self._events.append(event)
        if self._folds:
            self._record.apply(event)
        if kind == "game_start" and self._named:
            self._name_the_game(event)
        self._fsync_due |= kind in DURABLE_TYPES
        self._pgn_due |= kind in PGN_TYPES
        self._pgn_now |= kind == "game_end"
        return notices + self._flush(durable=False, pgn=False)

    def sync(self, *, whole: bool = False, pgn_later: bool = False) -> list[dict[str, Any]]:
        """Finish what ``append`` left: fsync the journal when the game changed, and
        rewrite the PGN beside it (with ``pgn_every``, not sooner than that after the
        last rewrite, unless ``whole`` or the game ended: ``pgn_wait`` then says when).
        ``pgn_later``: the fsync now, the PGN at the next sync (a move's first sound
        first, ``daemon.speech.speechfirst``), unless the game ended."""
        self.pgn_wait = None
        if self.path is None or self._record is None or not (self._fsync_due or self._pgn_due):
            self._release_waiters_in_order()
            return []
        durable, pgn = self._fsync_due, self._pgn_due
        final = whole or self._pgn_now  # the game's end, the next game, the daemon's stop
        if pgn and pgn_later and not final:
            pgn = False  # still due: the next sync writes it
        elif pgn and self.pgn_every > 0 and not final:
            wait = self._pgn_at + self.pgn_every - time.monotonic()
            if wait > 0:
                pgn, self.pgn_wait = False, wait
        self._fsync_due = False
        if pgn:
            self._pgn_due = self._pgn_now = False
            self._pgn_at = time.monotonic()
        notices = self._flush(durable=durable, pgn=pgn, pgn_on_card=final)
        self._release_waiters_in_order()
        return notices

    @property
    def pgn_due(self) -> bool:
        """The PGN beside the journal is behind it: a later ``sync`` rewrites it."""
        return self._pgn_due

    def when_durable(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once every event appended so far is on the card (the
        journal fsynced, its PGN written), at once when it is already: the page shows
        a move only then, so a move the page acknowledged survives a power cut.
        Without a writer the caller syncs itself, and ``callback`` is called at once."""
        if self.writer is None:
            callback()
            return
        target = self._submitted + (1 if (self._fsync_due or self._pgn_due) else 0)
        if target <= self._completed:
            callback()
        else:
            self._waiters.append((target, callback))

    def _release_waiters_in_order(self) -> None:
        """Nothing left to write, but waiters wait on an event that needed nothing
        (a clock tick behind a move): an empty job, done after those before it."""
        if self.writer is not None and any(t > self._submitted for t, _ in self._waiters):
            self._submit(DiskJob(key=self, path=self.path, fd=None))

    def _submit(self, job: DiskJob) -> None:
        assert self.writer is not None
        self._submitted += 1
        seq = self._submitted
        job.done.append(lambda error: self._job_done(seq, error))
        try:
            self.writer.submit(job)
        except RuntimeError:  # no running loop (a close outside the daemon's): here
            error: OSError | None = None
            try:
                job.run()
            except OSError as exc:
                error = exc
            self._job_done(seq, error)

    def _job_done(self, seq: int, error: OSError | None) -> None:
        """On the event loop: what job ``seq`` carried is on the card, or failed."""
        self._completed = max(self._completed, seq)
        ready = [cb for target, cb in self._waiters if target <= self._completed]
        self._waiters = [(t, cb) for t, cb in self._waiters if t > self._completed]
        notices: list[dict[str, Any]] = []
        if error is not None:
            self._close_handle()
            self._written = 0  # as in _flush: every event written afresh at the next one
            self._rewrite = True
            notices = self._fail(error)
        for callback in ready:
            callback()
        if notices and self.report_later is not None:
            self.report_later(notices)

    def _keep_names(self, event: dict[str, Any]) -> None:
        """The arbiter's names stand until he names others: for this game and the
        next ones (``headers``), and in each later game's journal (``_named``)."""
        named = players_named(event)
        self._named.update(named)
        self.headers = dataclasses.replace(self.headers, **named)

    def _name_the_game(self, start: dict[str, Any]) -> None:
        """A new game's journal says at once whose it is, so that a restart
        during it (which reads only this file) still names the players."""
        assert self._record is not None
        names = {"t": start.get("t"), "type": "players", **self._named}
        self._events.append(names)
        if self._folds:
            self._record.apply(names)

    def close(self) -> None:
        self.sync(whole=True)
        if self.writer is not None:
            self.writer.drain()  # the daemon is stopping: the card has it all first
        self._close_handle()

    def _start_game(self) -> list[dict[str, Any]]:
        notices = self.sync(whole=True)  # the previous game, finished on disk
        self._close_handle()
        notices += self._ensure_directory()
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(self._clock()))
        number = 1
        while (self.directory / f"{stamp}-{number:02d}{JOURNAL_SUFFIX}").exists():
            number += 1
        self.path = self.directory / f"{stamp}-{number:02d}{JOURNAL_SUFFIX}"
        if self._folds:
            self._record = GameRecord(self.headers)
        self._events = []
        self._written = 0
        self._rewrite = False
        return notices

    def _ensure_directory(self) -> list[dict[str, Any]]:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return self._fail(exc)
        return []

    def _flush(
        self, *, durable: bool, pgn: bool, pgn_on_card: bool = False
    ) -> list[dict[str, Any]]:
        """The appended lines written; with ``durable`` the journal fsynced, with
        ``pgn`` the PGN rewritten, and fsynced (file and directory) only with
        ``pgn_on_card``: at a game's end and the daemon's stop. During a game the
        PGN is made from the journal, which holds every move on the card and from
        which a restart writes the PGN again (``reopen``): its two fsyncs a move
        were two thirds of a slow card's work, and the page waited for them
        (``benchmarks.pihall --hall zero2w --slow-card``)."""
        assert self.path is not None and self._record is not None
        was_failing = self.failed
        pgn_fsync = self.fsync and (pgn_on_card or was_failing is not None)
        try:
            if self._handle is None:
                self.directory.mkdir(parents=True, exist_ok=True)
                # After a failure the file may end in a torn line: write it all afresh.
                mode = "w" if self._rewrite else "a"
                self._handle = open(self.path, mode, encoding="utf-8")  # noqa: SIM115
                self._rewrite = False
            pending = self._events[self._written :]
            if pending:
                self._handle.write("".join(_line(e) for e in pending))
                self._handle.flush()
                self._written = len(self._events)
            if self.writer is not None and not was_failing:
                # the slow part off the loop; a failure comes back through _job_done
                if durable or pgn:
                    self._submit(
                        DiskJob(
                            key=self,
                            path=self.path,
                            fd=os.dup(self._handle.fileno()) if durable and self.fsync else None,
                            pgn_path=self.path.with_suffix(".pgn") if pgn else None,
                            pgn_text=self._record.pgn(self.headers) if pgn else None,
                            fsync=pgn_fsync,
                        )
                    )
                return []
            if (durable or was_failing) and self.fsync:
                os.fsync(self._handle.fileno())
            if pgn or was_failing:
                pgn_path = self.path.with_suffix(".pgn")  # self.pgn_path, known here
                write_atomically(pgn_path, self._record.pgn(self.headers), fsync=pgn_fsync)
        except OSError as exc:
            self._close_handle()
            # A half-written line may now end the file: rewrite every event at the next
            # flush, so nothing is duplicated or lost.
            self._written = 0
            self._rewrite = True
            return self._fail(exc)
        if was_failing:
            self.failed = None
            message = f"storage works again: {self.path} holds every event of the game"
            log.warning(message)
            return [_notice(self._last_t(), "storage_recovered", message)]
        return []

    def _fail(self, exc: OSError) -> list[dict[str, Any]]:
        first = self.failed is None
        self.failed = str(exc)
        if first:
            message = (
                f"STORAGE FAILURE: cannot write the game to {self.path or self.directory}: "
                f"{exc}. The game goes on in memory; free space or fix the directory."
            )
            log.error(message)
            return [_notice(self._last_t(), "storage_error", message)]
        return []

    def _last_t(self) -> float:
        return float(self._events[-1].get("t", 0.0)) if self._events else 0.0

    def _close_handle(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None


def _line(event: dict[str, Any]) -> str:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"


def _notice(t: float, code: str, message: str) -> dict[str, Any]:
    from daemon.game.events import Notice

    return Notice(t=t, code=code, message=message).to_dict()


def _drop_torn_tail(path: Path) -> None:
    """Cut an unfinished last line off (a power cut mid-write), so appends start clean."""
    with open(path, "rb+") as handle:
        data = handle.read()
        if not data or data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1
        handle.truncate(cut)
