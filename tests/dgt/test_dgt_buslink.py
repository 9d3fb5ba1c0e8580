"""The bus link against the emulated chain over a real pseudo-terminal: several boards
on one line, each playing its own real game, with corrupted replies and a board
unplugged from the middle of the chain; every board's game read exactly."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import chess

from daemon.rules import RulesCore, RulesSettings
from drivers.dgt.bus import BusTimings, bus_address
from drivers.dgt.busemulator import BusChainEmulator
from drivers.dgt.buslink import BusLink
from drivers.gamelogs import distinct_openings
from drivers.handling import human_sensor_log
from drivers.sensors import BoardDump, ConnectionChange, SensorEvent

SPEED = 2.0
#: Generous for a loaded 2-core machine: the emulator's thread may be late.
TIMINGS = BusTimings(
    reply_timeout=0.4, discovery_interval=0, lost_ping_interval=1.0, clock_interval=0.5
)


class Reader:
    """One board's sensor events through its own rules core."""

    def __init__(self) -> None:
        self.core = RulesCore(RulesSettings())  # the shipped settle time
        self.events: list[SensorEvent] = []
        self.moves: list[str] = []

    def __call__(self, event: SensorEvent) -> None:
        self.events.append(event)
        self._take(self.core.feed(event))

    def tick(self, t: float) -> None:
        deadline = self.core.next_deadline()
        if deadline is not None and deadline <= t:
            self._take(self.core.tick(t))

    def _take(self, out) -> None:
        for event in out:
            if event.type == "move":
                del self.moves[event.ply - 1 :]
                self.moves.append(event.uci)


async def test_a_chain_of_boards_each_playing_its_game_with_faults_reads_every_move(
    tmp_path: Path, shared: Path
) -> None:
    serials = ["01025", "20001", "00417", "12345"]
    games = distinct_openings(shared / "data" / "games.pgn", len(serials), 8)
    start = time.monotonic()

    def now() -> float:
        return (time.monotonic() - start) * SPEED

    with BusChainEmulator(tmp_path, serials=serials, seed=5) as chain:
        link = BusLink(chain.port_path, timings=TIMINGS, time_source=now, discover=False)
        readers = {s: Reader() for s in serials}
        for serial in serials:
            link.add_board(bus_address(serial), readers[serial])
        task = asyncio.create_task(link.run())
        try:
            assert await _until(lambda: all(link.connected(bus_address(s)) for s in serials))
            logs = [
                human_sensor_log(chess.Board(), moves, seed=index, with_clock=True)
                for index, moves in enumerate(games)
            ]
            for index in (0, 2, 3):
                chain.play_on(index, logs[index], speed=SPEED)
            chain.corrupt_next_reply(0, 3)
            chain.corrupt_next_reply(3, 2)
            middle = readers[serials[1]]
            seen_before = {s: len(r.events) for s, r in readers.items()}
            chain.unplug_board(1)  # out of the middle of the chain, while the others play
            assert await _until(lambda: _lost(middle))
            chain.set_square_on(1, "b1", None)  # a knight lifted while it is out...
            await asyncio.sleep(0.5)
            for serial in (serials[0], serials[2], serials[3]):
                assert len(readers[serial].events) > seen_before[serial], "a board stalled"
            chain.replug_board(1)
            assert await _until(lambda: _connected_again(middle))
            dump = [e for e in middle.events if isinstance(e, BoardDump)][-1]
            assert dump.placement == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/R1BQKBNR"  # ...is seen
            chain.set_square_on(1, "b1", "N")
            chain.play_on(1, logs[1], speed=SPEED)
            await asyncio.to_thread(chain.wait_played, 60)

            def all_read() -> bool:
                for reader in readers.values():
                    reader.tick(now())
                return all(
                    readers[s].moves == [m.uci() for m in g]
                    for s, g in zip(serials, games, strict=True)
                )

            ok = await _until(all_read, 30)
            assert ok, "\n".join(
                f"{' '.join(r.moves)} != {' '.join(m.uci() for m in g)}"
                for r, g in zip(readers.values(), games, strict=True)
            )
            assert chain.bus_forbidden == [] and link.poller.stats.bad_checksums >= 5
            assert link.poller.stats.repeats >= 1
        finally:
            link.close()
            await task


def _lost(reader: Reader) -> bool:
    return any(isinstance(e, ConnectionChange) and e.state == "lost" for e in reader.events)


def _connected_again(reader: Reader) -> bool:
    states = [e.state for e in reader.events if isinstance(e, ConnectionChange)]
    return states[-1:] == ["connected"]


async def _until(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.05)
    return bool(condition())


async def test_a_board_plugged_onto_the_chain_later_is_found_by_the_broadcast_ping(
    tmp_path: Path,
) -> None:
    timings = BusTimings(reply_timeout=0.4, discovery_interval=1.0)
    found: list[int] = []
    with BusChainEmulator(tmp_path, serials=["01025"]) as chain:
        link = BusLink(chain.port_path, timings=timings, on_new_board=found.append)
        reader = Reader()
        link.add_board(1025, reader)
        task = asyncio.create_task(link.run())
        try:
            assert await _until(lambda: link.connected(1025))
            chain.add_board("03000")
            assert await _until(lambda: found == [3000], 10)
        finally:
            link.close()
            await task
