"""One board's pipeline: sensor events in, the rules core's decisions out to every output.

``BoardPipeline`` is the part of the daemon that exists once per board: it maps the
board's orientation and the clock's sides (``daemon.clock.sides``), feeds the rules
core, runs its timers (the settle time) on a ``Scheduler``, and hands each decided
event, in order, to the journal first (disk first: a lost move is the worst failure)
and then to the outputs. It owns no event loop and opens no port, so the same object
serves the live daemon (on the asyncio loop, with the board's link) and ``replay`` (on
simulated time): that is why a replayed sensor log gives exactly the daemon's feed.

The pipeline keeps the board's one game record (``daemon.game.record``): each event is
folded into it once, before the journal has it, and the journal's PGN, the speech,
the page and MQTT read that record, never one of their own.

The board id is a parameter: a daemon reading several boards makes one pipeline each.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from daemon.boards.outputs import Output
from daemon.game.events import Colour, DomainEvent, Notice, from_dict
from daemon.game.record import GameRecord
from daemon.lazy import logger
from daemon.speech.speechfirst import Cancellable
from drivers.sensors import BoardDump, ClockReading, ConnectionChange, Request, SensorEvent

if TYPE_CHECKING:
    from daemon.compose import BoardParts
    from daemon.speech.speechfirst import SpeechFirst
    from daemon.storage.journal import Journal, ResumePoint

# --- time ---------------------------------------------------------------------------------------


class Scheduler(Protocol):
    """The pipeline's clock: game seconds, and a timer at a game time."""

    def now(self) -> float: ...

    def call_at(self, t: float, callback: Callable[[], None]) -> Cancellable: ...


class LoopScheduler:
    """Game seconds on the monotonic clock, timers on the running asyncio loop.

    ``time_scale`` runs game time faster (the demo); ``offset`` continues a resumed
    game's journal time, so a game's journal stays in order after a restart."""

    def __init__(self, time_scale: float = 1.0) -> None:
        self.time_scale = time_scale
        self.offset = 0.0
        self._t0 = time.monotonic()

    def now(self) -> float:
        return self.offset + (time.monotonic() - self._t0) * self.time_scale

    def call_at(self, t: float, callback: Callable[[], None]) -> Cancellable:
        import asyncio  # here: a replay never needs the event loop

        delay = max(0.0, (t - self.now()) / self.time_scale)
        return asyncio.get_running_loop().call_later(delay, callback)


class _SimulatedTimer:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class SimulatedScheduler:
    """Simulated time for replays: timers fire when the replay moves time past them,
    in order, at exactly their time."""

    def __init__(self, t: float = 0.0) -> None:
        self.t = t
        self._timers: list[tuple[float, int, _SimulatedTimer, Callable[[], None]]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self.t

    def call_at(self, t: float, callback: Callable[[], None]) -> Cancellable:
        timer = _SimulatedTimer()
        heapq.heappush(self._timers, (max(t, self.t), next(self._order), timer, callback))
        return timer

    def next_time(self) -> float | None:
        """When the next live timer fires (None: no timer)."""
        while self._timers and self._timers[0][2].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0][0] if self._timers else None

    def run_before(
        self, t: float | None, wait_until: Callable[[float], None] | None = None
    ) -> None:
        """Fire every timer due before ``t`` (every timer: None), then stand at ``t``.
        ``wait_until`` is called with each timer's time first (a real-time replay
        sleeps there)."""
        while (due := self.next_time()) is not None and (t is None or due < t):
            _, _, _, callback = heapq.heappop(self._timers)
            if wait_until is not None:
                wait_until(due)
            self.t = due
            callback()
        if t is not None:
            self.t = max(self.t, t)


# --- the journal's sync -------------------------------------------------------------------------


class JournalSync:
    """fsync and the PGN rewrite once the outputs have the event (the speech must not
    wait for an SD card); one sync serves every event of the same loop turn. What the
    sync reports (a storage failure) goes to ``report``. While a move's phrase is on
    its way to its first sound (``speech_first`` held), the fsync goes ahead and the
    PGN's rebuild waits for it (``daemon.speech.speechfirst``)."""

    def __init__(
        self,
        journal: Journal,
        report: Callable[[DomainEvent], None],
        speech_first: SpeechFirst | None = None,
    ) -> None:
        self.journal = journal
        self.report = report
        self.speech_first = speech_first
        # a failure the disk writer met after the loop moved on (``daemon.storage.diskwriter``)
        journal.report_later = self._report_all
        self._pending = False
        self._later: Any = None  # the timer of a deferred PGN rewrite
        # The PGN's rewrite waits in the speech gate's queue (once, however many moves
        # the phrase holds: each copy would find the next phrase's hold and queue
        # itself again, a sync every loop turn while that phrase starts)
        self._pgn_queued = False

    def _report_all(self, notices: list[dict[str, Any]]) -> None:
        for notice in notices:
            self.report(from_dict(notice))

    def soon(self) -> None:
        if self._pending:
            return
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a replay, a caller outside the daemon's): at once
            self.sync()
            return
        self._pending = True
        loop.call_soon(self.sync)

    def sync(self) -> None:
        self._pending = False
        held = self.speech_first is not None and self.speech_first.held
        for notice in self.journal.sync(pgn_later=held):
            self.report(from_dict(notice))
        if held and self.journal.pgn_due and not self._pgn_queued:
            assert self.speech_first is not None
            self._pgn_queued = True
            self.speech_first.later(self._pgn_after_first_sound)
        wait = self.journal.pgn_wait
        if wait is not None and self._later is None:  # a PGN rewrite deferred: due then
            import asyncio
            import contextlib

            with contextlib.suppress(RuntimeError):  # no loop: the next sync or close
                self._later = asyncio.get_running_loop().call_later(wait, self._deferred)

    def _pgn_after_first_sound(self) -> None:
        """The gate lets the PGN's rewrite out: a sync (next loop turn) writes it."""
        self._pgn_queued = False
        self.soon()

    def _deferred(self) -> None:
        self._later = None
        self.sync()


# --- the pipeline -------------------------------------------------------------------------------


class BoardPipeline:
    """One board: sensor events -> orientation -> rules core -> record -> journal ->
    outputs.

    ``record`` is the board's one game record (the journal's, if it has one): every
    feed event is folded into it, then handed to the journal and to ``outputs`` in
    order; add to the list to add an output. ``on_connection`` hears whether the
    board is there (the link's ConnectionChange, and the first dump after start or a
    loss, since the link reports "connected" only after a loss)."""

    def __init__(
        self,
        board_id: str,
        parts: BoardParts,
        scheduler: Scheduler,
        *,
        journal: Journal | None = None,
        outputs: list[Output] | None = None,
        on_connection: Callable[[ConnectionChange], None] | None = None,
        record: GameRecord | None = None,
        speech_first: SpeechFirst | None = None,
    ) -> None:
        self.board_id = board_id
        self.record = record if record is not None else GameRecord()
        #: called before the record folds an event (the page keeps what it was shown,
        #: ``daemon.boards.pageview``)
        self.before_fold: Callable[[], None] | None = None
        self.core = parts.core
        self.orient = parts.orient
        self.clock_interpreter = parts.clock_interpreter
        self.clock_sides = parts.clock_sides
        self.clock_writer = parts.clock_writer
        self._clock_reports: list[SensorEvent] = []  # the interpreter's, for the core
        self.scheduler = scheduler
        self.journal = journal
        self.outputs: list[Output] = list(outputs or [])
        self.on_connection = on_connection
        #: asks the board to answer now (the link's liveness probe): a decision the
        #: core holds until the board is heard then waits a round trip, not a second
        self.probe_board: Callable[[], None] | None = None
        self._probed_for: float | None = None
        self.board_connected = False  # the board has been read since start or a loss
        self._timer: Cancellable | None = None
        self._sync = (
            JournalSync(journal, self._publish_event, speech_first) if journal is not None else None
        )
        #: True while the core decides on an arbiter's request (a web control with
        #: the token): what it decides then is the arbiter's, and the MQTT edge
        #: signs it for the relay (daemon/broadcast/arbitersig.py)
        self.arbiter_deciding = False

    def now(self) -> float:
        return self.scheduler.now()

    # -- in ---------------------------------------------------------------------------------

    def submit(self, event: SensorEvent) -> None:
        """Feed one sensor event (the link, the web controls, a replay). A clock's
        reading (left and right) reaches the core as the ClockReports its sides make
        (none without a clock: ``clock.device: none``)."""
        if isinstance(event, ClockReading):
            if self.clock_sides is not None:
                self._read_clock(event)
            return
        self._decide(self.orient(event))

    def _read_clock(self, reading: ClockReading) -> None:
        """The side mapper asks the board whose press a press is: the core's timers due
        by the reading's time run first (as the core runs them before any event), so
        that it asks the board as it stood then, on a loop whose timer is late as in a
        replay on simulated time."""
        assert self.clock_sides is not None
        self.publish(self._decided(self.core.tick, reading.t))
        self._drain_clock_reports()
        reports = self.clock_sides.reports_for(reading)
        for report in reports:
            self._decide(report)
        if not reports:
            self._schedule_tick()

    def _decide(self, event: SensorEvent) -> None:
        if isinstance(event, ConnectionChange):
            self._connection(event)
        elif isinstance(event, BoardDump) and not self.board_connected:
            self._connection(ConnectionChange(event.t, "connected"))
        self.arbiter_deciding = isinstance(event, Request)
        try:
            self.publish(self._decided(self.core.judge, event))
        finally:
            self.arbiter_deciding = False
        self._drain_clock_reports()
        self._schedule_tick()

    def _drain_clock_reports(self) -> None:
        """Clock reports the side mapper made when its mapping changed: fed now,
        before the next sensor event (the core must know at once whose time runs)."""
        while self._clock_reports:
            report = self._clock_reports.pop(0)
            self.publish(self._decided(self.core.judge, report))

    def _decided(self, step: Callable[[Any], list[DomainEvent]], arg: Any) -> list[DomainEvent]:
        """What the core decides on one step (a sensor event, a tick); a bug in the core
        must not silence the board: it is logged and noticed, and the game goes on."""
        try:
            return step(arg)
        except Exception:
            logger().exception("the rules core failed on %s(%r)", step.__name__, arg)
            return [Notice(t=self.now(), code="internal_error", message="rules core error")]

    def _connection(self, event: ConnectionChange) -> None:
        self.board_connected = event.state == "connected"
        if self.on_connection is not None:
            self.on_connection(event)

    def resume(self, point: ResumePoint) -> None:
        """Continue a journal's unfinished game: the core waits for the board to agree."""
        for event in point.game_events:  # the record holds the game from its start
            self.record.apply(event)
        events = self.core.resume(
            self.now(),
            point.start_fen,
            point.uci_moves,
            point.illegal_counts,
            chess960=point.chess960,
            start_ply=point.start_ply,
        )
        self._resume_clock(point)
        self.publish(events)
        self._drain_clock_reports()
        self._schedule_tick()

    def resumed_placements(self) -> list[str]:
        """A resumed game's position while the board has not yet agreed with it, as the
        board's sensors see it standing either way round (which way is learnt from the
        board); empty otherwise. The link compares the board with it at connection,
        and reads the board's EEPROM log when it differs."""
        if not self.core.resuming:
            return []
        import chess

        board = self.core.board
        turned = board.transform(chess.flip_vertical).transform(chess.flip_horizontal)
        return [board.board_fen(), turned.board_fen()]

    def _resume_clock(self, point: ResumePoint) -> None:
        """Tell the clock's side mapper about the resumed game: the move counts (the
        time control's periods, for the clock's driver) and the sides its journal kept."""
        if self.clock_sides is None:
            return
        import chess

        # the game's first move was White's unless it began from a FEN with Black to
        # move; a position accepted in mid-game (``start_ply``) keeps the count going
        at_start = chess.Board(point.start_fen, chess960=point.chess960).turn == chess.WHITE
        first_white = at_start == (point.start_ply % 2 == 0)
        plies = point.start_ply + len(point.uci_moves)
        first_moves, second_moves = (plies + 1) // 2, plies // 2
        white, black = (first_moves, second_moves) if first_white else (second_moves, first_moves)
        white_to_move = first_white == (plies % 2 == 0)
        to_move: Colour = "white" if white_to_move else "black"
        logger().debug("clock: resumed game, %s to move, moves w%d b%d", to_move, white, black)
        # The journal's sides, never a fresh guess: the player on move may have pressed
        # while the daemon was down.
        self.clock_sides.resume_game(white, black, white_side=point.clock_white_side)

    # -- timers -----------------------------------------------------------------------------

    def _schedule_tick(self) -> None:
        held = self.core.held_since
        if held is not None and held != self._probed_for and self.probe_board is not None:
            self._probed_for = held
            self.probe_board()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        deadline = self.core.next_deadline()
        if deadline is not None:
            self._timer = self.scheduler.call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        deadline = self.core.next_deadline()
        t = self.now()
        if deadline is not None and t < deadline:
            t = deadline  # the loop's timer may fire a hair early
        self.publish(self._decided(self.core.tick, t))
        self._drain_clock_reports()
        self._schedule_tick()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- out --------------------------------------------------------------------------------

    def publish(self, events: list[DomainEvent]) -> None:
        for event in events:
            self._publish_event(event)

    def _publish_event(self, event: DomainEvent) -> None:
        """One event into the record, to the journal (disk first, as its JSON line),
        then to every output in order (``daemon.boards.outputs.Output``: one that raises is
        logged, and the rest still get it); what the journal has to report follows it."""
        data = event.to_dict()
        if self.before_fold is not None:
            self.before_fold()
        self.record.apply(data)
        notices = self.journal.append(data) if self.journal is not None else []
        for output in self.outputs:
            try:
                output.receive(event)
            except Exception:  # an output's bug must not cost the others this event
                logger().exception("output %s failed on %s", type(output).__name__, event.type)
        if self.clock_sides is not None:
            self._clock_sides(event)
        if self._sync is not None:
            self._sync.soon()
        for notice in notices:
            self._publish_event(from_dict(notice))

    def _clock_sides(self, event: DomainEvent) -> None:
        """The board's side mapper learns whose clock side is whose from the game's
        events and the board (``daemon.clock.sides``); what it learnt is journalled and
        published, and the clock is reported again under it (fed once this event's
        outputs are done)."""
        assert self.clock_sides is not None
        reports, published = self.clock_sides.after_event(event)
        self._clock_reports.extend(reports)
        for domain_event in published:
            self._publish_event(domain_event)

    def notice(self, code: str, message: str) -> None:
        """A notice of this board's (e.g. speech failed) into its feed."""
        self._publish_event(Notice(t=self.now(), code=code, message=message))
