"""``dgt-bridge run`` against the emulated board while the players go on unseen: the
cable pulled (moves made meanwhile, the cable back), or the daemon killed (moves
made meanwhile, the daemon started again). The moves come back from the board's
EEPROM log (read by the link when the board shows another position than the one
last known), or by a search on a board that has none; every move reaches the
journal and the PGN, and nothing is alarmed."""

from __future__ import annotations

from pathlib import Path

import chess
import pytest

from benchmarks.daemonrun import RunningDaemon, clock_tick, pgn_moves, press_indices
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.handling import human_sensor_log
from tests.daemon.test_clock_sides_daemon import BRISK, SPEED, daemon_env

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
    ("away", "ee_log", "unseen", "how"),
    [
        ("cable", True, (2, 5), "eeprom"),
        ("cable", False, (5, 7), "search"),
        ("daemon", True, (2, 5), "eeprom"),
        ("daemon", False, (7, 10), "search"),
    ],
    ids=[
        "cable-out-three-moves-from-the-eeprom",
        "cable-out-two-moves-by-search",
        "daemon-down-three-moves-from-the-eeprom",
        "daemon-down-three-moves-by-search",
    ],
)
def test_moves_made_while_the_board_was_away_are_recovered(
    tmp_path: Path, away: str, ee_log: bool, unseen: tuple[int, int], how: str
) -> None:
    """The moves between two presses made unseen: with the cable out, or with the
    daemon killed (a power cut) and started again, when it knows only the journal's
    position. Three moves that transpose (Nc6 Bb5 a6 / a6 Bb5 Nc6) come back from
    the board's log; on a board without one the only line (Ba4 Nf6; O-O Be7 Re1) is
    searched for. The game goes on, every move in the PGN."""
    moves = [chess.Move.from_uci(u) for u in RUY_LOPEZ]
    log = human_sensor_log(chess.Board(), moves, seed=9, with_clock=True, timing=BRISK)
    presses = press_indices(log)  # indices just after each press
    first, last = unseen
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
            if away == "cable":
                emulator.unplug()
                daemon.wait_for(lambda e: e["type"] == "connection" and e["state"] == "lost")
            else:
                daemon.kill()
            emulator.play(log[presses[first] : presses[last]], speed=SPEED)  # unseen
            assert emulator.wait_played(60)
            if away == "cable":
                emulator.replug()
            else:
                daemon = RunningDaemon(emulator.port_path, storage, daemon_env())
            recovered = daemon.wait_for(lambda e: e["type"] == "moves_recovered", timeout=30)
            assert recovered["how"] == how
            line = RUY_LOPEZ[first + 1 : last + 1]
            # the line's last move may wait for the clock to prove it made (its press:
            # the mover's clock last seen running, or none seen since the restart)
            assert recovered["moves"] in (line, line[:-1])
            tick = clock_tick(log[: presses[last]], seconds=1.0)
            assert tick is not None
            emulator.apply(tick)  # the running clock's next report
            emulator.play(log[presses[last] :], speed=SPEED)
            assert emulator.wait_played(60)
            daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == len(moves))
            assert not [e for e in daemon.seen if e["type"] == "irregularity"]
        finally:
            assert daemon.stop() == 0
    [journal] = sorted(storage.glob("*.jsonl"))
    assert pgn_moves(journal) == RUY_LOPEZ
