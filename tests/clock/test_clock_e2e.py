"""A whole game on the emulated board with a DGT 3000: every move completed by the press.

The emulator (a DGT board on a pseudo-terminal) plays a real game as human hands
move it, with White's clock on the *right*. The board link reads it, the clock
interpreter reads the clock's left and right, the board's side mapper (sides
learnt, nothing configured) makes them colours, and the rules core completes each
move when the mover presses the clock (6.7).
The sides are learnt from the first moves (decided on the settle time, the clock
counting as stopped until then: ``daemon.clock.sides``); from the third move on
every move is completed by its press. After each move the ClockWriter's text
goes to the clock, one command at a time.

Time in the link is the game's simulated time (the emulator plays 20 times
faster than the hands' timestamps), so the clock's time checks see real rates.
"""

from __future__ import annotations

import asyncio
import math

import chess
import chess.pgn
import pytest

from daemon.boards.pipeline import BoardPipeline, LoopScheduler
from daemon.clock.display import schedule_for
from daemon.clock.sides import SideMapper
from daemon.compose import BoardParts
from daemon.game.events import GameStart, Move
from daemon.rules import RulesCore, RulesSettings
from drivers.clock.dgt3000 import ClockWriter, DgtClockInterpreter, move_text_3000
from drivers.dgt import protocol
from drivers.dgt.link import BoardLink
from drivers.sensors import ClockReading, ClockReport
from drivers.simulators.emulator import START_PLACEMENT, BoardEmulator
from drivers.simulators.handling import Timing, human_sensor_log
from drivers.timecontrol import parse_time_control

TURNED_START = protocol.placement_from_codes(
    bytes(reversed(protocol.codes_from_placement(START_PLACEMENT)))
)

pytestmark = pytest.mark.slow

SPEED = 20.0
FAST_LINK = {
    "liveness_interval": 0.2,
    "liveness_timeout": 2.0,
    "quiet_dump_after": 0.3,
    "startup_timeout": 2.0,
    "clock_ack_timeout": 1.0,
    "backoff_initial": 0.05,
    "backoff_max": 0.2,
}
BRISK = Timing(think=(0.3, 1.2), before_press=(0.15, 0.4))


async def until(predicate, timeout: float = 20.0) -> None:
    """Wait, generously, for something that should happen soon."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.02)


def a_real_game(shared, plies: int) -> chess.pgn.Game:
    """A public-domain game that does not end on the board (no mate to settle)."""
    with open(shared / "data" / "games.pgn", encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            moves = list(game.mainline_moves())
            if game.headers.get("Source") == "gnuchess-book" and len(moves) >= plies:
                board = game.board()
                for move in moves[:plies]:
                    board.push(move)
                if not board.is_game_over():
                    return game
    raise AssertionError("no suitable game")


class Bench:
    """The emulator, the link with the DGT clock interpreter, the board's pipeline
    (its side mapper and rules core) on the loop, as the daemon wires them."""

    def __init__(self, emulator: BoardEmulator) -> None:
        self.emulator = emulator
        self.core = RulesCore(RulesSettings(settle_time=0.6))
        self.clock = DgtClockInterpreter(time_control=parse_time_control("90+30"))
        self.sides = SideMapper("auto", self.core, self.clock)
        self.writer = ClockWriter("dgt3000", show_moves=True)
        self.scheduler = LoopScheduler(SPEED)
        parts = BoardParts(self.core, lambda event: event, self.clock, self.writer, self.sides)
        self.pipeline = BoardPipeline("1", parts, self.scheduler, outputs=[self])
        self.link = BoardLink(
            emulator.port_path,
            self.on_sensor,
            clock_interpreter=self.clock,
            time_source=self.scheduler.now,
            **FAST_LINK,
        )
        self.domain: list = []
        self.caused_by: list[tuple[object, object]] = []  # (domain event, sensor event)
        self._cause: object = None  # the sensor event being decided on (None: a timer)
        self.outbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.acks: list = []

    def on_sensor(self, event) -> None:
        self._cause = event
        try:
            self.pipeline.submit(event)
        finally:
            self._cause = None

    def receive(self, event) -> None:
        self.domain.append(event)
        self.caused_by.append((event, self._cause))
        for delay, frame in schedule_for(self.writer, event):
            if delay == 0:  # the times come back by themselves here
                self.outbox.put_nowait(frame)

    async def send_clock_commands(self) -> None:
        while True:
            frame = await self.outbox.get()
            self.acks.append(await self.link.send_clock_command(frame))

    def moves(self) -> list[Move]:
        return [e for e in self.domain if isinstance(e, Move)]


async def play(shared, plies: int, flipped: bool) -> tuple[Bench, list, chess.pgn.Game, str]:
    game = a_real_game(shared, plies)
    moves = list(game.mainline_moves())[:plies]
    events = human_sensor_log(
        game.board(), moves, seed=11, with_clock=True, flipped=flipped, timing=BRISK
    )
    start = TURNED_START if flipped else START_PLACEMENT
    with BoardEmulator(placement=start, white_on_left=False) as emulator:
        bench = Bench(emulator)
        link_task = asyncio.create_task(bench.link.run())
        writer_task = asyncio.create_task(bench.send_clock_commands())
        try:
            await until(lambda: bench.link.connected)
            emulator.play(events, speed=SPEED)
            loop = asyncio.get_running_loop()
            assert await loop.run_in_executor(None, emulator.wait_played, 120)
            await until(lambda: len(bench.moves()) >= plies, timeout=30)
            await until(lambda: bench.outbox.empty() and len(bench.acks) >= plies, timeout=30)
        finally:
            writer_task.cancel()
            bench.pipeline.close()
            bench.link.close()
            await link_task
        display = emulator.display_text
    return bench, events, game, display


def check_game(bench: Bench, events: list, game: chess.pgn.Game, plies: int, display: str):
    expected = [m.uci() for m in list(game.mainline_moves())[:plies]]
    moves = bench.moves()
    assert [m.uci for m in moves if not m.correction] == expected
    # Every move after the first two (they teach the sides) was completed by its
    # mover's press (the clock's reading handing the run to the opponent), never by time.
    for move, cause in bench.caused_by:
        if isinstance(move, Move) and move.ply > 2:
            assert isinstance(cause, ClockReading) and cause.running, (move, cause)
            opponent = "black" if move.by == "white" else "white"
            assert bench.sides.colour(cause.running) == opponent
    # White's clock is on the right, and nothing said so: learnt from the first moves.
    assert bench.sides.white_side == "right"
    # The colours of the times are right: the last report is the hands' last one.
    truth = [e for e in events if isinstance(e, ClockReport)][-1]
    last = bench.sides.last_report
    assert last is not None
    assert (last.white, last.black) == (math.ceil(truth.white), math.ceil(truth.black))
    # Each move's clock times belong to the right player.
    whites = {math.ceil(e.white) for e in events if isinstance(e, ClockReport)}
    blacks = {math.ceil(e.black) for e in events if isinstance(e, ClockReport)}
    for move in moves:
        assert move.clock["white"] in whites and move.clock["black"] in blacks
    # The clock shows the last move, and every command was acknowledged in turn.
    assert display == move_text_3000(moves[-1].san, moves[-1].ply)
    assert all(ack.ok for ack in bench.acks)


async def test_a_full_game_every_move_completed_by_the_clock(shared):
    plies = 40
    bench, events, game, display = await play(shared, plies, flipped=False)
    check_game(bench, events, game, plies, display)
    assert [e.flipped for e in bench.domain if isinstance(e, GameStart)] == [False]


async def test_the_board_turned_round_keeps_the_clock_sides(shared):
    """Black's pieces on the connector side (7.1): the board's picture turns, the
    clock's does not; White's clock is still the right one."""
    plies = 16
    bench, events, game, display = await play(shared, plies, flipped=True)
    check_game(bench, events, game, plies, display)
    assert [e.flipped for e in bench.domain if isinstance(e, GameStart)] == [True]


async def test_set_and_run_puts_the_time_control_on_the_clock():
    """A game start with set_and_run_at_start: the emulated DGT 3000 takes the
    times, its ack tells the interpreter the times may go up, and White's side runs."""
    tc = parse_time_control("5+3")
    with BoardEmulator(white_on_left=False) as emulator:
        emulator.clock.left = emulator.clock.right = 42.0
        reports: list = []
        interpreter = DgtClockInterpreter(time_control=tc)
        sides = SideMapper("right_white", clock=interpreter)
        link = BoardLink(
            emulator.port_path,
            lambda e: reports.extend(sides.reports_for(e)) if isinstance(e, ClockReading) else None,
            clock_interpreter=interpreter,
            **FAST_LINK,
        )
        task = asyncio.create_task(link.run())
        try:
            await until(lambda: link.connected)
            emulator.press_lever()  # a game was running: White's (right) clock runs
            await until(lambda: reports and reports[-1].running is not None)
            writer = ClockWriter("dgt3000", time_control=tc, set_and_run_at_start=True)
            [(_, frame)] = writer.start_schedule(sides.white_side)
            ack = await link.send_clock_command(frame)
            assert ack.ok and ack.command == protocol.Clock.SETNRUN
            await until(lambda: reports[-1].white >= 300)
        finally:
            link.close()
            await task
    assert reports[-1].white in (302, 303) and reports[-1].black == 303
    assert reports[-1].running == "white"
