"""The daemon: board link -> rules core -> outputs, in one asyncio process.

Everything runs on one event loop, and nothing on it may wait for anything slow:

- the board link reads the serial port through ``loop.add_reader`` and calls
  ``_on_sensor`` for each sensor event;
- the rules core is pure and fast: ``feed`` returns domain events at once, and its
  timers (settle time) are one ``loop.call_later`` at ``next_deadline()``, no polling;
- each domain event goes, in order, to the journal (disk first: a lost move is the
  worst failure), the event feed (stdout or a file), the log, the announcer's queue,
  the broadcast hub and the clock display; each output only queues work for its own
  task (speech in a worker, HTTP clients with bounded queues, clock commands one at a
  time), so a slow speaker, viewer or clock never holds up the next move.

Time: the rules core gets seconds on a monotonic clock. After a restart the clock
continues from the journal's last time, so a game's journal stays in order. The demo
runs the whole daemon on a faster clock (``time_scale``): the core's settle time is in
game seconds, so an accelerated game is decided exactly as one played at speed 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import chess

from daemon.config import Settings
from daemon.events import DomainEvent, Notice
from daemon.gamerecord import GameHeaders, today_pgn_date
from daemon.journal import Journal, ResumePoint, find_unfinished
from daemon.notify import Notifier
from daemon.rules import RulesCore
from daemon.speech.announcer import Announcer
from daemon.speech.engines import build_engine
from daemon.speech.phrases import make_describer
from daemon.speech.vocabulary import Vocabulary, load_vocabulary
from drivers.clock.dgt3000 import ClockWriter, DgtClockInterpreter
from drivers.dgt.link import BoardLink
from drivers.sensors import (
    BoardDump,
    ConnectionChange,
    MagicPiece,
    SensorEvent,
    SquareChange,
)

log = logging.getLogger("dgt-bridge")

#: The board's id when the configuration names none (no broadcast section).
DEFAULT_BOARD_ID = "1"


def configured_board_id(settings: Settings) -> str:
    """The id this daemon's board has in URLs, MQTT topics and ``/game.pgn``: the first
    of ``broadcast.boards`` (a hall gives each daemon its own), else "1"."""
    boards = getattr(settings.broadcast, "boards", None)
    return boards[0].id if boards else DEFAULT_BOARD_ID


class Daemon:
    """One board's daemon. ``await run()`` until ``stop()`` (or a signal).

    ``port`` overrides ``settings.board.port``; ``events_out`` receives the event feed
    as JSON lines; ``speech`` False leaves the announcer out (the log still has every
    move); ``on_event`` is called with each feed dict (the demo watches the game end);
    ``speech_text`` is where the text engine (speech's last fallback) writes;
    ``board_id`` names the board (default: :func:`configured_board_id`).
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
    ) -> None:
        self.settings = settings
        self.board_id = board_id or configured_board_id(settings)
        self.port = port or settings.board.port
        self.events_out = events_out
        self.speech_enabled = speech
        self.time_scale = time_scale
        self.storage_dir = storage_dir or settings.storage.resolved_directory()
        self.resume_enabled = resume
        self.on_event = on_event
        self.notifier = notifier or Notifier()
        self.speech_text = speech_text  # where the text engine writes (default: stdout)

        self._t0 = time.monotonic()
        self._offset = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._stopped = asyncio.Event()
        self._tasks: list[asyncio.Task[Any]] = []
        self._link_task: asyncio.Task[Any] | None = None
        self._clock_frames: asyncio.Queue[bytes] | None = None
        self._pending_clock_end: asyncio.TimerHandle | None = None
        self._journal_sync_pending = False
        self._speech_running = False  # the announcer's engines have started
        self._board_connected = False  # the board link has read the board
        self.exit_code = 0

        self.headers = _game_headers(settings)
        self.journal = Journal(self.storage_dir, headers=self.headers, fsync=settings.storage.fsync)
        self.vocabulary = load_vocabulary(settings.speech.vocabulary)  # once, for all parts
        self.core = self._make_core()
        self.clock_interpreter = _make_clock_interpreter(settings)
        self.clock_writer = _make_clock_writer(settings)
        self.link: BoardLink | None = None
        self.announcer: Announcer | None = None
        self.hub: Any = None  # daemon.broadcast.Broadcaster, imported only when enabled
        self.http_url: str | None = None

    # -- time ---------------------------------------------------------------------------

    def now(self) -> float:
        """Seconds on the daemon's clock (game seconds when the demo speeds time up)."""
        return self._offset + (time.monotonic() - self._t0) * self.time_scale

    # -- wiring ---------------------------------------------------------------------------

    def _make_core(self) -> RulesCore:
        """The rules core, with the speech's Appendix E phrasing for the Move events'
        ``speech`` field and the clock section's say on clock and buttons."""
        speech = self.settings.speech
        describer = make_describer(self.vocabulary, form=speech.form, say_pawn=speech.say_pawn)
        clock = self.settings.clock
        rules = replace(
            self.settings.rules,
            describe_move=describer,
            time_control=clock.parsed_time_control,  # 6.11: both flags in the last period
        )
        if clock.device == "none":
            rules = replace(rules, use_clock=False)
        if clock.button_actions:
            actions = {b: a for b, a in clock.button_actions.items() if a != "none"}
            rules = replace(rules, button_actions=actions)
        return RulesCore(rules)

    async def start(self) -> None:
        """Start every output, resume an unfinished game, then the board link."""
        loop = asyncio.get_running_loop()
        if self.resume_enabled:
            self._resume(find_unfinished(self.storage_dir))
        if self.speech_enabled:
            text = self.speech_text
            if text is None and self.events_out is not None and self.events_out is sys.stdout:
                text = sys.stderr  # stdout carries the JSON feed
            self.announcer = _make_announcer(
                self.settings, self.vocabulary, self._speech_problem, text
            )
            if self.announcer is not None:
                self.announcer.catch_up(self.journal.game_events)  # known, not spoken
                self._spawn(self._run_announcer(self.announcer), "announcer")
        self.hub, self.http_url = await _start_broadcast(self.settings, self._on_request, self.now)
        if self.hub is not None:
            for event in journal_history(self.journal.game_events):  # a resumed game
                self.hub.publish(self.board_id, event)
        port = None if self.port in (None, "", "auto") else self.port
        self.link = BoardLink(
            port,
            self._on_sensor,
            clock_interpreter=self.clock_interpreter,
            time_source=self.now,
        )
        self._link_task = self._spawn(self.link.run(), "board link")
        self._clock_frames = asyncio.Queue()
        self._spawn(self._send_clock_frames(), "clock display")
        self._spawn(self.notifier.watchdog(), "watchdog")
        self._spawn(self._report_battery(), "battery")
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.stop)
        where = f"board {port or 'auto-detect'}"
        if self.http_url:
            where += f", live page {self.http_url}"
        log.info("dgt-bridge running: %s, games in %s", where, self.storage_dir)
        self.notifier.ready(f"reading {port or 'auto-detected board'}")

    async def _run_announcer(self, announcer: Announcer) -> None:
        """The speech engines start (pyttsx3's worker process takes about a second,
        more on a Pi) while the link and the page come up; what is to be said
        meanwhile waits in the announcer's queue."""
        try:
            await announcer.engine.start()
        except Exception as exc:  # the game goes on unspoken, and says so
            log.error("SPEECH NOT AVAILABLE: %s (moves are only logged)", exc)
            self.announcer = None
            return
        self._speech_running = True
        await announcer.run()

    async def run(self) -> int:
        await self.start()
        try:
            await self.wait_stopped()
        finally:
            await self.close()
        return self.exit_code

    def stop(self) -> None:
        self._stopped.set()

    async def wait_stopped(self) -> None:
        """Until ``stop()`` (a signal, a failed task, the caller)."""
        await self._stopped.wait()

    async def close(self) -> None:
        self.notifier.stopping()
        if self._timer is not None:
            self._timer.cancel()
        if self._pending_clock_end is not None:
            self._pending_clock_end.cancel()
        if self.link is not None:
            self.link.close()
            with contextlib.suppress(Exception):  # let the link end its own way
                await asyncio.wait_for(asyncio.shield(self._link_task), 5)
        if self.announcer is not None and self._speech_running:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.announcer.drain(), 30)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.announcer is not None:
            with contextlib.suppress(Exception):
                await self.announcer.close()
        if self.hub is not None:
            with contextlib.suppress(Exception):
                await self.hub.stop()
        self.journal.close()
        self.notifier.close()

    def _spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        task.add_done_callback(self._task_done)
        self._tasks.append(task)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            log.error("%s stopped: %r", task.get_name(), error, exc_info=error)
            self.exit_code = 1
            self.stop()  # systemd restarts us (Restart=on-failure); the journal resumes

    # -- resume -----------------------------------------------------------------------------

    def _resume(self, point: ResumePoint | None) -> None:
        if point is None:
            return
        self._offset = point.last_t + 0.001
        self.journal.reopen(point)
        log.info(
            "resuming the game in %s at move %d: waiting for the board to agree",
            point.path,
            point.ply,
        )
        events = self.core.resume(
            self.now(),
            point.start_fen,
            point.uci_moves,
            point.illegal_counts,
            chess960=point.chess960,
        )
        self._resume_clock(point)
        self._publish(events)

    def _resume_clock(self, point: ResumePoint) -> None:
        """Tell the clock interpreter whose clock should be running: in a resumed game
        the side seen running first is the player on move, not necessarily White."""
        if self.clock_interpreter is None:
            return
        board = chess.Board(point.start_fen, chess960=point.chess960)
        for uci in point.uci_moves:
            board.push_uci(uci)
        by_colour = {"white": 0, "black": 0}
        first = "white" if chess.Board(point.start_fen).turn == chess.WHITE else "black"
        for ply in range(len(point.uci_moves)):
            mover = first if ply % 2 == 0 else ("black" if first == "white" else "white")
            by_colour[mover] += 1
        to_move = "white" if board.turn == chess.WHITE else "black"
        log.debug("clock: resumed game, %s to move, moves %s", to_move, by_colour)
        self.clock_interpreter.resume_game(to_move, by_colour["white"], by_colour["black"])

    # -- the core -----------------------------------------------------------------------------

    def submit(self, event: SensorEvent) -> None:
        """Feed one sensor event (the link, the web controls, the demo's arbiter)."""
        self._on_sensor(event)

    def _on_sensor(self, event: SensorEvent) -> None:
        if self.settings.board.orientation == "flipped":
            event = turned_round(event)
        if isinstance(event, ConnectionChange):
            self._board_status(event)
        elif isinstance(event, BoardDump) and not self._board_connected:
            # The link reports "connected" only after a loss; its first dump says it.
            self._board_status(ConnectionChange(event.t, "connected"))
        try:
            events = self.core.feed(event)
        except Exception:  # a bug in the core must not silence the board
            log.exception("the rules core failed on %r", event)
            events = [Notice(t=self.now(), code="internal_error", message="rules core error")]
        self._publish(events)
        self._schedule_tick()

    def _on_request(self, board_id: str, request: SensorEvent) -> None:
        """A web control (arbiter): a Request for this board, at the daemon's time."""
        if board_id == self.board_id:
            self.submit(replace(request, t=self.now()))

    def _schedule_tick(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        deadline = self.core.next_deadline()
        if deadline is None:
            return
        delay = max(0.0, (deadline - self.now()) / self.time_scale)
        self._timer = asyncio.get_running_loop().call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        deadline = self.core.next_deadline()
        t = self.now()
        if deadline is not None and t < deadline:
            t = deadline  # the loop's timer may fire a hair early
        try:
            events = self.core.tick(t)
        except Exception:
            log.exception("the rules core failed on tick(%s)", t)
            events = []
        self._publish(events)
        self._schedule_tick()

    def _speech_problem(self, message: str) -> None:
        """A speech engine failed: the arbiter must know a blind player hears nothing."""
        self._output(Notice(t=self.now(), code="speech_error", message=message).to_dict())

    def _board_status(self, event: ConnectionChange) -> None:
        """``systemctl status`` and the page show whether the board is there."""
        self._board_connected = event.state == "connected"
        if event.state == "connected":
            self.notifier.status(f"board connected ({self.link.port_path if self.link else ''})")
        else:
            self.notifier.status(f"BOARD LOST: {event.detail or 'no answer'}; reconnecting")
        self._hub_status(event)

    def _hub_status(self, event: ConnectionChange) -> None:
        if self.hub is not None:
            self.hub.set_status(self.board_id, connected=event.state == "connected")

    async def _report_battery(self) -> None:
        """A Bluetooth board's battery for the page and ``/state.json``: the link asks
        at start-up; the answer arrives whenever the board sends it."""
        last: int | None = None
        while True:
            await asyncio.sleep(5)
            battery = getattr(self.link, "battery", None)
            percent = battery.percent if battery is not None else None
            if percent is not None and percent != last and self.hub is not None:
                self.hub.set_status(self.board_id, battery=percent)
                last = percent

    # -- outputs -------------------------------------------------------------------------------

    def _publish(self, events: list[DomainEvent]) -> None:
        for event in events:
            self._output(event.to_dict())

    def _output(self, event: dict[str, Any]) -> None:
        notices = self.journal.append(event)  # disk first: the line survives a crash
        if self.events_out is not None:
            try:
                self.events_out.write(json.dumps(event, ensure_ascii=False) + "\n")
                self.events_out.flush()
            except (OSError, ValueError) as exc:
                log.error("event feed output failed: %s", exc)
                self.events_out = None
        # Clock times arrive every second: the journal keeps them, the log only on demand.
        log.log(
            logging.DEBUG if event.get("type") == "clock" else logging.INFO,
            "%s",
            describe_event(event),
        )
        if self.announcer is not None:
            self.announcer.handle(event)
        if self.hub is not None:
            self.hub.publish(self.board_id, event)
        if self.clock_writer is not None and self._clock_frames is not None:
            self._clock_event(event)
        if self.on_event is not None:
            self.on_event(event)
        self._sync_journal_soon()
        for notice in notices:
            self._output(notice)

    def _sync_journal_soon(self) -> None:
        """fsync and the PGN rewrite once the outputs have the event (the speech must not
        wait for an SD card); one sync serves every event of the same loop turn."""
        if self._journal_sync_pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a caller outside the daemon's): at once
            self._sync_journal()
            return
        self._journal_sync_pending = True
        loop.call_soon(self._sync_journal)

    def _sync_journal(self) -> None:
        self._journal_sync_pending = False
        self._speech_running = False  # the announcer's engines have started
        self._board_connected = False  # the board link has read the board
        for notice in self.journal.sync():
            self._output(notice)

    def _clock_event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "game_start" and self.clock_interpreter is not None:
            with contextlib.suppress(Exception):
                self.clock_interpreter.new_game()
        model = getattr(self.clock_interpreter, "model", None)
        if model:
            self.clock_writer.model = model
        schedule = self.clock_writer.schedule_for(event)
        if not schedule:
            return
        if self._pending_clock_end is not None:  # newer text: the old one's END is moot
            self._pending_clock_end.cancel()
            self._pending_clock_end = None
        for delay, frame in schedule:
            if delay <= 0:
                self._clock_frames.put_nowait(frame)
            else:  # back to the times after the move was shown (real seconds)
                self._pending_clock_end = asyncio.get_running_loop().call_later(
                    delay, self._clock_frames.put_nowait, frame
                )

    async def _send_clock_frames(self) -> None:
        """Clock display commands, one at a time; a failure costs only the display."""
        assert self._clock_frames is not None
        while True:
            frame = await self._clock_frames.get()
            if self.link is None or not self.link.connected:
                continue
            try:
                await self.link.send_clock_command(frame)
            except Exception as exc:
                log.debug("clock command %s not acknowledged: %s", frame.hex(), exc)


def turned_round(event: SensorEvent) -> SensorEvent:
    """A board configured as standing turned by 180 degrees (``board.orientation:
    flipped``): its sensors' a1 is the true h8. Mapped here, in the shell, so the rules
    core sees a board the right way round (it still recognises a turned start itself
    with ``auto``)."""
    if isinstance(event, SquareChange | MagicPiece):
        return replace(event, square=_turn_square(event.square))
    if isinstance(event, BoardDump):
        board = chess.BaseBoard(event.placement).transform(chess.flip_vertical)
        board = board.transform(chess.flip_horizontal)
        return replace(event, placement=board.board_fen())
    return event


def _turn_square(name: str) -> str:
    square = chess.parse_square(name)
    return chess.square_name(63 - square)


# --- the parts, each made from its own settings ----------------------------------------------


def _game_headers(settings: Settings) -> GameHeaders:
    game = settings.game
    return GameHeaders(
        event=game.event,
        site=game.site,
        date=today_pgn_date(),
        round=game.round,
        white=game.white,
        black=game.black,
    )


def _make_clock_interpreter(settings: Settings) -> DgtClockInterpreter | None:
    clock = settings.clock
    if clock.device != "dgt":
        return None
    return DgtClockInterpreter(clock.sides, clock.parsed_time_control)


def _make_clock_writer(settings: Settings) -> ClockWriter | None:
    clock = settings.clock
    if clock.device != "dgt":
        return None
    return ClockWriter(
        time_control=clock.parsed_time_control,
        show_moves=clock.show_moves_on_clock,
        set_and_run_at_start=clock.set_and_run_at_start,
    )


def _make_announcer(
    settings: Settings,
    vocabulary: Vocabulary,
    on_problem: Callable[[str], None] | None = None,
    text_stream: TextIO | None = None,
) -> Announcer | None:
    """The speech part's announcer (its engines not yet started), or None (logged)
    when it cannot be made.

    ``text_stream`` is where the text engine (the last fallback) writes: never the
    stdout that carries the JSON event feed."""
    try:
        speech = settings.speech
        engine = build_engine(
            speech, speech.voice or vocabulary.voice, text_stream=text_stream, on_problem=on_problem
        )
        return Announcer(speech, engine, vocabulary=vocabulary)
    except Exception as exc:  # the game goes on unspoken, and says so
        log.error("SPEECH NOT AVAILABLE: %s (moves are only logged)", exc)
        return None


async def _start_broadcast(
    settings: Settings, on_request: Callable[[str, Any], None], now: Callable[[], float]
) -> tuple[Any, str | None]:
    """The broadcast part's Broadcaster, started (or None when disabled or missing)."""
    broadcast = settings.broadcast
    if not broadcast.enabled:
        return None, None
    from daemon.broadcast import Broadcaster  # aiohttp only when the page is wanted

    _fill_broadcast_headers(broadcast, settings.game)
    broadcaster = Broadcaster(broadcast, on_request, now=now)
    try:
        await broadcaster.start()
    except OSError as exc:
        log.error(
            "LIVE PAGE NOT AVAILABLE: cannot listen on %s:%s: %s (the game goes on)",
            broadcast.address,
            broadcast.port,
            exc,
        )
        return None, None
    host = broadcast.address if broadcast.address not in ("0.0.0.0", "::", "") else "127.0.0.1"
    return broadcaster, f"http://{host}:{broadcaster.port}/"


def _fill_broadcast_headers(broadcast: Any, game: Any) -> None:
    """The ``game:`` section names the event and players; the broadcast's own keys win
    where set, so a hall configured for the broadcast keeps its names."""
    for key in ("event", "site", "round"):
        if getattr(broadcast, key, "?") in ("?", "") and getattr(game, key) not in ("?", ""):
            setattr(broadcast, key, getattr(game, key))
    boards = getattr(broadcast, "boards", None)
    if boards:
        for key in ("white", "black"):
            if getattr(boards[0], key, "?") in ("?", "") and getattr(game, key) not in ("?", ""):
                setattr(boards[0], key, getattr(game, key))


# --- the log: one line per event ---------------------------------------------------------------


def journal_history(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A resumed game's journal, for the page: its moves, not an earlier restart's
    ``game_resumed`` (published again it reads as a second resume, at the old ply,
    just before this restart's own)."""
    return [event for event in events if event.get("type") != "game_resumed"]


def describe_event(event: dict[str, Any]) -> str:
    """One readable line for the log (the journal has the JSON)."""
    kind = event.get("type")
    if kind == "move":
        number = (int(event["ply"]) + 1) // 2
        dots = "." if event.get("by") == "white" else "..."
        fix = " (correction)" if event.get("correction") else ""
        return f"move {number}{dots} {event.get('san')}: {event.get('speech')}{fix}"
    if kind == "irregularity":
        squares = " ".join(event.get("squares") or [])
        by = f" by {event['by']}" if event.get("by") else ""
        count = f" #{event['count']}" if event.get("count") else ""
        return f"IRREGULARITY {event.get('kind')}{by}{count} ({event.get('article')}) {squares}"
    if kind == "game_start":
        return f"game start {event.get('fen')}" + (
            " (board turned)" if event.get("flipped") else ""
        )
    if kind == "game_end":
        return f"game end {event.get('result')} ({event.get('reason')})"
    if kind == "game_resumed":
        return f"game resumed at move {(int(event.get('ply', 0)) + 2) // 2}"
    if kind == "notice":
        return f"NOTICE {event.get('code')}: {event.get('message')}"
    if kind == "clock":
        return f"clock white {event.get('white')} black {event.get('black')}"
    details = {k: v for k, v in event.items() if k not in ("t", "type")}
    return f"{kind} {json.dumps(details, ensure_ascii=False)}"


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
