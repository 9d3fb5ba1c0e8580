"""Fault trials on a chain of boards in DGT bus mode (``benchmarks.faults`` kinds
``chain_kill``, ``chain_pull``, ``chain_corrupt``; issue 29).

Four boards on the emulated chain (``drivers.simulators.busemulator``), each playing its own
real game by human hands, read by ``dgt-bridge run`` in its own process with a
``boards:`` configuration. The fault, at a random moment of the round:

- ``chain_kill``: the daemon SIGKILLed and started again 10 s (of the games' time)
  later, the games going on meanwhile;
- ``chain_pull``: one board pulled out of the chain for 10 s with its power on (its
  changes and its log go on), then plugged in again;
- ``chain_corrupt``: bursts of replies with bad checksums on every board through
  the game.

Judged as every fault trial is: every move of every game in its journal's PGN
(lost: 0), no irregularity nobody made (false: 0), no traceback.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess

from benchmarks.daemonrun import RunningDaemon, daemon_env, pgn_moves, shipped_games
from drivers.simulators.busemulator import BusChainEmulator
from drivers.simulators.handling import human_sensor_log

#: The boards play this much faster than human hands (the daemon's own start-up is
#: real seconds: at 10x it is half a minute of the games).
CHAIN_SPEED = 2.0
CHAIN_SETTLE = 0.6 / CHAIN_SPEED
SERIALS = ("01025", "01026", "01027", "01028")
KINDS = ("chain_kill", "chain_pull", "chain_corrupt")


def chain_config(port: str) -> str:
    lines = ["boards:\n"]
    for number, serial in enumerate(SERIALS, start=1):
        lines.append(f'  - {{id: "b{number}", bus_port: "{port}", bus_serial: "{serial}"}}\n')
    return "".join(lines)


def run_chain_trial(
    kind: str, work: Path, rng: random.Random, plies: int, trial: Any, judge: Callable[..., Any]
) -> Any:
    """One chain trial into ``trial`` (a ``benchmarks.faults.Trial``), judged per board
    with ``judge`` and summed."""
    games = rng.sample(shipped_games(), len(SERIALS))
    played = [list(g.mainline_moves())[:plies] for g in games]
    logs = [
        human_sensor_log(chess.Board(), moves, seed=rng.randrange(10**6), with_clock=True)
        for moves in played
    ]
    ids = [f"b{n}" for n in range(1, len(SERIALS) + 1)]
    storage, config = work / "games", work / "chain.yaml"
    env = daemon_env(CHAIN_SETTLE)
    feeds: list[dict[str, Any]] = []
    with BusChainEmulator(work, serials=SERIALS, seed=rng.randrange(1000)) as chain:
        config.write_text(chain_config(chain.port_path))
        for index, log in enumerate(logs):
            chain.play_on(index, log[:1])
        chain.wait_played(10)
        daemon = RunningDaemon(chain.port_path, storage, env, config=config)
        try:
            for board in ids:
                daemon.find(lambda e, b=board: e.get("board") == b and e["type"] == "game_start")
            for index, log in enumerate(logs):
                chain.play_on(index, log[1:], speed=CHAIN_SPEED)
            at = rng.randint(3, max(4, plies // 2))
            daemon.find(lambda e: e["type"] == "move" and e["ply"] >= at, 60)
            time.sleep(rng.uniform(0.0, 0.5))
            if kind == "chain_kill":
                daemon.drain(0.2)
                feeds += daemon.seen
                daemon.kill()
                time.sleep(10 / CHAIN_SPEED)
                daemon = RunningDaemon(chain.port_path, storage, env, config=config)
            elif kind == "chain_pull":
                pulled = rng.randrange(len(SERIALS))
                trial.setup = f"board b{pulled + 1} pulled"
                chain.unplug_board(pulled, powered=True)
                time.sleep(10 / CHAIN_SPEED)
                chain.replug_board(pulled)
            else:
                for _ in range(6):
                    for index in range(len(SERIALS)):
                        chain.corrupt_next_reply(index, rng.randint(1, 3))
                    time.sleep(rng.uniform(0.5, 2.0))
            chain.wait_played(300)
            expected = {b: [m.uci() for m in played[i]] for i, b in enumerate(ids)}
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                daemon.drain(0.3)
                if all(_moves(storage, b) == expected[b] for b in ids):
                    break
            if daemon.traceback():
                trial.notes.append("traceback")
            feeds += daemon.seen
        finally:
            daemon.stop()
        if chain.bus_forbidden:
            trial.notes.append(f"{len(chain.bus_forbidden)} forbidden commands")
    moves = lost = false = 0
    for board in ids:
        own = [e for e in feeds if e.get("board") == board]
        judged = judge(type(trial)(kind), expected[board], _moves(storage, board), own)
        moves, lost = moves + judged.moves, lost + judged.lost
        false += judged.false_irregularities
        trial.notes += [f"{board}: {note}" for note in judged.notes]
        if judged.lost:
            trial.notes.append(f"{board}: {judged.lost} of {judged.moves} moves lost")
            said = [
                f"{e['type']}@{e['t']:.2f}:{e.get('ply') or e.get('kind') or e.get('how') or ''}"
                f"{':' + e['uci'] if e['type'] == 'move' else ''}"
                for e in own
                if e["type"] not in ("clock", "clock_sides")
            ]
            trial.setup += f" {board} said: {' '.join(said)}"
    trial.moves, trial.lost, trial.false_irregularities = moves, lost, false
    trial.how = ",".join(
        sorted({e["how"] for e in feeds if e["type"] == "moves_recovered" and e.get("moves")})
    )
    trial.ok = lost == 0 and false == 0 and not trial.notes
    return trial


def _moves(storage: Path, board: str) -> list[str]:
    journals = sorted((storage / f"board-{board}").glob("*.jsonl"))
    return pgn_moves(journals[-1]) if journals else []
