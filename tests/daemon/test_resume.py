"""Nothing lost: ``dgt-bridge run`` killed (SIGKILL) at random points of a game on the
board emulator, restarted, finishes with the PGN of the game played."""

from __future__ import annotations

import io
import random
import time
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest

from benchmarks.daemonrun import (
    RunningDaemon,
    clock_tick,
    daemon_env,
    press_indices,
    shipped_games,
)
from drivers.sensors import ClockReport
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.handling import human_sensor_log

SPEED = 8.0  # the emulator plays 8 times faster than human hands...
SETTLE = 0.6 / SPEED  # ...so the rules core's settle time shrinks alike


def shipped_game(number: int) -> chess.pgn.Game:
    return shipped_games()[number - 1]


def completed_plies(log: list[Any], upto: int) -> int:
    """Moves completed (clock pressed to the other side) in the first ``upto`` events."""
    presses, running = 0, None
    for event in log[:upto]:
        if isinstance(event, ClockReport) and event.running is not None:
            if running is not None and event.running != running:
                presses += 1
            running = event.running
    return presses


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11])
def test_killed_at_random_points_the_game_resumes_and_its_pgn_is_complete(
    tmp_path: Path, seed: int
) -> None:
    """SIGKILLed three times: once at a random moment between two moves (what a crash
    or a power cut mostly hits: players think far longer than they move) and twice at
    random sensor events, so maybe with a piece in the hand. Between moves the
    restarted daemon finds the board as the journal left it and says "game resumed";
    mid-move it says so too, and the player simply completes the move, before the
    restart (then the daemon finds the move made, waiting for the press) or after."""
    rng = random.Random(seed)
    game = shipped_game(4)  # Pillsbury - Moll 1902: 42 half-moves, ends in mate
    moves = list(game.mainline_moves())
    log = human_sensor_log(game.board(), moves, seed=seed, with_clock=True)
    between = rng.choice(press_indices(log)[1:8])
    anywhere = rng.sample(range(between + 5, len(log) - 5), 2)
    resumed = play_with_kills(tmp_path, game, log, sorted([between, *anywhere]), rng)
    assert [event["type"] for event in resumed] == ["game_resumed"] * 3


def play_with_kills(
    tmp_path: Path,
    game: chess.pgn.Game,
    log: list[Any],
    kills: list[int],
    rng: random.Random,
    moves: list[chess.Move] | None = None,
) -> list[dict[str, Any]]:
    """Play ``log`` (of ``moves``, default the whole game) on the emulator, SIGKILL the
    daemon at each index of ``kills`` and restart it; check the final PGN; return the
    first resume event of each restart."""
    whole_game = moves is None
    moves = list(game.mainline_moves()) if moves is None else moves
    storage = tmp_path / "games"
    env = daemon_env(SETTLE)
    resumed_at = []
    resumes: list[int] = []  # game_resumed events of each restarted daemon
    with BoardEmulator(tmp_path) as emulator:
        emulator.play(log[:1])  # the start position stands on the board
        emulator.wait_played(10)
        daemon = RunningDaemon(emulator.port_path, storage, env)
        try:
            daemon.wait_for(lambda e: e["type"] == "game_start")
            start, journaled = 1, 0
            for cut in [*kills, len(log)]:
                cut = max(cut, start)  # (a kill inside a move already made while down)
                emulator.play(log[start:cut], speed=SPEED)
                assert emulator.wait_played(120)
                plies = completed_plies(log, cut)
                if plies > journaled:  # (a restarted daemon does not repeat old moves)
                    daemon.wait_for(lambda e, p=plies: e["type"] == "move" and e["ply"] == p)
                    journaled = plies
                start = cut
                if cut == len(log):
                    break
                time.sleep(rng.uniform(0.0, 0.3))
                if resumed_at:
                    resumes.append(daemon.resumes_seen())
                daemon.kill()  # as a power cut would: no goodbye
                if rng.random() < 0.5:  # the player goes on with his move while it is down
                    before_press = next((i - 1 for i in press_indices(log) if i - 1 > cut), cut)
                    emulator.play(log[cut:before_press], speed=SPEED)
                    assert emulator.wait_played(120)
                    cut = start = before_press
                daemon = RunningDaemon(emulator.port_path, storage, env)
                event = daemon.wait_for(
                    lambda e: e["type"] in ("game_resumed", "irregularity", "game_start")
                )
                assert event["type"] != "game_start", "a restart must not start a new game"
                resumed_at.append(event)
                # Killed between moves or mid-move, the board shows the journal's
                # position or a move under way: no alarm; the player just goes on.
                assert event["type"] == "game_resumed", event
                # A running DGT clock reports every second; the log-driven emulator only
                # on change. One tick tells the restarted daemon whose clock runs.
                tick = clock_tick(log[:cut], seconds=len(resumed_at))
                assert tick is not None
                emulator.apply(tick)
                daemon.wait_for(lambda e: e["type"] == "clock")
            if whole_game:
                daemon.wait_for(lambda e: e["type"] == "game_end")
            if resumed_at:
                resumes.append(daemon.resumes_seen())
        finally:
            code = daemon.stop()
    assert resumes == [1] * len(kills), "one game_resumed per restart"
    assert code == 0
    journals = sorted(storage.glob("*.jsonl"))
    assert len(journals) == 1, "the game went on in one journal"
    pgn = chess.pgn.read_game(io.StringIO(journals[0].with_suffix(".pgn").read_text()))
    assert [m.uci() for m in pgn.mainline_moves()] == [m.uci() for m in moves]
    if whole_game:
        assert pgn.headers["Result"] == game.headers["Result"]
    return resumed_at
