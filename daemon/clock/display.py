"""What a DGT clock's display shows: each move's text, then the times again; and
the arbiter's penalty put on the clock (``daemon.clock.penalty``).

An output of the board's pipeline: it only queues frames; one task sends them to the
board, one at a time, so a slow or absent clock never holds up the next move. A
penalty is its own task (it waits for the clock's ack and next report), its answer
kept in ``penalty`` for the console's request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from daemon.clock.penalty import ClockReports, PenaltyOutcome, ReportListener, put_on_clock
from daemon.game.events import ClockUpdate, DomainEvent, GameStart, Move, Penalty

if TYPE_CHECKING:
    from daemon.clock.sides import SideMapper
    from drivers.clock.dgt3000 import ClockWriter, DgtClockInterpreter
    from drivers.dgt.link import BoardLink
    from drivers.sensors import Side

log = logging.getLogger("dgt-bridge")


def schedule_for(
    writer: ClockWriter, event: DomainEvent, white_side: Side | None = None
) -> list[tuple[float, bytes]]:
    """What an event puts on the clock, with when (seconds from now): a move's text
    (then the times again), the start's times with White's side running
    (``white_side``; None: not known, the clock set paused); nothing for any other
    event."""
    match event:
        case GameStart():
            return writer.start_schedule(white_side)
        case Move(san=san, uci=uci, ply=ply):
            return writer.move_schedule(san, uci, ply)
        case _:
            return []


class ClockDisplay:
    """Feed events in (``receive``: an output of the board's pipeline), clock display
    commands out (``run``).

    ``interpreter``: the clock's driver (its model; a set-and-run's times may go
    up); ``sides``: whose clock side is whose (a penalty's time goes on White's or
    Black's side); ``later(work)``: a move's text goes to the clock now or once its
    phrase's first sound is out (``daemon.speech.speechfirst``; None: now)."""

    def __init__(
        self,
        writer: ClockWriter,
        interpreter: DgtClockInterpreter | None,
        link: Callable[[], BoardLink | None],
        now: Callable[[], float] | None = None,
        sides: SideMapper | None = None,
        later: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        self.writer = writer
        self._later = later
        self.interpreter = interpreter
        self.sides = sides
        self._link = link
        self._now = now
        self._frames: asyncio.Queue[bytes] = asyncio.Queue()
        self._pending_end: asyncio.TimerHandle | None = None
        self.reports = ClockReports()
        #: the last penalty's setting of the clock, under way or done
        self.penalty: asyncio.Task[PenaltyOutcome] | None = None

    def receive(self, event: DomainEvent) -> None:
        if isinstance(event, ClockUpdate):
            self.reports.heard(event)
            return
        if isinstance(event, Penalty):
            self._penalty(event)
            return
        model = getattr(self.interpreter, "model", None)
        if model:
            self.writer.model = model
        schedule = schedule_for(self.writer, event, self._white_side())
        if not schedule:
            return
        if self._later is not None:
            self._later(partial(self._show, schedule))
        else:
            self._show(schedule)

    def _show(self, schedule: list[tuple[float, bytes]]) -> None:
        """An event's frames to the clock, in order, the later ones timed from now."""
        if self._pending_end is not None:  # newer text: the old one's END is moot
            self._pending_end.cancel()
            self._pending_end = None
        for delay, frame in schedule:
            if delay <= 0:
                self._frames.put_nowait(frame)
            else:  # back to the times after the move was shown (real seconds)
                self._pending_end = asyncio.get_running_loop().call_later(
                    delay, self._frames.put_nowait, frame
                )

    def _white_side(self) -> Side | None:
        return self.sides.white_side if self.sides is not None else None

    async def run(self) -> None:
        """Clock display commands, one at a time; a failure costs only the display."""
        while True:
            frame = await self._frames.get()
            link = self._link()
            if link is None or not link.connected:
                continue
            try:
                await link.send_clock_command(frame)
            except Exception as exc:
                log.debug("clock command %s not acknowledged: %s", frame.hex(), exc)

    def _penalty(self, penalty: Penalty) -> None:
        """The arbiter's penalty: the clock set with the time added, in a task of
        its own (the console's answer waits for it, the game does not)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a test feeding the pipeline by hand)
            return
        self.penalty = loop.create_task(self._set_clock(penalty, self.reports.listen()))

    async def _set_clock(self, penalty: Penalty, listener: ReportListener) -> PenaltyOutcome:
        white_side = self._white_side()
        now = self._now or asyncio.get_running_loop().time
        try:
            return await put_on_clock(
                penalty, self.reports.last, white_side, self._send, listener.next, now
            )
        finally:
            listener.close()

    async def _send(self, frame: bytes) -> bool:
        """One frame sent; True when the clock acknowledged it without error."""
        link = self._link()
        if link is None or not link.connected:
            raise ConnectionError("the board is not connected")
        if self.interpreter is not None:
            self.interpreter.clock_being_set()  # its times go up: not a glitch
        ack = await link.send_clock_command(frame)
        return bool(ack.ok)

    def close(self) -> None:
        if self.penalty is not None:
            self.penalty.cancel()
        if self._pending_end is not None:
            self._pending_end.cancel()
            self._pending_end = None
