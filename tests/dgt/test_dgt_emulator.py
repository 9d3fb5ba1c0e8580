"""The emulator as the link sees it: games moved by human hands, set-ups, the clock."""

from __future__ import annotations

import asyncio

import chess
import chess.pgn
from dgt_helpers import FAST, until

from drivers.dgt.link import BoardLink
from drivers.sensors import BoardDump, ClockReading, ClockReport, SquareChange
from drivers.simulators.emulator import START_PLACEMENT, BoardEmulator, EmulatedClock


def first_game(shared, source: str) -> chess.pgn.Game:
    with open(shared / "data" / "games.pgn", encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            if game.headers.get("Source") == source and len(list(game.mainline_moves())) > 30:
                return game
    raise AssertionError(f"no {source} game")


async def test_a_pgn_game_played_by_hand_arrives_square_by_square(shared):
    game = first_game(shared, "gnuchess-book")
    final = game.end().board().board_fen()
    events: list = []
    with BoardEmulator() as emulator:
        link = BoardLink(emulator.port_path, events.append, **FAST)
        task = asyncio.create_task(link.run())
        try:
            await until(lambda: link.connected)
            played = emulator.play_game(game, speed=100, seed=7)
            loop = asyncio.get_running_loop()
            assert await loop.run_in_executor(None, emulator.wait_played, 60)
            expected = [(e.square, e.piece) for e in played if isinstance(e, SquareChange)]
            await until(
                lambda: len([e for e in events if isinstance(e, SquareChange)]) >= len(expected)
            )
            await asyncio.sleep(0.5)  # the confirming dump, if any
        finally:
            link.close()
            await task
    changes = [(e.square, e.piece) for e in events if isinstance(e, SquareChange)]
    assert changes == expected
    assert emulator.placement == final
    assert [e.placement for e in events if isinstance(e, BoardDump)] == [START_PLACEMENT]
    reports = [e for e in events if isinstance(e, ClockReading)]
    assert reports and {e.running for e in reports} >= {"left", "right"}


async def test_a_set_up_position_is_reported_as_the_squares_a_human_changes():
    events: list = []
    target = "4k3/8/8/8/8/8/8/4K3"
    with BoardEmulator() as emulator:
        link = BoardLink(emulator.port_path, events.append, **FAST)
        task = asyncio.create_task(link.run())
        try:
            await until(lambda: link.connected)
            emulator.play([BoardDump(0.0, target)], speed=1)
            await until(lambda: link.placement == target)
            await asyncio.sleep(0.5)
        finally:
            link.close()
            await task
    changes = [e for e in events if isinstance(e, SquareChange)]
    assert len(changes) == 30  # 32 pieces less the two kings left standing
    assert all(e.piece is None for e in changes)
    assert [e for e in events if isinstance(e, BoardDump)] == [events[0]]


def test_the_emulated_clock_counts_down_for_the_side_to_move_and_toggles():
    with BoardEmulator() as emulator:
        clock = emulator.clock
        clock.left, clock.right, clock.running, clock.left_to_move = 10.0, 10.0, True, True
        clock.advance(3.0)
        assert (clock.left, clock.right) == (7.0, 10.0)
        emulator.press_lever()
        clock.advance(2.0)
        assert clock.left >= 6.0 and clock.right <= 8.0 and not clock.left_to_move
        clock.advance(20.0)
        assert clock.right == 0.0 and clock.right_flag and not clock.running


def test_a_recorded_clock_line_is_shown_as_it_was_read():
    """A recorded log's clock line (left and right) drives the emulated clock as the
    clock showed it; a line by colour puts White where the board says."""
    recorded, by_colour = EmulatedClock(), EmulatedClock()
    recorded.show(ClockReading(1.0, 120.0, 95.0, "right", ("left",)), white_left=True)
    by_colour.show(ClockReport(1.0, 95.0, 120.0, "white", ("black",)), white_left=False)
    for clock in (recorded, by_colour):
        assert (clock.left, clock.right, clock.running) == (120.0, 95.0, True)
        assert (clock.left_to_move, clock.left_flag, clock.right_flag) == (False, True, False)
