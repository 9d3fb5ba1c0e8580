"""A chain of boards survives a restart (issue 29): ``dgt-bridge run`` reading four
boards in DGT bus mode is killed with SIGKILL in mid-round, the games go on on the
boards, the daemon is started again 10 s (of the games' time) later, and every game
reaches the disk whole, with no false irregularity. Before, every board fell into an
endless ``displaced_pieces`` alarm and 0 of 4 games were whole."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import chess

from benchmarks.daemonrun import RunningDaemon, daemon_env, pgn_moves
from drivers.dgt.busemulator import BusChainEmulator
from drivers.gamelogs import distinct_openings
from drivers.handling import human_sensor_log

SPEED = 4.0  # the boards play 4 times faster than human hands...
SETTLE = 0.6 / SPEED  # ...so the rules core's settle time shrinks alike
SERIALS = ["01025", "01026", "01027", "01028"]
IDS = ["b1", "b2", "b3", "b4"]


def chain_config(port: str) -> str:
    lines = ["boards:\n"]
    for board, serial in zip(IDS, SERIALS, strict=True):
        lines.append(f'  - {{id: "{board}", bus_port: "{port}", bus_serial: "{serial}"}}\n')
    return "".join(lines)


def plies(daemon: RunningDaemon, board: str) -> int:
    """The last ply the daemon decided on ``board`` (its feed so far)."""
    moves = [e["ply"] for e in daemon.seen if e.get("board") == board and e["type"] == "move"]
    return moves[-1] if moves else 0


def until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return bool(condition())


def test_a_four_board_chain_survives_sigkill_with_moves_made_meanwhile(
    tmp_path: Path, shared: Path
) -> None:
    games = distinct_openings(shared / "data" / "games.pgn", 4, 30)
    logs = [
        human_sensor_log(chess.Board(), moves, seed=i, with_clock=True)
        for i, moves in enumerate(games)
    ]
    storage = tmp_path / "games"
    config = tmp_path / "chain.yaml"
    env = daemon_env(SETTLE)
    feeds: list[dict[str, Any]] = []
    with BusChainEmulator(tmp_path, serials=SERIALS, seed=5) as chain:
        config.write_text(chain_config(chain.port_path))
        for index, log in enumerate(logs):
            chain.play_on(index, log[:1])  # the start position stands on each board
        assert chain.wait_played(10)
        daemon = RunningDaemon(chain.port_path, storage, env, config=config)
        try:
            for board in IDS:
                daemon.wait_for(
                    lambda e, b=board: e.get("board") == b and e["type"] == "game_start"
                )
            for index, log in enumerate(logs):
                chain.play_on(index, log[1:], speed=SPEED)
            daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] >= 10, 60)
            daemon.drain(0.3)
            before = {board: plies(daemon, board) for board in IDS}
            daemon.kill()  # mid-round, as a power cut would
            feeds += daemon.seen
            time.sleep(10 / SPEED)  # systemd restarts it 10 s later; the games go on
            daemon = RunningDaemon(chain.port_path, storage, env, config=config)
            assert chain.wait_played(120)
            expected = {board: [m.uci() for m in games[i]] for i, board in enumerate(IDS)}

            def whole() -> bool:
                daemon.drain(0.2)
                return all(_journal_moves(storage, b) == expected[b] for b in IDS)

            assert until(whole, 60), _why(storage, expected, daemon.seen)
        finally:
            code = daemon.stop()
            feeds += daemon.seen
        assert code == 0 and not daemon.traceback()
        assert not chain.bus_forbidden
    assert all(0 < before[b] < len(games[i]) for i, b in enumerate(IDS)), before
    irregular = [e for e in feeds if e["type"] == "irregularity"]
    assert irregular == [], "no false irregularity"
    recovered = [e for e in feeds if e["type"] == "moves_recovered" and e.get("moves")]
    assert recovered, "the moves made while the daemon was down came back from the boards"
    for board in IDS:  # one game, one journal, whatever the restart
        assert len(list((storage / f"board-{board}").glob("*.jsonl"))) == 1


def _journal_moves(storage: Path, board: str) -> list[str]:
    journals = sorted((storage / f"board-{board}").glob("*.jsonl"))
    return pgn_moves(journals[-1]) if journals else []


def _why(storage: Path, expected: dict[str, list[str]], seen: list[dict[str, Any]]) -> str:
    """Which games are not whole, and what the restarted daemon said of their boards."""
    lines = []
    for board, moves in expected.items():
        got = _journal_moves(storage, board)
        if got == moves:
            continue
        said = [
            {k: v for k, v in e.items() if k not in ("fen", "speech", "clock", "board")}
            for e in seen
            if e.get("board") == board and e["type"] not in ("clock", "move")
        ]
        lines.append(f"{board}: {len(got)} of {len(moves)} plies on disk; said {said}")
    return "\n".join(lines)
