"""One daemon, many boards: the ``boards:`` list of the configuration.

A club broadcasts from one computer beside the boards: a chain of serial boards read
in DGT bus mode, several USB boards through a hub, or both. Each board gets what a
single-board daemon has, made by the same composition root: its own rules core,
clock interpreter, journal (its own directory) and game record, its own speech if it
speaks, as one ``BoardPipeline``; they share the event loop, the live page (one card
per board, one ``/game.pgn``), MQTT and the systemd status.

Why a board's fault stays its own:

- each USB board has its own ``BoardLink``; the boards of a chain share one
  ``BusLink``, which reports a board that stops answering to that board alone and
  polls the others on;
- a link task that fails (a bug) is logged, shown on that board's card and started
  again after a pause; the daemon and the other boards go on (a single-board daemon
  exits and lets systemd restart it, which here would stop every board);
- the rules core, the outputs and the speech of a board fail on their own: the
  pipeline catches its core's errors, the links catch their handlers' errors.

Two boards bound to one game (``same_game_as``, Appendix E.1) share one pipeline:
``daemon.twoboards`` decides which board's events reach the core and reports when
the boards disagree.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from daemon import compose
from daemon.clockdisplay import ClockDisplay
from daemon.config import BoardEntry, BoardSettings, Settings
from daemon.events import BoardsAgree, Colour, DomainEvent, Irregularity
from daemon.formatting import describe
from daemon.gcfreeze import freeze_startup
from daemon.journal import Journal, find_unfinished
from daemon.lifecycle import Lifecycle, quietly
from daemon.notify import Notifier
from daemon.pipeline import BoardPipeline, Cancellable, FeedWriter, LoopScheduler, Output
from daemon.speech.settings import SynthesisSeat
from daemon.twoboards import TwoBoardGame
from drivers.sensors import ConnectionChange, SensorEvent

log = logging.getLogger("dgt-bridge")

#: Seconds before a failed link task is started again.
RESTART_AFTER = 5.0


def _as_is(event: SensorEvent) -> SensorEvent:
    return event


def board_settings(settings: Settings, entry: BoardEntry) -> Settings:
    """One board's settings: the file's sections with this board's port, orientation,
    players and its own clock and speech keys."""
    game = settings.game
    return replace(
        settings,
        board=BoardSettings(port=entry.port or "auto", orientation=entry.orientation),
        clock=entry.clock if entry.clock is not None else settings.clock,
        speech=entry.speech if entry.speech is not None else settings.speech,
        game=replace(
            game,
            white=entry.white if entry.white not in ("", "?") else game.white,
            black=entry.black if entry.black not in ("", "?") else game.black,
        ),
        boards=[],
    )


def broadcast_settings(settings: Settings) -> Any:
    """The broadcast section with one card per game (a bound board shows its game's)."""
    from daemon.broadcast.settings import BoardSettings as CardSettings

    cards = [
        CardSettings(id=e.id, label=e.label, white=e.white, black=e.black)
        for e in settings.boards
        if not e.same_game_as
    ]
    return replace(settings.broadcast, boards=cards)


@dataclass
class BoardUnit:
    """One board of the hall, with whatever it is made of."""

    entry: BoardEntry
    settings: Settings
    journal_dir: Path
    pipeline: BoardPipeline | None = None  # None: a bound board (its game's pipeline reads it)
    game_id: str = ""
    scheduler: LoopScheduler | None = None
    announcer: Any = None
    link: Any = None
    clock_display: ClockDisplay | None = None
    connected: bool | None = None
    detail: str = "not yet read"
    bus_address: int | None = None


class HallDaemon(Lifecycle):
    """The daemon for ``boards:``. ``await run()`` until ``stop()`` (or a signal).

    ``on_event(board_id, event)`` hears every feed event of every board (tests, the
    benchmark); ``events_out`` gets them as JSON lines with a ``board`` field."""

    #: A failed part must not stop the other boards: a link starts again instead.
    stop_on_failure = False

    def __init__(
        self,
        settings: Settings,
        *,
        events_out: TextIO | None = None,
        speech: bool = True,
        time_scale: float = 1.0,
        storage_dir: Path | None = None,
        resume: bool = True,
        on_event: Callable[[str, dict[str, Any]], None] | None = None,
        notifier: Notifier | None = None,
        speech_text: TextIO | None = None,
        bus_timings: Any = None,
    ) -> None:
        if not settings.boards:
            raise ValueError("HallDaemon needs a boards: list (Daemon reads one board)")
        self.settings = settings
        self.speech_enabled = speech
        self.time_scale = time_scale
        self.storage_dir = storage_dir or settings.storage.resolved_directory()
        self.resume_enabled = resume
        self.on_event = on_event
        self.notifier = notifier or Notifier()
        self.speech_text = speech_text
        # the synthesis thread for the first speaking board, a worker for the others
        self.synthesis_seat = SynthesisSeat()
        self.bus_timings = bus_timings
        # one feed for every board's lines (a failing stream is dropped for all)
        self._feed = FeedWriter(events_out) if events_out is not None else None
        self.vocabulary = compose.load_vocabulary(settings)
        self.units: dict[str, BoardUnit] = {}
        self.pairs: dict[str, TwoBoardGame] = {}  # game id -> its two boards
        self.buses: dict[str, Any] = {}  # port -> BusLink
        self.hub: Any = None
        self.http_url: str | None = None
        super().__init__()
        self._pair_timers: dict[str, Cancellable] = {}
        for entry in settings.boards:
            self._make_unit(entry)
        for entry in settings.boards:
            if entry.same_game_as:
                self._bind_pair(entry)

    # -- making the boards ------------------------------------------------------------------

    def _make_unit(self, entry: BoardEntry) -> None:
        own = board_settings(self.settings, entry)
        journal_dir = (
            Path(entry.journal) if entry.journal else self.storage_dir / f"board-{entry.id}"
        )
        unit = BoardUnit(entry, own, journal_dir, game_id=entry.id)
        self.units[entry.id] = unit
        if entry.same_game_as:
            return  # read through its game's pipeline
        unit.scheduler = LoopScheduler(self.time_scale)
        journal = Journal(
            journal_dir,
            headers=compose.build_headers(own),
            fsync=own.storage.fsync,
            pgn_every=own.storage.pgn_every,
        )
        parts = compose.build_board_parts(own, self.vocabulary)
        outputs: list[Output] = [
            self._writer(entry.id),
            self._logger(entry.id),
            self._announce(unit),
            self._publisher(entry.id),
        ]
        if self.on_event is not None:
            outputs.append(self._watcher(entry.id))
        unit.pipeline = BoardPipeline(
            entry.id,
            parts,
            unit.scheduler,
            journal=journal,
            outputs=outputs,
            on_connection=partial(self._connection, unit),
        )

    def _bind_pair(self, entry: BoardEntry) -> None:
        """``entry`` repeats the game of ``same_game_as``: one pipeline reads both."""
        main = self.units[entry.same_game_as]
        blind = self.units[entry.id]
        own_side: Colour = entry.own_side or "black"
        other: Colour = "white" if own_side == "black" else "black"
        game = TwoBoardGame(
            {own_side: entry.id, other: main.entry.id},
            diverge_after=entry.diverge_after,
            clock_board=main.entry.id,
        )
        self.pairs[main.entry.id] = game
        blind.game_id = main.entry.id
        blind.scheduler = main.scheduler
        assert main.pipeline is not None
        main.pipeline.outputs.insert(1, partial(self._pair_decided, main.entry.id))
        main.pipeline.orient = _as_is  # each board is turned (if at all) before the router
        # The blind player hears the game on his own output, and only his own fixes.
        main.pipeline.outputs.append(self._announce(blind))

    # -- outputs ------------------------------------------------------------------------------

    def _writer(self, board_id: str) -> Output:
        def write(event: DomainEvent) -> None:
            if self._feed is not None:
                self._feed.write({"board": board_id, **event.to_dict()})

        return write

    @staticmethod
    def _logger(board_id: str) -> Output:
        def line(event: DomainEvent) -> None:
            level = logging.DEBUG if event.type == "clock" else logging.INFO
            if log.isEnabledFor(level):
                log.log(level, "board %s: %s", board_id, describe(event))

        return line

    def _announce(self, unit: BoardUnit) -> Output:
        """This board's speech (when it speaks). In a two-board game each player hears
        the fixes for his own board only."""

        def say(event: DomainEvent) -> None:
            if unit.announcer is None:
                return
            pair = self.pairs.get(unit.game_id)
            if (
                pair is not None
                and isinstance(event, Irregularity)
                and event.kind == "boards_diverged"
                and event.by != pair.owner_of(unit.entry.id)
            ):
                return
            unit.announcer.handle(event)

        return say

    def _publisher(self, board_id: str) -> Output:
        def publish(event: DomainEvent) -> None:
            if self.hub is not None:
                self.hub.publish(board_id, event.to_dict())

        return publish

    def _watcher(self, board_id: str) -> Output:
        def watch(event: DomainEvent) -> None:
            assert self.on_event is not None
            self.on_event(board_id, event.to_dict())

        return watch

    # -- life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        if self.resume_enabled:
            for unit in self.units.values():
                self._resume(unit)
        if self.speech_enabled:
            for unit in self.units.values():
                if unit.entry.speak:
                    self._start_speech(unit)
        broadcast = replace(self.settings, broadcast=broadcast_settings(self.settings))
        self.hub, self.http_url = await compose.start_broadcast(
            broadcast, self._on_request, self._now, self.notifier
        )
        if self.hub is not None:
            for unit in self.units.values():
                if unit.pipeline is not None and unit.pipeline.journal is not None:
                    for event in unit.pipeline.journal.game_events:
                        if event.get("type") != "game_resumed":
                            self.hub.publish(unit.entry.id, event)
        for unit in self.units.values():
            self._start_link(unit)
        for port, bus in self.buses.items():
            self._spawn_guarded(
                bus.run, f"bus {port}", [u for u in self.units.values() if u.entry.bus_port == port]
            )
        self._spawn(self.notifier.watchdog(), "watchdog")
        self._handle_signals()
        where = f"{len(self.units)} boards"
        if self.http_url:
            where += f", live page {self.http_url}"
        log.info("dgt-bridge running: %s, games in %s", where, self.storage_dir)
        self.notifier.ready(self._summary())
        freeze_startup()  # start-up's objects out of the GC's walks

    def _now(self) -> float:
        first = next(iter(self.units.values()))
        return first.scheduler.now() if first.scheduler is not None else 0.0

    def _resume(self, unit: BoardUnit) -> None:
        pipeline = unit.pipeline
        if pipeline is None or pipeline.journal is None or unit.scheduler is None:
            return
        point = find_unfinished(unit.journal_dir)
        if point is None:
            return
        unit.scheduler.offset = point.last_t + 0.001
        pipeline.journal.reopen(point)
        log.info(
            "board %s: resuming the game in %s at move %d", unit.entry.id, point.path, point.ply
        )
        pipeline.resume(point)

    def _start_speech(self, unit: BoardUnit) -> None:
        unit.announcer = compose.build_announcer(
            unit.settings,
            self.vocabulary,
            partial(self._speech_problem, unit),
            self.speech_text,
            partial(self._speech_outcome, unit),
            seat=self.synthesis_seat,
        )
        if unit.announcer is None:
            return
        game = self.units[unit.game_id].pipeline
        if game is not None and game.journal is not None:
            unit.announcer.catch_up(game.journal.game_events)
        self._spawn(self._run_announcer(unit), f"speech {unit.entry.id}")

    async def _run_announcer(self, unit: BoardUnit) -> None:
        try:
            await unit.announcer.start()
        except Exception as exc:
            log.error("board %s: SPEECH NOT AVAILABLE: %s", unit.entry.id, exc)
            unit.announcer = None
            return
        await unit.announcer.run()

    def _speech_outcome(self, unit: BoardUnit, record: dict[str, Any]) -> None:
        """What a board's speech heard, cut or dropped goes into its game's journal,
        as the single-board daemon does (``board`` names the board whose earphone it
        was when two boards share the game)."""
        game = self.units[unit.game_id]
        if game.pipeline is None or game.pipeline.journal is None or game.scheduler is None:
            return
        line: dict[str, Any] = {"t": round(game.scheduler.now(), 6), **record}
        if game is not unit:
            line["board"] = unit.entry.id
        game.pipeline.journal.append(line)

    def _speech_problem(self, unit: BoardUnit, message: str) -> None:
        game = self.units[unit.game_id].pipeline
        if game is not None:
            game.notice("speech_error", f"board {unit.entry.id}: {message}")

    def _start_link(self, unit: BoardUnit) -> None:
        entry = unit.entry
        submit = self._submitter(unit)
        game = self.units[unit.game_id]
        if game is unit and game.pipeline is not None:
            interpreter = game.pipeline.clock_interpreter  # the one a resume tells
        else:
            interpreter = compose.build_clock_interpreter(unit.settings)
        scheduler = game.scheduler
        assert scheduler is not None
        if entry.bus_port:
            from drivers.dgt.bus import BusTimings, bus_address
            from drivers.dgt.buslink import BusLink

            bus = self.buses.get(entry.bus_port)
            if bus is None:
                bus = BusLink(
                    entry.bus_port,
                    timings=self.bus_timings or BusTimings(),
                    on_new_board=partial(_unknown_bus_board, entry.bus_port),
                )
                self.buses[entry.bus_port] = bus
            unit.bus_address = bus_address(entry.bus_serial)
            bus.add_board(unit.bus_address, submit, interpreter, time_source=scheduler.now)
            unit.link = bus
            return
        unit.link = compose.build_link(
            unit.settings, submit, port=entry.port, clock_interpreter=interpreter,
            time_source=scheduler.now,
        )  # fmt: skip
        if game is unit and game.pipeline is not None:
            unit.link.expect_placements(game.pipeline.resumed_placements())  # the EEPROM log
            game.pipeline.probe_board = unit.link.probe  # a held alarm asks the board at once
        self._spawn_guarded(unit.link.run, f"board {entry.id} link", [unit])
        writer = compose.build_clock_writer(unit.settings)
        if writer is not None and game.pipeline is not None and game is unit:
            unit.clock_display = ClockDisplay(writer, interpreter, partial(_link_of, unit))
            game.pipeline.outputs.append(unit.clock_display)
            self._spawn(unit.clock_display.run(), f"clock display {entry.id}")

    def _submitter(self, unit: BoardUnit) -> Callable[[SensorEvent], None]:
        """Where a board's sensor events go: its pipeline, or its game's router."""
        game_id = unit.game_id
        board_id = unit.entry.id

        orient = compose.build_orientation(unit.settings)

        def submit(event: SensorEvent) -> None:
            pair = self.pairs.get(game_id)
            pipeline = self.units[game_id].pipeline
            assert pipeline is not None
            if pair is None:
                pipeline.submit(event)  # its pipeline reports the connection
                return
            if isinstance(event, ConnectionChange):
                self._connection(unit, event)
            elif unit.connected is not True:
                self._connection(unit, ConnectionChange(event.t, "connected"))
            for fed in pair.sensor(board_id, orient(event)):
                pipeline.submit(fed)
            self._pair_tick(game_id)

        return submit

    # -- two boards, one game ----------------------------------------------------------------

    def _pair_decided(self, game_id: str, event: DomainEvent) -> None:
        """The game's core decided something: the router follows the position; a
        hand-over dump goes to the core once this decision has gone everywhere."""
        pair = self.pairs[game_id]
        if isinstance(event, BoardsAgree | Irregularity):
            return
        fed = pair.game_event(event)
        pipeline = self.units[game_id].pipeline
        assert pipeline is not None
        loop = asyncio.get_running_loop()
        for item in fed:
            loop.call_soon(pipeline.submit, item)
        loop.call_soon(self._pair_tick, game_id)

    def _pair_tick(self, game_id: str) -> None:
        pair = self.pairs[game_id]
        unit = self.units[game_id]
        assert unit.pipeline is not None and unit.scheduler is not None
        events = pair.tick(unit.scheduler.now())
        unit.pipeline.publish(events)
        if events and self.hub is not None:
            squares = getattr(events[0], "squares", [])  # a boards_diverged Irregularity
            detail = "boards disagree: " + " ".join(squares) if pair.diverged else ""
            self.hub.set_status(game_id, detail=detail if pair.diverged else self._detail(unit))
        timer = self._pair_timers.pop(game_id, None)
        if timer is not None:
            timer.cancel()
        deadline = pair.next_deadline()
        if deadline is not None:
            handle = unit.scheduler.call_at(deadline, lambda: self._pair_tick(game_id))
            self._pair_timers[game_id] = handle

    # -- status --------------------------------------------------------------------------------

    def _connection(self, unit: BoardUnit, event: ConnectionChange) -> None:
        connected = event.state == "connected"
        if unit.connected is connected and event.state != "lost":
            return
        unit.connected = connected
        unit.detail = "" if connected else (event.detail or "no answer")
        if self.hub is not None:
            self.hub.set_status(unit.game_id, connected=self._game_connected(unit.game_id),
                                detail=self._detail(self.units[unit.game_id]))  # fmt: skip
        self.notifier.status(self._summary())

    def _game_connected(self, game_id: str) -> bool:
        return all(u.connected for u in self.units.values() if u.game_id == game_id)

    def _detail(self, game: BoardUnit) -> str:
        lost = [
            f"board {u.entry.id}: {u.detail}"
            for u in self.units.values()
            if u.game_id == game.entry.id and not u.connected and u.detail
        ]
        return "; ".join(lost)

    def _summary(self) -> str:
        """``systemctl status``: how many boards are read, and which are not, why."""
        ok = sum(1 for u in self.units.values() if u.connected)
        down = [f"{u.entry.id} ({u.detail})" for u in self.units.values() if not u.connected]
        text = f"{ok}/{len(self.units)} boards connected"
        return text + (f"; NOT READ: {', '.join(down)}" if down else "")

    def status(self) -> dict[str, dict[str, Any]]:
        """Each board's state (for tests and ``/state.json`` through the hub)."""
        return {
            board_id: {"connected": u.connected, "detail": u.detail, "game": u.game_id}
            for board_id, u in self.units.items()
        }

    # -- requests from the page ---------------------------------------------------------------

    def _on_request(self, board_id: str, request: SensorEvent) -> None:
        unit = self.units.get(board_id)
        if unit is None or unit.pipeline is None or unit.scheduler is None:
            return
        unit.pipeline.submit(replace(request, t=unit.scheduler.now()))

    # -- tasks ---------------------------------------------------------------------------------

    def _spawn_guarded(
        self, run: Callable[[], Any], name: str, units: list[BoardUnit]
    ) -> asyncio.Task[Any]:
        """A link's task, started again after a failure: a bug in one board's part
        shows on that board's card and never stops the others."""

        def lost(exc: Exception) -> None:
            for unit in units:
                self._connection(unit, ConnectionChange(0.0, "lost", f"{name} failed: {exc!r}"))

        return self._spawn_restarting(run, name, lost, RESTART_AFTER)

    async def close(self) -> None:
        self.notifier.stopping()
        for timer in self._pair_timers.values():
            timer.cancel()
        for unit in self.units.values():
            if unit.pipeline is not None:
                unit.pipeline.close()
            if unit.clock_display is not None:
                unit.clock_display.close()
            if unit.link is not None and not unit.entry.bus_port:
                unit.link.close()
        for bus in self.buses.values():
            bus.close()
        await asyncio.sleep(0)
        # Every wait bounded: a stuck board must not hang the exit of the others.
        for unit in self.units.values():
            if unit.announcer is not None:
                await quietly(unit.announcer, "drain", 10)
        await self._end_tasks(bound=5)
        for unit in self.units.values():
            if unit.announcer is not None:
                await quietly(unit.announcer, "close", 5)
            if unit.pipeline is not None and unit.pipeline.journal is not None:
                unit.pipeline.journal.close()
        if self.hub is not None:
            await quietly(self.hub, "stop", 10)
        self._release_signals()
        self.notifier.close()


def _unknown_bus_board(port: str, address: int) -> None:
    log.warning("bus %s: a board with address %d is on the chain but not in boards:", port, address)


def _link_of(unit: BoardUnit) -> Any:
    """The board's link as it is now (it is made after the clock display)."""
    return unit.link
