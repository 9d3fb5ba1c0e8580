"""The daemon: one process beside one board or many, board link -> rules core -> outputs.

``Daemon`` reads a list of boards (``daemon.boards.board.Board``): ``board:`` in the
configuration is a list of one, ``boards:`` a list of many, and both run the same
code. The daemon holds what the boards share: the event loop, the live page (one
card per game, derived from the same list), the systemd notifier and status, the
chains of boards in DGT bus mode (one ``BusLink`` per chain) and the pairs of boards
bound to one game (``same_game_as``, Appendix E.1, ``daemon.boards.twoboards``).

Everything runs on one event loop, and nothing on it may wait for anything slow:

- a board's link reads the serial port through ``loop.add_reader`` and hands each
  sensor event to the board's pipeline (``daemon.boards.pipeline``);
- the rules core is pure and fast: ``judge`` returns domain events at once, and its
  timers (settle time) are one ``loop.call_later`` at ``next_deadline()``, no polling;
- each domain event goes, in order, to the journal (disk first: a lost move is the
  worst failure), the event feed (stdout or a file), the log, the announcer's queue,
  the broadcast hub and the clock display; each output only queues work for its own
  task (speech in a worker, HTTP clients with bounded queues, clock commands one at a
  time), so a slow speaker, viewer or clock never holds up the next move.

Start-up order, and what READY means (``docs/daemon.md``): ``READY=1`` goes to
systemd once a move on every board is read, decided and journalled: each board's
resumed game, its rules core, its journal and its link are up. The speech (the
announcers and pyttsx3's worker process) and the live page (aiohttp: a third of the
start-up's CPU) start after it, in that order, their modules imported in a thread so
that the boards' bytes are read meanwhile; what a board says meanwhile waits in a
backlog for each, handed over in order once it is up, so nothing is lost or spoken
out of turn. On a Pi Zero 2 W's budget this is READY in 4-5 s instead of 12 s; half of
the instructions before it are python-chess's import (``benchmarks.ready_cost``).
``start()`` still returns only when all is up; ``STATUS=`` and the log say what is
still starting.

Why a board's fault stays its own: a link task that fails (a bug) is logged, shown
on that board's card and started again after a pause (``RESTART_AFTER``), for every
board, the single one included; the other boards go on. The boards of a chain share
one ``BusLink``, which reports a board that stops answering to that board alone. A
board's core, outputs and speech fail on their own: the pipeline catches its core's
errors, the links their handlers' errors, a failed speech is said on the feed.

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
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from daemon import compose
from daemon.boards.board import Board, journal_history
from daemon.boards.outputs import FeedWriter, MemoryBetweenGames, Output
from daemon.boards.pipeline import BoardPipeline, Cancellable, LoopScheduler, Scheduler
from daemon.compose import DEFAULT_BOARD_ID, configured_board_id, turned_round
from daemon.config import BoardEntry, Settings, board_entries
from daemon.game.events import BoardsAgree, Colour, DomainEvent, Irregularity
from daemon.game.formatting import describe_event
from daemon.service.gcfreeze import freeze_startup
from daemon.service.lifecycle import Lifecycle, quietly
from daemon.service.notify import Notifier
from daemon.service.status import DaemonStatus
from daemon.speech.speechfirst import SpeechFirst
from daemon.storage.diskwriter import DiskWriter
from daemon.storage.handin import HAND_IN, HandIn
from drivers.sensors import ConnectionChange, SensorEvent

if TYPE_CHECKING:
    from daemon.boards.twoboards import TwoBoardGame

__all__ = [
    "DEFAULT_BOARD_ID",
    "RESTART_AFTER",
    "Daemon",
    "configured_board_id",
    "describe_event",
    "journal_history",
    "setup_logging",
    "turned_round",
]

log = logging.getLogger("dgt-bridge")

#: Seconds before a failed link task is started again.
RESTART_AFTER = 5.0


def _as_is(event: SensorEvent) -> SensorEvent:
    return event


class _PairFollows:
    """An output of a two-board game's pipeline: the game's router follows the
    position the core decided; a hand-over dump goes to the core, and the boards'
    agreement is looked at (``tick``), once this decision has gone everywhere."""

    def __init__(
        self, pair: TwoBoardGame, pipeline: BoardPipeline, tick: Callable[[], None]
    ) -> None:
        self.pair = pair
        self.pipeline = pipeline
        self.tick = tick

    def receive(self, event: DomainEvent) -> None:
        if isinstance(event, BoardsAgree | Irregularity):
            return
        fed = self.pair.game_event(event)
        loop = asyncio.get_running_loop()
        for item in fed:
            loop.call_soon(self.pipeline.submit, item)
        loop.call_soon(self.tick)


class Daemon(Lifecycle):
    """The daemon of one board or many. ``await run()`` until ``stop()`` (or a signal).

    ``port`` overrides ``board.port`` (one board only); ``events_out`` receives the
    event feed as JSON lines (with a ``board`` field when the configuration lists
    ``boards:``); ``speech`` False leaves the announcers out (the log still has every
    move); ``on_event`` is called with each feed line as a dict (an embedding caller
    watches the feed); ``outputs``: board id -> one more output of that board's
    game, typed (the demos' transcripts); ``speech_text`` is where the text engine
    (speech's last fallback) writes; ``board_id`` names the single board on the page
    and in MQTT (default: :func:`configured_board_id`); ``scheduler``: every board's
    clock (a test's simulated time; default, each board its own loop clock);
    ``bus_timings``: the chains' polling.
    """

    #: A failed part must not stop the other boards: a link starts again instead.
    stop_on_failure = False

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
        outputs: Mapping[str, Output] | None = None,
        notifier: Notifier | None = None,
        speech_text: TextIO | None = None,
        board_id: str | None = None,
        scheduler: Scheduler | None = None,
        bus_timings: Any = None,
    ) -> None:
        self.settings = settings
        self.events_out = events_out
        self.speech_enabled = speech
        self.time_scale = time_scale
        self.storage_dir = storage_dir or settings.storage.resolved_directory()
        self.resume_enabled = resume
        self.notifier = notifier or Notifier()
        self.speech_text = speech_text  # where the text engine writes (default: stdout)
        self.bus_timings = bus_timings
        super().__init__()
        #: the boards, in the configuration's order; ``board:`` is a list of one
        self.entries: list[BoardEntry] = board_entries(settings, port=port, board_id=board_id)
        self.named = bool(settings.boards)  # feed lines and log lines name the board
        if any(entry.bus_port for entry in self.entries):
            # A chain's modules now, while the daemon is built, so that their classes
            # take their kept code (daemon.files.codecache); ``_bus`` makes the links.
            from drivers.dgt import buslink  # noqa: F401
        self.vocabulary = compose.load_vocabulary(settings)  # once, for all parts
        self.boards: dict[str, Board] = {}
        self.pairs: dict[str, Any] = {}  # game id -> its TwoBoardGame
        self.buses: dict[str, Any] = {}  # port -> BusLink
        self.hub: Any = None  # daemon.broadcast.Broadcaster, imported only when enabled
        self.http_url: str | None = None
        self.status = DaemonStatus(self.boards, self.notifier, lambda: self.hub)
        self._outputs_state = "starting"  # for STATUS=: speech and page after READY
        self._pair_timers: dict[str, Cancellable] = {}
        self._synthesis_seat: Any = None  # the first speaking board has the thread
        # one feed for every board's lines (a failing stream is dropped for all)
        feed = FeedWriter(events_out) if events_out is not None else None
        # every board's fsync and PGN rewrite, off the event loop (an SD card's fsync
        # takes 20-200 ms; ``daemon.storage.diskwriter``)
        self.disk_writer = DiskWriter()
        # a move's phrase first: every board's page and MQTT wait for its first sound
        # (a quarter of a second at most; ``daemon.speech.speechfirst``)
        self.speech_first = SpeechFirst()
        #: the games' memory handed back once no board's game is under way
        self.memory = MemoryBetweenGames()
        journal_dirs: dict[str, Path] = {}
        for entry in self.entries:
            journal_dir = Path(entry.journal) if entry.journal else self.storage_dir
            if self.named and not entry.journal:
                journal_dir = self.storage_dir / f"board-{entry.id}"
            if not entry.same_game_as:
                journal_dirs[entry.id] = journal_dir
        # each finished game named by round, board and players, and the round's file
        self.handin = HandIn(
            self.storage_dir / HAND_IN,
            journal_dirs,
            writer=self.disk_writer,
            fsync=settings.storage.fsync,
        )
        for entry in self.entries:
            journal_dir = journal_dirs.get(entry.id, self.storage_dir)
            self.boards[entry.id] = Board(
                entry,
                settings,
                journal_dir=journal_dir,
                scheduler=scheduler or LoopScheduler(time_scale),
                vocabulary=self.vocabulary,
                named=self.named,
                hub=lambda: self.hub,
                on_connection=self.status.connection,
                feed=feed,
                on_event=on_event,
                outputs=[outputs[entry.id]] if outputs and entry.id in outputs else None,
                speech_starting=speech and entry.speak,
                page_starting=settings.broadcast.enabled,
                disk_writer=self.disk_writer,
                handin=self.handin,
                speech_first=self.speech_first,
                memory=self.memory,
            )
        for entry in self.entries:
            if entry.same_game_as:
                self._bind_pair(entry)
        #: where each board's sensor events go (its link's, the controls', a test's)
        self._submit = {board.id: self._submitter(board) for board in self.boards.values()}

    # -- the single board's view ---------------------------------------------------------

    @property
    def board(self) -> Board:
        """The first board: the only one of ``board:``."""
        return next(iter(self.boards.values()))

    @property
    def board_id(self) -> str:
        return self.board.id

    @property
    def pipeline(self) -> Any:
        return self.board.pipeline

    @property
    def journal(self) -> Any:
        return self.board.journal

    @property
    def core(self) -> Any:
        return self.board.pipeline.core if self.board.pipeline is not None else None

    @property
    def link(self) -> Any:
        return self.board.link

    @property
    def announcer(self) -> Any:
        return self.board.announcer

    @property
    def clock_writer(self) -> Any:
        return self.board.pipeline.clock_writer if self.board.pipeline is not None else None

    def now(self) -> float:
        """Seconds on the first board's clock (game seconds when the demo speeds up)."""
        return self.board.scheduler.now()

    def submit(self, event: SensorEvent, board: str | None = None) -> None:
        """Feed one sensor event to the first board, or to ``board`` (the web
        controls, the demo's arbiter, a test)."""
        self._submit[board or self.board.id](event)

    # -- two boards, one game -----------------------------------------------------------------

    def _bind_pair(self, entry: BoardEntry) -> None:
        """``entry`` repeats the game of ``same_game_as``: one pipeline reads both."""
        from daemon.boards.twoboards import TwoBoardGame

        main = self.boards[entry.same_game_as]
        blind = self.boards[entry.id]
        own_side: Colour = entry.own_side or "black"
        other: Colour = "white" if own_side == "black" else "black"
        pair = TwoBoardGame(
            {own_side: entry.id, other: main.id},
            diverge_after=entry.diverge_after,
            clock_board=main.id,
        )
        self.pairs[main.id] = pair
        main.pair = pair
        assert main.pipeline is not None
        main.pipeline.outputs.insert(
            1, _PairFollows(pair, main.pipeline, lambda: self._pair_tick(main.id))
        )
        main.pipeline.orient = _as_is  # each board is turned (if at all) before the router
        blind.hears_game_of(main)  # the blind player hears the game on his own output

    def _submitter(self, board: Board) -> Callable[[SensorEvent], None]:
        """Where a board's sensor events go: its pipeline, or its game's router."""
        game_id = board.game.id
        orient = compose.build_orientation(board.settings)

        def submit(event: SensorEvent) -> None:
            pair = self.pairs.get(game_id)
            pipeline = self.boards[game_id].pipeline
            assert pipeline is not None
            if pair is None:
                pipeline.submit(event)  # its pipeline reports the connection
                return
            if isinstance(event, ConnectionChange):
                self.status.connection(board, event)
            elif board.connected is not True:
                self.status.connection(board, ConnectionChange(event.t, "connected"))
            for fed in pair.sensor(board.id, orient(event)):
                pipeline.submit(fed)
            self._pair_tick(game_id)

        return submit

    def _pair_tick(self, game_id: str) -> None:
        pair = self.pairs[game_id]
        board = self.boards[game_id]
        assert board.pipeline is not None
        events = pair.tick(board.scheduler.now())
        board.pipeline.publish(events)
        if events and self.hub is not None:
            squares = getattr(events[0], "squares", [])  # a boards_diverged Irregularity
            detail = "boards disagree: " + " ".join(squares) if pair.diverged else ""
            self.hub.set_status(game_id, detail=detail or self.status.detail(game_id))
        timer = self._pair_timers.pop(game_id, None)
        if timer is not None:
            timer.cancel()
        deadline = pair.next_deadline()
        if deadline is not None:
            handle = board.scheduler.call_at(deadline, lambda: self._pair_tick(game_id))
            self._pair_timers[game_id] = handle

    # -- start ----------------------------------------------------------------------------------

    async def start(self) -> None:
        """Every board in the single board's order: resume, its link; READY; then the
        speech and the live page (see the module's docstring). Returns when all are up."""
        for board in self.boards.values():
            if self.resume_enabled:
                board.resume()
        for board in self.boards.values():
            board.keep_known()
        self.notifier.add_detail("outputs", self._outputs_line)
        for board in self.boards.values():
            self._start_link(board)
        for port, bus in self.buses.items():
            on_bus = [b for b in self.boards.values() if b.entry.bus_port == port]
            self._spawn_guarded(bus.run, f"bus {port}", on_bus)
        self._spawn(self.notifier.watchdog(), "watchdog")
        self._handle_signals()
        starting = self._starting_outputs()
        log.info(
            "dgt-bridge running: %s, games in %s%s",
            self._reading(),
            self.storage_dir,
            f"; starting {starting}" if starting else "",
        )
        self.notifier.ready(self._ready_line())
        await self._start_outputs()

    def _reading(self) -> str:
        if self.named:
            return f"{len(self.boards)} boards"
        return f"board {compose.board_port(self.board.settings) or 'auto-detect'}"

    def _ready_line(self) -> str:
        if self.named:
            return self.status.line()
        return f"reading {compose.board_port(self.board.settings) or 'auto-detected board'}"

    def _start_link(self, board: Board) -> None:
        submit = self._submit[board.id]
        if board.entry.bus_port:
            board.attach_bus(self._bus(board.entry.bus_port), submit)
            return
        link = board.attach_link(submit, lambda battery: self.status.battery(board, battery))
        self._spawn_guarded(link.run, f"board {board.id} link", [board])
        if board.clock_display is not None:
            self._spawn(board.clock_display.run(), f"clock display {board.id}")

    def _bus(self, port: str) -> Any:
        """The chain's ``BusLink`` on ``port``, made for its first board."""
        bus = self.buses.get(port)
        if bus is None:
            from drivers.dgt.bus import BusTimings
            from drivers.dgt.buslink import BusLink

            bus = BusLink(
                port,
                timings=self.bus_timings or BusTimings(),
                on_new_board=lambda address: log.warning(
                    "bus %s: a board with address %d is on the chain but not in boards:",
                    port,
                    address,
                ),
            )
            self.buses[port] = bus
        return bus

    def _spawn_guarded(
        self, run: Callable[[], Any], name: str, boards: list[Board]
    ) -> asyncio.Task[Any]:
        """A link's task, started again after a failure: a bug in one board's part
        shows on that board's card and never stops the others."""

        def lost(exc: Exception) -> None:
            for board in boards:
                self.status.connection(
                    board, ConnectionChange(0.0, "lost", f"{name} failed: {exc!r}")
                )

        return self._spawn_restarting(run, name, lost, RESTART_AFTER)

    def _starting_outputs(self) -> str:
        """What starts after READY, in words ("" when nothing)."""
        parts = ["speech"] if self._speaking() else []
        if self.settings.broadcast.enabled:
            parts.append("the live page")
        return " and ".join(parts)

    def _speaking(self) -> list[Board]:
        if not self.speech_enabled:
            return []
        return [b for b in self.boards.values() if b.entry.speak]

    async def _start_outputs(self) -> None:
        """After READY: the speech first (a blind player's ears), then the live page,
        each imported in a thread (the boards' bytes are read meanwhile) and handed
        what each board said while it was starting."""
        speaking = self._speaking()
        await asyncio.to_thread(compose.import_after_ready, bool(speaking), False)
        for board in self.boards.values():
            if board in speaking:
                self._start_speech(board)
            else:
                board.no_speech()
        if self.settings.broadcast.enabled:
            await asyncio.to_thread(compose.import_after_ready, False, True)
        broadcast = replace(self.settings, broadcast=broadcast_cards(self.settings, self.entries))
        hub, self.http_url = await compose.start_broadcast(
            broadcast,
            self._on_request,
            self.now,
            self.notifier,
            self._phone_line,
            {
                "lang": self.vocabulary.voice.split("+")[0],
                "requests": dict(self.vocabulary.requests),
                "colours": dict(self.vocabulary.colours),
            },
        )
        self.hub = hub
        for board in self.boards.values():
            board.hand_to_page(hub)
            await asyncio.sleep(0)  # a resumed board's history, then the lines are read
        if hub is not None:
            self.status.to_page(hub)
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

    # -- speech ---------------------------------------------------------------------------------

    def _start_speech(self, board: Board) -> None:
        text = self.speech_text
        if text is None and self.events_out is not None and self.events_out is sys.stdout:
            text = sys.stderr  # stdout carries the JSON feed
        if self._synthesis_seat is None:
            from daemon.speech.settings import SynthesisSeat

            self._synthesis_seat = SynthesisSeat()
        announcer = board.make_announcer(
            self.vocabulary, text, self._synthesis_seat, lambda m: self._speech_problem(board, m)
        )
        if announcer is not None:
            self._spawn(self._run_announcer(board), f"speech {board.id}")

    async def _run_announcer(self, board: Board) -> None:
        """The speech engines start (pyttsx3's worker process takes about a second,
        more on a Pi) after READY, while the page comes up; what is to be said
        meanwhile waits in the announcer's queue."""
        try:
            await board.announcer.start()
        except Exception as exc:  # the game goes on unspoken, and says so
            log.error("%sSPEECH NOT AVAILABLE: %s (moves are only logged)", board.prefix, exc)
            board.announcer = None
            return
        board.speech_running = True
        await board.announcer.run()

    def _speech_problem(self, board: Board, message: str) -> None:
        """A speech engine failed: the arbiter must know a blind player hears nothing."""
        game = board.game.pipeline
        if game is not None:
            game.notice("speech_error", board.prefix + message)

    # -- requests from the page ---------------------------------------------------------------

    def _phone_line(self, board_id: str, side: str) -> Any:
        """A player's line to his phone page: a speaking game board's, else None."""
        board = self.boards.get(board_id)
        if board is None or board.announcer is None:
            return None
        return board.phones.get(side)

    def _on_request(self, board_id: str, request: SensorEvent) -> Any:
        """A web control (arbiter): a Request for that board's game, at its time. A
        penalty returns what became of it on the clock (awaited by the answer)."""
        board = self.boards.get(board_id)
        if board is None or board.pipeline is None:
            return None
        display = board.clock_display
        if display is not None:
            display.penalty = None  # only this request's penalty is its answer
        board.pipeline.submit(replace(request, t=board.scheduler.now()))
        if getattr(request, "action", None) == "penalty":
            return board.penalty_answer()
        return None

    # -- close ------------------------------------------------------------------------------------

    async def close(self, drain_speech: bool = True) -> None:
        """Stop the boards first, say what is still queued (unless ``drain_speech`` is
        False: a user's Ctrl-C means now), then close every output. Every wait is
        bounded: a stuck board must not hang the exit of the others."""
        self.notifier.stopping()
        for timer in self._pair_timers.values():
            timer.cancel()
        for board in self.boards.values():
            board.close_board()
        for bus in self.buses.values():
            bus.close()
        links = [t for t in self._tasks if t.get_name().endswith(" link")]
        with contextlib.suppress(Exception):  # let the links end their own way
            await asyncio.wait_for(asyncio.gather(*map(asyncio.shield, links)), 5)
        if drain_speech:
            speaking = [b.announcer for b in self.boards.values() if b.speech_running]
            await asyncio.gather(*(quietly(a, "drain", 30) for a in speaking if a is not None))
        await self._end_tasks(bound=5)
        for board in self.boards.values():
            if board.announcer is not None:
                await quietly(board.announcer, "close", 5)
        self.speech_first.release_all()  # what waited for a first sound goes out now
        if self.hub is not None:
            await quietly(self.hub, "stop", 10)
        for board in self.boards.values():
            board.close_journal()
        self.disk_writer.stop()
        self._release_signals()
        self.notifier.close()


def broadcast_cards(settings: Settings, entries: list[BoardEntry]) -> Any:
    """The broadcast section with one card per game, derived from the boards' list
    (a bound board shows its game's); a card ``broadcast.boards`` names keeps its
    own keys (round, orientation), the board's names win where it has them."""
    from daemon.broadcast.settings import BoardSettings as Card

    named = {card.id: card for card in getattr(settings.broadcast, "boards", None) or []}
    cards = []
    for entry in entries:
        if entry.same_game_as:
            continue
        card = named.get(entry.id) or Card(id=entry.id)
        cards.append(
            replace(
                card,
                label=entry.label or card.label,
                white=entry.white if entry.white not in ("", "?") else card.white,
                black=entry.black if entry.black not in ("", "?") else card.black,
            )
        )
    return replace(settings.broadcast, boards=cards)


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
