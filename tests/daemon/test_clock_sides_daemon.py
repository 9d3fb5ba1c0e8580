"""``dgt-bridge run`` with ``clock.sides: auto`` (the default) against the emulated
board and DGT 3000: the clock's sides are never swapped, so every move is decided
at its own press and a game's last move reaches the journal and the PGN.

Two ways the first side seen running misled the daemon: a restart after the
player on move had moved and pressed while the daemon was down, and a new game
set up while the clock still ran from the last one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from benchmarks.daemonrun import (
    BRISK,
    PRESS_BY_PRESS_SPEED,
    RunningDaemon,
    killed_after,
    pgn_moves,
    play_press_by_press,
    press_indices,
)
from benchmarks.daemonrun import daemon_env as run_env
from drivers.dgt import protocol
from drivers.sensors import BoardDump, ClockReport, SquareChange
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.handling import human_sensor_log
from tests.daemon.test_resume import shipped_game

SPEED = PRESS_BY_PRESS_SPEED


def daemon_env() -> dict[str, str]:
    return run_env(0.6 / SPEED)


def test_a_restart_after_a_move_and_its_press_made_while_down(tmp_path: Path) -> None:
    """Killed between moves 9 and 10; while it is down Black moves and presses, so
    the clock seen running first after the restart is White's. The journal kept the
    sides: moves 11 to 16 are each decided at their press, the last one included."""
    game = shipped_game(1)
    moves = list(game.mainline_moves())[:16]
    log = human_sensor_log(game.board(), moves, seed=21, with_clock=True, timing=BRISK)
    presses = press_indices(log)
    storage = tmp_path / "games"
    with BoardEmulator(tmp_path, white_on_left=False) as emulator:
        daemon = killed_after(emulator, storage, log, 9)
        try:
            emulator.play(log[presses[8] : presses[9]], speed=SPEED)  # move 10 and its press
            assert emulator.wait_played(60)
            daemon = RunningDaemon(emulator.port_path, storage, daemon_env())
            daemon.wait_for(lambda e: e["type"] == "game_resumed")
            last = next(e for e in reversed(log[: presses[9]]) if isinstance(e, ClockReport))
            emulator.apply(replace(last, white=last.white - 1))  # a running clock ticks
            daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == 10)
            play_press_by_press(emulator, daemon, log, presses[9], 11)
            daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == 16)
            assert not [e for e in daemon.seen if e["type"] == "irregularity"]
        finally:
            assert daemon.stop() == 0
    [journal] = sorted(storage.glob("*.jsonl"))
    assert pgn_moves(journal) == [m.uci() for m in moves]
    kept = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [e["white"] for e in kept if e["type"] == "clock_sides"] == ["right"]


def test_a_new_game_set_up_while_the_clock_still_runs(tmp_path: Path) -> None:
    """A game ends by resignation with Black's clock running; the pieces are set up
    again and the players change colours (White's side is now the other one), the
    clock left running. Every move of the new game is decided at its press, and its
    last move reaches the journal and the PGN."""
    first = shipped_game(1)
    second = shipped_game(3)
    moves_1 = list(first.mainline_moves())[:9]
    moves_2 = list(second.mainline_moves())[:12]
    log_1 = human_sensor_log(first.board(), moves_1, seed=31, with_clock=True, timing=BRISK)
    t = log_1[-1].t + 3.0
    log_2 = human_sensor_log(
        second.board(), moves_2, seed=32, with_clock=True, timing=BRISK, start_time=t
    )
    # The clock is not reset: nothing reports it stopped between the games.
    log_2 = [e for e in log_2 if not (isinstance(e, ClockReport) and e.running is None)]
    storage = tmp_path / "games"
    with BoardEmulator(tmp_path) as emulator:
        emulator.play(log_1[:1])
        emulator.wait_played(10)
        daemon = RunningDaemon(emulator.port_path, storage, daemon_env())
        try:
            daemon.wait_for(lambda e: e["type"] == "game_start")
            play_press_by_press(emulator, daemon, log_1, 1, 1)
            daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == 9)
            emulator.play([BoardDump(t, "8/8/8/8/8/8/8/8")], speed=SPEED)  # cleared
            assert emulator.wait_played(10)
            emulator.white_on_left = False  # the players changed colours
            # White's clock already runs (started before the pieces stood ready).
            emulator.play([replace(log_2[1], t=log_2[0].t), log_2[0]])
            assert emulator.wait_played(10)
            daemon.wait_for(lambda e: e["type"] == "game_start" and e is not daemon.seen[0])
            play_press_by_press(emulator, daemon, log_2, 2, 1)
            daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == 12)
            assert not [e for e in daemon.seen if e["type"] == "irregularity"]
        finally:
            assert daemon.stop() == 0
    journals = sorted(storage.glob("*.jsonl"))
    assert len(journals) == 2
    assert pgn_moves(journals[0]) == [m.uci() for m in moves_1]
    assert pgn_moves(journals[1]) == [m.uci() for m in moves_2]


def _set_down(log: list, start: int, end: int, square: str, piece: str) -> int:
    """Where in ``log[start:end]`` the piece is set down on the square."""
    return next(
        i
        for i in range(start, end)
        if isinstance(log[i], SquareChange) and (log[i].square, log[i].piece) == (square, piece)
    )


def _restarted_at(
    tmp_path: Path,
    log: list,
    moves: list,
    cut: int,
    set_up: Callable[[BoardEmulator], None] = lambda emulator: None,
    resume_from: int | None = None,
) -> None:
    """Killed right after move 12, the players play on up to ``cut`` while it is down;
    started again (the board ``set_up`` for it first), it must decide every later move
    (played from ``resume_from``, else ``cut``) at its press with no irregularity or
    notice, and the PGN must be whole."""
    presses = press_indices(log)
    storage = tmp_path / "games"
    with BoardEmulator(tmp_path) as emulator:
        daemon = killed_after(emulator, storage, log, 12)
        try:
            emulator.play(log[presses[11] : cut], speed=SPEED)  # the players play on
            assert emulator.wait_played(60)
            set_up(emulator)
            daemon = RunningDaemon(emulator.port_path, storage, daemon_env())
            daemon.wait_for(lambda e: e["type"] == "game_resumed")
            time.sleep(0.3)
            start = cut if resume_from is None else resume_from
            first_ply = 1 + sum(1 for i in presses if i <= start)
            play_press_by_press(emulator, daemon, log, start, first_ply)
            daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == len(moves))
            assert not [e for e in daemon.seen if e["type"] in ("irregularity", "notice")]
        finally:
            assert daemon.stop() == 0
    [journal] = sorted(storage.glob("*.jsonl"))
    assert pgn_moves(journal) == [m.uci() for m in moves]


def test_a_restart_with_a_piece_set_down_on_its_way_loses_no_move(tmp_path: Path) -> None:
    """Killed right after move 12; while it is down White castles and presses and
    Black slides his queen d8-e7-f6 (``benchmarks.pihall --restart-at`` found it: a
    hall's daemon killed in mid-round). Back with the queen set down on e7, the
    board's log held a whole "Qe7", taken as made until the queen landed on f6:
    displaced pieces from then on. Now Qe7 waits for Black's clock to prove it made,
    the queen lands on f6, and every move is decided at its press: the PGN is whole."""
    game = shipped_game(1)
    moves = list(game.mainline_moves())[:18]
    log = human_sensor_log(game.board(), moves, seed=21, with_clock=True, timing=BRISK)
    presses = press_indices(log)
    assert [m.uci() for m in moves[12:14]] == ["e1g1", "d8f6"]
    on_its_way = _set_down(log, presses[11], presses[13], "e7", "q")
    _restarted_at(tmp_path, log, moves, on_its_way + 1)  # the queen on e7, on its way


def test_a_move_made_while_the_restarted_daemon_reads_the_log_is_not_lost(
    tmp_path: Path,
) -> None:
    """Killed right after move 12; while it is down White castles and Black replies,
    both pressed, and White lifts his c-pawn. Back, the daemon finds the board moved
    on and reads its log; the pawn is set down on c4 meanwhile
    (``benchmarks.restart_moments`` at 5 s). Its field update came while the link
    was starting up and was thrown away: O-O was decided at c4's press, and the game
    stood on displaced pieces. Now every move is decided and the PGN is whole."""
    game = shipped_game(1)
    moves = list(game.mainline_moves())[:18]
    log = human_sensor_log(game.board(), moves, seed=21, with_clock=True, timing=BRISK)
    presses = press_indices(log)
    assert [m.uci() for m in moves[12:15]] == ["e1g1", "d8f6", "c2c4"]
    pawn_down = _set_down(log, presses[12], presses[14], "c4", "P")

    boards: list[BoardEmulator] = []

    def during_the_log_read(emulator: BoardEmulator) -> None:
        emulator.changes_after_answer[protocol.Command.SEND_EE_MOVES] = [("c4", "P")]
        boards.append(emulator)

    _restarted_at(tmp_path, log, moves, pawn_down, during_the_log_read, pawn_down + 1)
    assert not boards[0].changes_after_answer, "the board's log was never read"
