"""``dgt-bridge run`` against the emulated board: the cable pulled while the players
go on, moves made meanwhile, the cable back. The moves come back from the board's
EEPROM log (read by the link after the outage), or by a search on a board that has
none; every move reaches the journal and the PGN, and nothing is alarmed."""

from __future__ import annotations

from pathlib import Path

import chess
import pytest

from drivers.dgt.emulator import BoardEmulator
from drivers.handling import human_sensor_log
from tests.daemon.test_clock_sides_daemon import BRISK, SPEED, daemon_env, pgn_moves
from tests.daemon.test_resume import RunningDaemon, clock_tick, press_indices

RUY_LOPEZ = [
    "e2e4",
    "e7e5",
    "g1f3",
    "b8c6",
    "f1b5",
    "a7a6",
    "b5a4",
    "g8f6",
    "e1g1",
    "f8e7",
    "f1e1",
    "b7b5",
]


@pytest.mark.parametrize(
    ("ee_log", "outage", "how"),
    [(True, (2, 5), "eeprom"), (False, (5, 7), "search")],
    ids=["three-moves-from-the-eeprom", "two-moves-by-search"],
)
def test_moves_made_while_the_cable_was_out_are_recovered(
    tmp_path: Path, ee_log: bool, outage: tuple[int, int], how: str
) -> None:
    moves = [chess.Move.from_uci(u) for u in RUY_LOPEZ]
    log = human_sensor_log(chess.Board(), moves, seed=9, with_clock=True, timing=BRISK)
    presses = press_indices(log)  # indices just after each press
    first, last = outage
    storage = tmp_path / "games"
    with BoardEmulator(tmp_path, ee_log=ee_log) as emulator:
        emulator.play(log[:1])
        emulator.wait_played(10)
        daemon = RunningDaemon(emulator.port_path, storage, daemon_env())
        try:
            daemon.wait_for(lambda e: e["type"] == "game_start")
            emulator.play(log[1 : presses[first]], speed=SPEED)
            assert emulator.wait_played(60)
            daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == first + 1)
            emulator.unplug()
            daemon.wait_for(lambda e: e["type"] == "connection" and e["state"] == "lost")
            emulator.play(log[presses[first] : presses[last]], speed=SPEED)  # unseen
            assert emulator.wait_played(60)
            emulator.replug()
            recovered = daemon.wait_for(lambda e: e["type"] == "moves_recovered", timeout=30)
            assert recovered["how"] == how
            assert recovered["moves"] == RUY_LOPEZ[first + 1 : last + 1]
            emulator.play(log[presses[last] :], speed=SPEED)
            assert emulator.wait_played(60)
            daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == len(moves))
            assert not [e for e in daemon.seen if e["type"] == "irregularity"]
        finally:
            assert daemon.stop() == 0
    [journal] = sorted(storage.glob("*.jsonl"))
    assert pgn_moves(journal) == RUY_LOPEZ


@pytest.mark.parametrize(
    ("ee_log", "down", "how"),
    [(True, (2, 5), "eeprom"), (False, (7, 10), "search")],
    ids=["three-moves-from-the-eeprom", "three-moves-by-search"],
)
def test_moves_made_while_the_daemon_was_down_are_recovered(
    tmp_path: Path, ee_log: bool, down: tuple[int, int], how: str
) -> None:
    """The daemon killed (a power cut) between two moves; the players go on, moves and
    presses, and it is started again. It knows the journal's position, finds the board
    moves further on, and reads the board's EEPROM log as after a link outage: three
    moves that transpose (Nc6 Bb5 a6 / a6 Bb5 Nc6) come back from the log; on a board
    without one the only line (O-O Be7 Re1) is searched for. Every move reaches the
    PGN."""
    moves = [chess.Move.from_uci(u) for u in RUY_LOPEZ]
    log = human_sensor_log(chess.Board(), moves, seed=9, with_clock=True, timing=BRISK)
    presses = press_indices(log)  # indices just after each press
    first, last = down
    storage = tmp_path / "games"
    with BoardEmulator(tmp_path, ee_log=ee_log) as emulator:
        emulator.play(log[:1])
        emulator.wait_played(10)
        daemon = RunningDaemon(emulator.port_path, storage, daemon_env())
        try:
            daemon.wait_for(lambda e: e["type"] == "game_start")
            emulator.play(log[1 : presses[first]], speed=SPEED)
            assert emulator.wait_played(60)
            daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == first + 1)
            daemon.kill()
            emulator.play(log[presses[first] : presses[last]], speed=SPEED)  # unseen
            assert emulator.wait_played(60)
            daemon = RunningDaemon(emulator.port_path, storage, daemon_env())
            recovered = daemon.wait_for(lambda e: e["type"] == "moves_recovered", timeout=30)
            assert recovered["how"] == how
            assert recovered["moves"] == RUY_LOPEZ[first + 1 : last + 1]
            emulator.apply(clock_tick(log[: presses[last]], seconds=1.0))
            emulator.play(log[presses[last] :], speed=SPEED)
            assert emulator.wait_played(60)
            daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == len(moves))
            assert not [e for e in daemon.seen if e["type"] == "irregularity"]
        finally:
            assert daemon.stop() == 0
    [journal] = sorted(storage.glob("*.jsonl"))
    assert pgn_moves(journal) == RUY_LOPEZ
