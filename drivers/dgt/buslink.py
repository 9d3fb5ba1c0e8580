"""The serial link to a chain of DGT boards in bus mode (the I/O shell of ``bus.py``).

One port, many boards: the poller (``drivers.dgt.bus.BusPoller``) decides what goes on
the line; this shell writes it, reads the replies through ``loop.add_reader``, wakes
the poller at its deadlines, and turns each board's replies into that board's sensor
events (its own shadow, its own clock interpreter, its own ``on_event``), exactly the
events a single-board ``BoardLink`` gives, so each board's rules core cannot tell
the difference.

A board's problem stays that board's: one that stops answering is reported lost
(``ConnectionChange("lost")`` to it alone) while the others are polled on; when it
answers a ping again it gets ``ConnectionChange("connected")`` and a full
``BoardDump``.

A board found again (after an outage, a board replugged, the port reopened, or a
restarted daemon told what it showed: ``expect_placements``) that shows another
position than it did is recovered as a single board is from its EEPROM (issue 15):
the changes it kept since the last poll, or else its log since the start
(SEND_FROM_START), give what it passed through meanwhile as the dump's ``history``,
from which the rules core recovers the moves made (issue 29). Its answers are its
liveness, as a single board's probe: a ``BoardHeard`` at most every second, and at
once after ``probe(address)`` (a decision held until the board is heard).

An event handler that raises is logged and the poll goes on. Only the
port itself failing (unplugged adapter, read error) affects every board; the link
then reports them all lost and reopens the port with back-off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import serial

from drivers.dgt.bus import (
    BoardAnswered,
    BoardChanges,
    BoardClock,
    BoardContents,
    BoardFound,
    BoardLog,
    BoardLost,
    BoardVersion,
    BusEvent,
    BusPoller,
    BusProblem,
    BusTimings,
    backlog_history,
)
from drivers.dgt.buscodec import check_bus_command
from drivers.dgt.clockmap import ClockInterpreter, SimpleClockInterpreter
from drivers.dgt.portreader import PortReader
from drivers.dgt.protocol import (
    BoardDumpMessage,
    ClockAck,
    ClockTimes,
    EeEvent,
    EeMoves,
    EePieceChange,
    FieldUpdate,
    InvalidClockData,
    codes_from_placement,
    ee_history,
    placement_from_codes,
)
from drivers.dgt.retry import Retry
from drivers.dgt.serialport import open_serial
from drivers.dgt.shadow import BoardShadow
from drivers.records import Record
from drivers.sensors import BoardDump, BoardHeard, ConnectionChange, SensorEvent

log = logging.getLogger(__name__)


@dataclass(eq=False, repr=False)
class BusBoard(Record):
    """One board of the chain as the link serves it."""

    address: int
    on_event: Callable[[SensorEvent], None]
    clock_interpreter: ClockInterpreter = field(default_factory=SimpleClockInterpreter)
    shadow: BoardShadow = field(default_factory=BoardShadow)
    connected: bool = False
    reported_lost: bool = False
    version: tuple[int, int] | None = None
    last_problem: str = ""
    problems: int = 0
    time_source: Callable[[], float] | None = None  # this board's clock (else the link's)
    #: its clock's seconds in a real second (the demo runs game time faster)
    time_rate: float = 1.0
    last_t: float | None = None  # the last event's time: a board's events never go back
    #: what it showed before this link (a resumed game's position, both ways round)
    expected: tuple[tuple[int, ...], ...] = ()
    recent: deque[tuple[int, int]] = field(default_factory=lambda: deque(maxlen=4))
    #: since it was found: what it showed when last known, and its last updates then
    before: tuple[tuple[int, ...], ...] = ()
    before_recent: tuple[tuple[int, int], ...] = ()
    pending: BoardContents | None = None  # its dump, held while its log is read
    #: its dump and what it passed through, held until its hands rest (``_settle``)
    settling: tuple[BoardContents, list[str]] | None = None
    settle_timer: asyncio.TimerHandle | None = None
    settle_until: float = 0.0
    #: when its rest was to be confirmed: a poll sent after it, answered with no
    #: change, ends the settling (a quiet line is no quiet board)
    settle_probe: float | None = None
    #: changes it sent while its log was being read, for the settling that follows
    pending_updates: list[FieldUpdate] = field(default_factory=list)
    #: a log that did not lead to its dump (a change made between the two), and the
    #: changes since: tried again once the board rests
    unfit_log: list[EeEvent] | None = None
    log_reads: int = 0  # logs since the start read back (SEND_FROM_START)
    #: its clock's last reading while it was away (lost, found, its dump held): told
    #: with its dump, so the rules core knows who is to move on the clock
    held_clock: ClockTimes | ClockAck | None = None
    recovered: int = 0  # dumps reported with what it passed through meanwhile


class BusLink:
    """A chain of boards on ``port``, read until ``close()``.

    ``add_board(address, on_event, clock_interpreter)`` before ``run()`` (or while it
    runs). ``on_new_board(address)`` is called for a board found on the chain that
    nobody added (the daemon logs it: the configuration does not name it).
    ``time_source`` stamps the sensor events (the daemon's clock, which the demo
    speeds up); the line's own time-outs are always in real seconds.
    """

    def __init__(
        self,
        port: str,
        *,
        timings: BusTimings | None = None,
        time_source: Callable[[], float] | None = None,
        on_new_board: Callable[[int], None] | None = None,
        discover: bool = True,
        backoff_initial: float = 0.25,
        backoff_max: float = 5.0,
        settle_quiet: float = 0.5,
        settle_longest: float = 5.0,
    ) -> None:
        self.port = port
        #: a board found after the game went on: its dump is held until it rests
        self.settle_quiet, self.settle_longest = settle_quiet, settle_longest
        self.timings = timings or BusTimings()
        start = time.monotonic()
        self.time_source = time_source or (lambda: time.monotonic() - start)
        self.on_new_board = on_new_board
        self.discover = discover
        self.boards: dict[int, BusBoard] = {}
        self.poller = BusPoller(timings=self.timings, discover=discover)
        self.port_open = False
        self.opened_at: float | None = None
        self._port: PortReader | None = None
        self._closed = False
        self._kick = asyncio.Event()  # wakes the back-off between two attempts
        self._over: asyncio.Future[None] | None = None  # the open port's polling is over
        self._timer: asyncio.TimerHandle | None = None  # the poller's next deadline
        # one warning for a port awaited for hours, not one a back-off
        self._retry = Retry(log, f"DGT bus {port}", backoff_initial, backoff_max)

    # -- boards -----------------------------------------------------------------

    def add_board(
        self,
        address: int,
        on_event: Callable[[SensorEvent], None],
        clock_interpreter: ClockInterpreter | None = None,
        time_source: Callable[[], float] | None = None,
        time_rate: float = 1.0,
    ) -> BusBoard:
        """Serve the board at ``address``: its events to ``on_event``, stamped by
        ``time_source`` (each board's game may run on its own clock after a resume),
        whose seconds pass ``time_rate`` times as fast as real ones (a change read
        0.1 s ago happened 0.4 s ago on a clock at 4x)."""
        interpreter = clock_interpreter or SimpleClockInterpreter()
        board = BusBoard(
            address, on_event, interpreter, time_source=time_source, time_rate=time_rate
        )
        self.boards[address] = board
        self.poller.add(address)
        self._kick.set()
        if self._over is not None and not self._over.done():
            asyncio.get_running_loop().call_soon(self._step)  # polled from now on
        return board

    def expect_placements(self, address: int, placements: Sequence[str]) -> None:
        """What board ``address`` showed when last known, before this link (a resumed
        game's position as the journal kept it, FEN placements as its sensors see
        them, both ways round when its orientation is unknown): found showing
        something else, it is asked what it passed through meanwhile, so the moves
        made while the daemon was down come back from the board itself."""
        board = self.boards.get(address)
        if board is not None:
            board.expected = tuple(tuple(codes_from_placement(p)) for p in placements)

    def probe(self, address: int) -> None:
        """Poll board ``address`` now, out of turn; its answer is a ``BoardHeard``
        (a decision held until the board is heard need not wait for the round)."""
        if address not in self.boards:
            return
        self.poller.probe(address, time.monotonic())
        if self._over is not None and not self._over.done() and not self.poller.busy:
            asyncio.get_running_loop().call_soon(self._step)

    def connected(self, address: int) -> bool:
        board = self.boards.get(address)
        return board is not None and board.connected

    # -- life cycle ---------------------------------------------------------------

    async def run(self) -> None:
        """Open the port, poll, reopen with back-off on a port error, until ``close()``."""
        await self._retry.run(self._attempt, lambda: self._closed, self._kick)

    @property
    def attempts(self) -> int:
        """Failed attempts since the port last opened."""
        return self._retry.attempts

    async def _attempt(self) -> bool:
        """The port opened and polled until it fails; whether it opened."""
        opened = False
        try:
            self._open()
            opened = True
            await self._poll()
        except (OSError, serial.SerialException) as error:
            self._port_lost(f"port error: {error}")
        finally:
            self._close_port()
        return opened

    def close(self) -> None:
        self._closed = True
        self._kick.set()
        self._end_polling()

    def _open(self) -> None:
        self._port = PortReader(open_serial(self.port), self._received, self._read_ended)
        self.port_open = True
        self.opened_at = time.monotonic()
        self._retry.succeeded()
        self.poller = _fresh_poller(self.poller, self.timings, self.discover)

    def _close_port(self) -> None:
        self.port_open = False
        if self._port is not None:
            self._port.close()
            self._port = None

    async def _poll(self) -> None:
        """Poll until the port fails or ``close()``: each reply read (``_received``)
        and each deadline (one timer) sends the next command at once, in the same
        callback. No task wakes per command: the old loop's ``wait_for`` made a task
        and a timer for every one of the ~50 polls a second of a 12-board chain, a
        tenth of the daemon's CPU on a Pi Zero's budget (issue 19)."""
        if self._closed:
            return
        self._over = asyncio.get_running_loop().create_future()
        try:
            self._step()
            await self._over
        finally:
            self._over = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _step(self) -> None:
        """What is due now: time-outs, then the next command (written), then the
        timer for the poller's next deadline."""
        if self._over is None or self._over.done():
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        try:
            now = time.monotonic()
            deadline = self.poller.deadline()
            if deadline is not None and now >= deadline and self._port is not None:
                # what came of a reply too short to wake the loop (``wake_after``)
                left = self._port.take()
                if left:
                    self._dispatch(self.poller.feed(left, now))
            self._dispatch(self.poller.expire(now))
            if self._over.done():  # a handler closed the link
                return
            frame = self.poller.next_command(now)
            while frame is not None:
                self._write(check_bus_command(frame, from_start=self.poller.reading_log))
                if self.poller.busy:
                    break
                frame = self.poller.next_command(time.monotonic())  # no reply: on at once
        except Exception as error:  # run() raises it: a port error or a bug
            # Whatever it is, polling ends here and ``run()`` raises it (a port error:
            # the port is reopened; anything else: the hall marks the boards failed and
            # restarts the link). A callback that just stopped would leave every board
            # "connected" and unpolled for good, with no message.
            self._end_polling(error)
            return
        self._await_reply()
        now = time.monotonic()
        wake_at = self.poller.deadline() if self.poller.busy else self.poller.idle_until(now)
        delay = min(max(0.0, (wake_at or now) - now), 1.0)
        self._timer = asyncio.get_running_loop().call_later(delay, self._step)

    def _end_polling(self, error: BaseException | None = None) -> None:
        over = self._over
        if over is not None and not over.done():
            if error is None:
                over.set_result(None)
            else:
                over.set_exception(error)

    def _write(self, frame: bytes) -> None:
        if self._port is None:
            raise OSError("port is closed")
        port = self._port.port
        try:
            # The port is non-blocking and a command is 4 bytes: one write() call.
            # pyserial's write() adds a select() per call, which was 15% of a
            # 12-board chain's CPU (issue 19); it is the fallback for a full buffer.
            written = os.write(port.fileno(), frame)
        except BlockingIOError:
            written = 0
        if written < len(frame):
            port.write(frame[written:])

    def _received(self, data: bytes) -> None:
        try:
            events = self.poller.feed(data, time.monotonic())
            if events and not self.poller.busy:
                # The next command goes on the line before the reply's events are
                # handled: each board's rules core, journal, page and MQTT take the
                # event loop for milliseconds (tens on a Pi when a hall's boards move
                # together), and the line, every board's, waited for them (issue 28).
                self._step()
            self._dispatch(events)
        except Exception as error:  # as in _step: run() raises it
            self._end_polling(error)
            return
        if not self.poller.busy:
            self._step()  # the line is free: the next command goes at once
        else:
            self._await_reply()

    def _await_reply(self) -> None:
        """Be called back only once the reply awaited can be whole (or its next part
        can be read): a change list in two parts woke the loop twice, and each wake
        was much of a poll's CPU (issue 28, the Zero 2 W's budget)."""
        if self._port is not None:
            self._port.wake_after(self.poller.awaited_bytes())

    def _read_ended(self, why: str) -> None:
        self._end_polling(OSError(why))

    def _port_lost(self, detail: str) -> None:
        if self._closed:
            return
        self._retry.failed(detail)  # a port awaited for hours: one line
        for board in self.boards.values():
            self._board_lost(board, (board.time_source or self.time_source)(), detail)

    # -- per-board events ------------------------------------------------------------

    def _dispatch(self, events: list[BusEvent]) -> None:
        for event in events:
            board = self.boards.get(event.address)
            if board is None:
                if isinstance(event, BoardFound) and self.on_new_board is not None:
                    with contextlib.suppress(Exception):
                        self.on_new_board(event.address)
                continue
            try:
                self._board_event(board, event)
            except Exception:  # one board's handler must not stop the chain
                log.exception("bus board %s: handler failed on %r", board.address, event)

    def _board_event(self, board: BusBoard, bus_event: BusEvent) -> None:
        clock = board.time_source or self.time_source
        # The poller's clock is time.monotonic(); the board's may be another (a game
        # clock). The event keeps its age: a change asked for 2 s ago, whose reply the
        # slow chain brought only now, happened 2 s ago. Never before the board's last
        # event, so the rules core hears the board's events in order.
        # (A board clock set back, as on a resume, starts the order afresh.)
        mono, now = time.monotonic(), clock()
        age = max(0.0, mono - bus_event.t) * board.time_rate
        t = now - age
        if board.last_t is not None and t < board.last_t <= now:
            t = board.last_t
        board.last_t = t
        event = replace(bus_event, t=t)
        if isinstance(event, BoardChanges) and event.since is not None:
            # made after the board's previous read: on the board's clock, no later than t
            since = min(t, now - max(0.0, mono - event.since) * board.time_rate)
            event = replace(event, since=since)
        match event:
            case BoardFound():
                # What it showed when last known: before a loss, the shadow; at the
                # first contact, what the daemon knew before it started. Found again
                # before its dump came (lost twice in a row on a loaded machine), the
                # shadow was already cleared: what it showed when last known stays.
                codes = board.shadow.codes
                if codes is not None:
                    board.before, board.before_recent = (codes,), tuple(board.recent)
                elif not board.before:
                    board.before, board.before_recent = board.expected, ()
                board.shadow.forget()  # its first dump is reported whatever it says
                board.recent.clear()
                board.pending = None
                self._end_settling(board)
            case BoardLost(t=t, detail=detail):
                board.pending = None
                self._end_settling(board)
                self._board_lost(board, t, detail)
            case BoardContents(resync=True, dump=dump, backlog=backlog):
                if not board.before or dump.codes in board.before:
                    self._report_dump(board, event, None)
                    return
                for before in board.before:
                    history = backlog_history(before, backlog or b"", dump.codes)
                    if backlog is not None and history is not None:
                        self._settle(board, event, history)
                        return
                board.pending = event  # its log since the start tells: asked next
                self.poller.read_log(board.address)
            case BoardContents(t=t, dump=dump, after_return=after_return):
                if not board.connected:
                    self._report_dump(board, event, None)
                    return
                self._emit(board, board.shadow.dump(t, dump, force=after_return))
            case BoardLog(t=t, data=data):
                pending, board.pending = board.pending, None
                updates, board.pending_updates = tuple(board.pending_updates), []
                if pending is None:
                    return
                history = None
                if data is not None:
                    board.log_reads += 1
                    events = EeMoves(data).events()
                    history = self._log_history(board, events, pending.dump.codes)
                    board.unfit_log = events if history is None else None
                self._settle(board, replace(pending, t=t), history or [])
                if updates:
                    self._settle_changes(board, updates)
            case BoardAnswered() if board.settling is not None:
                # a poll sent after its rest was to be confirmed (bus_event.t: the
                # poller's own time), and no change came with it: it rests
                probe = board.settle_probe
                if (probe is not None and bus_event.t >= probe) or (
                    time.monotonic() >= board.settle_until
                ):
                    self._settled(board)
            case BoardAnswered(t=t):
                if board.connected:
                    self._emit(board, [BoardHeard(t)])
            case BoardChanges(updates=updates) if board.settling is not None:
                self._settle_changes(board, updates)
            case BoardChanges(updates=updates) if board.pending is not None:
                board.pending_updates.extend(updates)
            case BoardChanges(t=t, updates=updates):
                if board.connected:
                    for update in updates:
                        board.recent.append((update.square, update.code))
                        self._emit(board, board.shadow.field_update(t, update, event.since))
            case BoardClock(t=t, clock=reading) if not isinstance(reading, InvalidClockData):
                if board.connected:
                    self._emit(board, board.clock_interpreter.interpret(t, reading))
                else:
                    board.held_clock = reading
            case BoardVersion(major=major, minor=minor):
                board.version = (major, minor)
            case BusProblem(detail=detail):
                board.problems += 1
                board.last_problem = detail
                log.debug("bus board %s: %s", board.address, detail)

    def _settle(self, board: BusBoard, contents: BoardContents, history: list[str]) -> None:
        """A board found showing another position than it did: the game went on
        meanwhile, and may still be going on (a player's hand mid-move). Its dump is
        held, what it passes through added to the history, until its changes rest
        for ``settle_quiet`` and a poll after that finds none (at most
        ``settle_longest``, then at its next answer): the rules core then hears
        one settled picture with everything since, not a picture caught mid-move
        whose history ends moves before the board it then sees."""
        log.info(
            "bus board %s: found showing another position; %d placements since it was "
            "last known (%s)",
            board.address,
            len(history),
            f"{board.log_reads} logs read" if board.log_reads else "from what it kept",
        )
        board.settling = (contents, list(history))
        board.shadow.codes = contents.dump.codes
        board.settle_until = time.monotonic() + self.settle_longest
        self._arm_settle(board)

    def _settle_changes(self, board: BusBoard, updates: tuple[FieldUpdate, ...]) -> None:
        assert board.settling is not None
        history = board.settling[1]
        for update in updates:
            board.recent.append((update.square, update.code))
            if board.unfit_log is not None:
                board.unfit_log.append(EePieceChange(update.square, update.code, False))
            codes = list(board.shadow.codes or ())
            if len(codes) == 64:
                codes[update.square] = update.code
                board.shadow.codes = tuple(codes)
                if history:  # (none: no log led here, the rules core searches)
                    history.append(placement_from_codes(board.shadow.codes))
        self._arm_settle(board)

    def _arm_settle(self, board: BusBoard) -> None:
        if board.settle_timer is not None:
            board.settle_timer.cancel()
        board.settle_probe = None
        delay = max(0.0, min(self.settle_quiet, board.settle_until - time.monotonic()))
        board.settle_timer = asyncio.get_running_loop().call_later(delay, self._confirm_rest, board)

    def _confirm_rest(self, board: BusBoard) -> None:
        """No change came for ``settle_quiet``; but the line may have been busy with
        other boards (their logs, a discovery ping) and this board not polled at all:
        a poll sent from now on, answered with no change, ends the settling. Settled
        on the timer alone, a board polled only after it missed the change made
        between its kept list and its dump, and its log then led nowhere."""
        board.settle_timer = None
        if board.settling is None:
            return
        board.settle_probe = time.monotonic()
        self.probe(board.address)

    def _settled(self, board: BusBoard) -> None:
        if board.settle_timer is not None:
            board.settle_timer.cancel()
            board.settle_timer = None
        board.settle_probe = None
        if board.settling is None:
            return
        contents, history = board.settling
        board.settling = None
        codes = board.shadow.codes or contents.dump.codes
        board.shadow.forget()
        if not history and board.unfit_log is not None:  # the log, and what came after
            history = self._log_history(board, board.unfit_log, codes) or []
        board.unfit_log = None
        clock = board.time_source or self.time_source
        t = max(clock(), board.last_t or 0.0)
        board.last_t = t
        dump = replace(contents, t=t, dump=BoardDumpMessage(codes))
        log.info(
            "bus board %s: resumes with %d placements, now %s",
            board.address,
            len(history),
            placement_from_codes(codes),
        )
        self._report_dump(board, dump, history)

    def _end_settling(self, board: BusBoard) -> None:
        board.settling = None
        board.unfit_log = None
        board.settle_probe = None
        board.pending_updates = []
        if board.settle_timer is not None:
            board.settle_timer.cancel()
            board.settle_timer = None

    def _report_dump(
        self, board: BusBoard, contents: BoardContents, history: list[str] | None
    ) -> None:
        """The board connected (again) with its dump, and what it passed through since
        it was last known when its changes or its log tell."""
        t = contents.t
        board.before, board.before_recent, board.expected = (), (), ()
        if not board.connected:
            board.connected = True
            if board.reported_lost:
                board.reported_lost = False
                self._emit(board, [ConnectionChange(t, "connected", self.port)])
        events = board.shadow.dump(t, contents.dump, force=True)
        if history and events and isinstance(events[0], BoardDump):
            board.recovered += 1
            events[0] = replace(events[0], history=tuple(history))
        held, board.held_clock = board.held_clock, None
        if held is not None:
            # The presses made while it was away were read (its clock's readings
            # then) but not told: without the last, the rules core's clock stood as
            # before the outage, the first press after it looked like none, and every
            # move was decided a press late, the game's last two never (issue 28's
            # fault trials: a board pulled out of the chain for 10 s).
            events.extend(board.clock_interpreter.interpret(t, held))
        self._emit(board, events)

    @staticmethod
    def _log_history(
        board: BusBoard, events: list[EeEvent], after: tuple[int, ...]
    ) -> list[str] | None:
        """What the board passed through, by its log since the start: the tail that
        leads from what it showed when last known to what it shows now."""
        for before in board.before:
            history = ee_history(events, before, after, board.before_recent)
            if history is not None:
                return history
        log.info(
            "bus board %s: its log does not lead to what it shows: the moves made "
            "meanwhile are searched for",
            board.address,
        )
        return None

    def _board_lost(self, board: BusBoard, t: float, detail: str) -> None:
        board.connected = False
        if not board.reported_lost:
            board.reported_lost = True
            log.warning("DGT bus board %s lost: %s", board.address, detail)
            self._emit(board, [ConnectionChange(t, "lost", detail)])

    def _emit(self, board: BusBoard, events: list[SensorEvent]) -> None:
        for event in events:
            try:
                board.on_event(event)
            except Exception:
                log.exception("bus board %s: handler failed on %r", board.address, event)


def _fresh_poller(old: BusPoller, timings: BusTimings, discover: bool) -> BusPoller:
    """After the port is reopened every board starts again from a ping and a dump."""
    poller = BusPoller(list(old.boards), timings, discover=discover)
    poller.stats = old.stats
    return poller
