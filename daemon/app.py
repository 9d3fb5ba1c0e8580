"""The daemon: wiring the parts of one process, board link -> rules core -> outputs.

Everything runs on one event loop, and nothing on it may wait for anything slow:

- the board link reads the serial port through ``loop.add_reader`` and hands each
  sensor event to the board's pipeline (``daemon.pipeline``);
- the rules core is pure and fast: ``feed`` returns domain events at once, and its
  timers (settle time) are one ``loop.call_later`` at ``next_deadline()``, no polling;
- each domain event goes, in order, to the journal (disk first: a lost move is the
  worst failure), the event feed (stdout or a file), the log, the announcer's queue,
  the broadcast hub and the clock display; each output only queues work for its own
  task (speech in a worker, HTTP clients with bounded queues, clock commands one at a
  time), so a slow speaker, viewer or clock never holds up the next move.

The parts are made by the composition root (``daemon.compose``), the board's
decisions by ``daemon.pipeline.BoardPipeline``, its status by ``daemon.status``;
``Daemon`` only starts them, in order, and stops them.

Start-up order, and what READY means (``docs/daemon.md``): ``READY=1`` goes to
systemd once a move on the board is read, decided and journalled: the rules core,
the journal (with a resumed game) and the board link are up. The speech (the
announcer and pyttsx3's worker process) and the live page (aiohttp: a third of the
start-up's CPU) start after it, in that order, their modules imported in a thread so
that the board's bytes are read meanwhile; what the board says meanwhile waits in a
backlog for each, handed over in order once it is up, so nothing is lost or spoken
out of turn. On a Pi Zero 2 W's budget this is READY in about 4 s instead of 12 s,
and the board is read seconds earlier. ``start()`` still returns only when all is
up; ``STATUS=`` and the log say what is still starting.

Time: the rules core gets seconds on a monotonic clock. After a restart the clock
continues from the journal's last time, so a game's journal stays in order. The demo
runs the whole daemon on a faster clock (``time_scale``): the core's settle time is in
game seconds, so an accelerated game is decided exactly as one played at speed 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from daemon import compose
from daemon.clockdisplay import ClockDisplay
from daemon.compose import DEFAULT_BOARD_ID, configured_board_id, turned_round
from daemon.config import Settings
from daemon.events import DomainEvent
from daemon.formatting import describe_event
from daemon.gcfreeze import freeze_startup
from daemon.journal import Journal, ResumePoint, find_unfinished
from daemon.lifecycle import Lifecycle, quietly
from daemon.memory import release_freed_memory
from daemon.notify import Notifier
from daemon.pipeline import (
    BoardPipeline,
    FeedWriter,
    LoopScheduler,
    Output,
    Scheduler,
    log_line,
)
from daemon.status import BoardStatus
from drivers.sensors import SensorEvent

__all__ = [
    "DEFAULT_BOARD_ID",
    "Daemon",
    "configured_board_id",
    "describe_event",
    "journal_history",
    "setup_logging",
    "turned_round",
]

log = logging.getLogger("dgt-bridge")


class Daemon(Lifecycle):
    """One board's daemon. ``await run()`` until ``stop()`` (or a signal).

    ``port`` overrides ``settings.board.port``; ``events_out`` receives the event feed
    as JSON lines; ``speech`` False leaves the announcer out (the log still has every
    move); ``on_event`` is called with each feed dict (the demo watches the game end);
    ``speech_text`` is where the text engine (speech's last fallback) writes;
    ``board_id`` names the board on the page and in MQTT (default:
    :func:`configured_board_id`).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        port: str | None = None,
        events_out: TextIO | None = None,
        speech: bool = True,
        time_scale: float = 1.0,
        storage_dir: Path | None = None,
        resume: bool = True,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        notifier: Notifier | None = None,
        speech_text: TextIO | None = None,
        board_id: str | None = None,
        scheduler: Scheduler | None = None,
    ) -> None:
        self.settings = settings
        self.port = port or settings.board.port
        self.events_out = events_out
        self.speech_enabled = speech
        self.time_scale = time_scale
        self.storage_dir = storage_dir or settings.storage.resolved_directory()
        self.resume_enabled = resume
        self.on_event = on_event
        self.notifier = notifier or Notifier()
        self.speech_text = speech_text  # where the text engine writes (default: stdout)
        self.board_id = board_id or configured_board_id(settings)

        # Game time and the core's timers: the loop's clock (``time_scale`` faster for
        # the demo), or a test's simulated time.
        self.scheduler: Any = scheduler or LoopScheduler(time_scale)
        super().__init__()  # a task that fails stops the daemon (Lifecycle)
        self._link_task: asyncio.Task[Any] | None = None
        self._speech_running = False  # the announcer's engines have started

        self.headers = compose.build_headers(settings)
        self.journal = Journal(
            self.storage_dir,
            headers=self.headers,
            fsync=settings.storage.fsync,
            pgn_every=settings.storage.pgn_every,
        )
        self.vocabulary = compose.load_vocabulary(settings)  # once, for all parts
        parts = compose.build_board_parts(settings, self.vocabulary)
        self.core = parts.core
        self.clock_interpreter = parts.clock_interpreter
        self.clock_writer = parts.clock_writer
        self.link: Any = None  # drivers.dgt.link.BoardLink, made at start
        self.announcer: Any = None  # daemon.speech.Announcer, made at start when speaking
        self.hub: Any = None  # daemon.broadcast.Broadcaster, imported only when enabled
        self.http_url: str | None = None
        #: the feed's dicts for the page while it is starting (after READY); None
        #: once the page is up or is not to be
        self._hub_backlog: list[dict[str, Any]] | None = [] if settings.broadcast.enabled else None
        #: the same for the announcer, made after READY
        self._speech_backlog: list[DomainEvent] | None = [] if speech else None
        self._outputs_state = "starting"  # for STATUS=: speech and page after READY
        self.clock_display: ClockDisplay | None = None
        self.status = BoardStatus(self.board_id, self.notifier, lambda: self.hub, lambda: self.link)
        outputs: list[Output] = []
        if events_out is not None:
            outputs.append(FeedWriter(events_out))
        outputs += [log_line, self._to_announcer, self._to_hub, self._after_game]
        if on_event is not None:
            outputs.append(self._to_caller)
        self.pipeline = BoardPipeline(
            self.board_id,
            parts,
            self.scheduler,
            journal=self.journal,
            outputs=outputs,
            on_connection=self.status.connection,
        )

    # -- time ---------------------------------------------------------------------------

    def now(self) -> float:
        """Seconds on the daemon's clock (game seconds when the demo speeds time up)."""
        return self.scheduler.now()

    # -- wiring ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Resume an unfinished game, start the board link, tell systemd READY; then
        start the speech and the live page (see the module's docstring). Returns when
        all are up."""
        if self.resume_enabled:
            self._resume(find_unfinished(self.storage_dir))
        # A resumed game's events, for the speech and the page once they are up
        # (what comes later waits in their backlogs)
        known = list(self.journal.game_events)
        self.notifier.add_detail("outputs", self._outputs_line)
        self.link = compose.build_link(
            self.settings,
            self.pipeline.submit,
            port=self.port,
            clock_interpreter=self.clock_interpreter,
            time_source=self.now,
        )
        # A resumed game: moves made while the daemon was down come back from the
        # board's EEPROM log, as after an outage (the rules core falls back to search).
        self.link.expect_placements(self.pipeline.resumed_placements())
        self.pipeline.probe_board = self.link.probe
        self.link.on_battery = self.status.battery
        self._link_task = self._spawn(self.link.run(), "board link")
        if self.clock_writer is not None:
            self.clock_display = ClockDisplay(
                self.clock_writer, self.clock_interpreter, lambda: self.link
            )
            self.pipeline.outputs.insert(self._clock_slot(), self.clock_display)
            self._spawn(self.clock_display.run(), "clock display")
        self._spawn(self.notifier.watchdog(), "watchdog")
        self._handle_signals()
        port = compose.board_port(self.settings, self.port)
        log.info(
            "dgt-bridge running: board %s, games in %s%s",
            port or "auto-detect",
            self.storage_dir,
            f"; starting {self._starting_outputs()}" if self._starting_outputs() else "",
        )
        self.notifier.ready(f"reading {port or 'auto-detected board'}")
        await self._start_outputs(known)

    def _starting_outputs(self) -> str:
        """What starts after READY, in words ("" when nothing)."""
        parts = ["speech"] if self.speech_enabled else []
        if self.settings.broadcast.enabled:
            parts.append("the live page")
        return " and ".join(parts)

    async def _start_outputs(self, known: list[dict[str, Any]]) -> None:
        """After READY: the speech first (a blind player's ears), then the live page,
        each imported in a thread (the board's bytes are read meanwhile) and handed
        what the board said while it was starting."""
        await asyncio.to_thread(compose.import_after_ready, self.speech_enabled, False)
        if self.speech_enabled:
            self._make_announcer(known)
        backlog, self._speech_backlog = self._speech_backlog or [], None
        if self.announcer is not None:
            for domain_event in backlog:  # in order, before any later event
                self.announcer.handle(domain_event)
            self._spawn(self._run_announcer(self.announcer), "announcer")
        if self.settings.broadcast.enabled:
            await asyncio.to_thread(compose.import_after_ready, False, True)
        hub, self.http_url = await compose.start_broadcast(
            self.settings, self._on_request, self.now, self.notifier
        )
        events, self._hub_backlog = self._hub_backlog or [], None
        self.hub = hub
        if hub is not None:
            for event in journal_history(known) + events:  # in order, before later ones
                hub.publish(self.board_id, event)
            if self.link is not None:
                battery = self.link.battery.percent if self.link.battery is not None else None
                hub.set_status(self.board_id, connected=self.link.connected, battery=battery)
        self._outputs_state = "up"
        if self.http_url:
            log.info("live page up: %s", self.http_url)
        self.notifier.refresh()
        freeze_startup()  # start-up's objects (the page's too) out of the GC's walks

    def _outputs_line(self) -> str:
        """The STATUS= line's words about what starts after READY."""
        if self._outputs_state == "starting" and self._starting_outputs():
            return f"{self._starting_outputs()} starting"
        return f"live page {self.http_url}" if self.http_url else ""

    def _clock_slot(self) -> int:
        """The clock display comes after the page and before the caller's ``on_event``."""
        return self.pipeline.outputs.index(self._to_hub) + 1

    def _make_announcer(self, known: list[dict[str, Any]]) -> None:
        """The announcer, after READY; ``known``: the resumed game's events before it."""
        text = self.speech_text
        if text is None and self.events_out is not None and self.events_out is sys.stdout:
            text = sys.stderr  # stdout carries the JSON feed
        self.announcer = compose.build_announcer(
            self.settings, self.vocabulary, self._speech_problem, text, self._speech_outcome
        )
        if self.announcer is not None:
            self.announcer.catch_up(known)  # known, not spoken

    async def _run_announcer(self, announcer: Any) -> None:
        """The speech engines start (pyttsx3's worker process takes about a second,
        more on a Pi) after READY, while the page comes up; what is to be said
        meanwhile waits in the announcer's queue."""
        try:
            await announcer.start()
        except Exception as exc:  # the game goes on unspoken, and says so
            log.error("SPEECH NOT AVAILABLE: %s (moves are only logged)", exc)
            self.announcer = None
            return
        self._speech_running = True
        await announcer.run()

    def _speech_outcome(self, record: dict[str, Any]) -> None:
        """What was heard, cut or dropped goes into the journal (not the feed), so a
        player's complaint can be checked afterwards."""
        self.journal.append({"t": round(self.now(), 6), **record})

    def _to_announcer(self, event: DomainEvent) -> None:
        if self.announcer is not None:
            self.announcer.handle(event)
        elif self._speech_backlog is not None:
            self._speech_backlog.append(event)  # the speech is starting

    def _to_hub(self, event: DomainEvent) -> None:
        if self.hub is not None:  # the HTTP and MQTT edge: the feed's dicts
            self.hub.publish(self.board_id, event.to_dict())
        elif self._hub_backlog is not None:
            self._hub_backlog.append(event.to_dict())  # the page is starting

    def _after_game(self, event: DomainEvent) -> None:
        """A game has ended or the next begun: once every output has had it, the
        memory the last game needed goes back to the system (``daemon.memory``), so
        that a day of games does not hold more than the current game's state."""
        if event.type in ("game_end", "game_start"):
            try:
                asyncio.get_running_loop().call_soon(release_freed_memory)
            except RuntimeError:  # no loop (a test feeding the pipeline by hand)
                release_freed_memory()

    def _to_caller(self, event: DomainEvent) -> None:
        if self.on_event is not None:  # an embedding caller gets the feed's dicts
            self.on_event(event.to_dict())

    async def close(self, drain_speech: bool = True) -> None:
        """Stop the board first, say what is still queued (unless ``drain_speech`` is
        False: a user's Ctrl-C means now), then close every output."""
        self.notifier.stopping()
        self.pipeline.close()
        if self.clock_display is not None:
            self.clock_display.close()
        if self.link is not None:
            self.link.close()
        if self._link_task is not None:
            with contextlib.suppress(Exception):  # let the link end its own way
                await asyncio.wait_for(asyncio.shield(self._link_task), 5)
        if self.announcer is not None and self._speech_running and drain_speech:
            await quietly(self.announcer, "drain", 30)
        await self._end_tasks()
        if self.announcer is not None:
            await quietly(self.announcer, "close")
        if self.hub is not None:
            await quietly(self.hub, "stop")
        self._release_signals()
        self.journal.close()
        self.notifier.close()

    # -- resume -----------------------------------------------------------------------------

    def _resume(self, point: ResumePoint | None) -> None:
        if point is None:
            return
        self.scheduler.offset = point.last_t + 0.001
        self.journal.reopen(point)
        log.info(
            "resuming the game in %s at move %d: waiting for the board to agree",
            point.path,
            point.ply,
        )
        self.pipeline.resume(point)

    # -- in -----------------------------------------------------------------------------------

    def submit(self, event: SensorEvent) -> None:
        """Feed one sensor event (the link, the web controls, the demo's arbiter)."""
        self.pipeline.submit(event)

    def _on_request(self, board_id: str, request: SensorEvent) -> None:
        """A web control (arbiter): a Request for this board, at the daemon's time."""
        if board_id == self.board_id:
            self.submit(replace(request, t=self.now()))

    def _speech_problem(self, message: str) -> None:
        """A speech engine failed: the arbiter must know a blind player hears nothing."""
        self.pipeline.notice("speech_error", message)


def journal_history(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A resumed game's journal, for the page: its moves, not an earlier restart's
    ``game_resumed`` (published again it reads as a second resume, at the old ply,
    just before this restart's own)."""
    return [event for event in events if event.get("type") not in ("game_resumed", "speech")]


def setup_logging(
    stream: TextIO, environ: dict[str, str] | None = None, verbose: bool = False
) -> None:
    """Log lines on ``stream``; under systemd (``JOURNAL_STREAM`` set) without our own
    timestamps, since the journal stamps every line itself."""
    import os

    env = os.environ if environ is None else environ
    handler = logging.StreamHandler(stream)
    if env.get("JOURNAL_STREAM"):
        handler.setFormatter(_JournalFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)


class _JournalFormatter(logging.Formatter):
    """``<priority>message``: journald reads the syslog priority prefix and stamps the
    time itself, so ``journalctl -p err`` finds a storage or speech failure."""

    PRIORITIES = ((logging.ERROR, 3), (logging.WARNING, 4), (logging.INFO, 6))

    def format(self, record: logging.LogRecord) -> str:
        priority = next((p for level, p in self.PRIORITIES if record.levelno >= level), 7)
        text = record.getMessage()
        if record.exc_info:
            text += " | " + self.formatException(record.exc_info).replace("\n", " | ")
        return f"<{priority}>{text}"
