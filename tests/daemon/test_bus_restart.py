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
import pytest

from benchmarks.daemonrun import RunningDaemon, daemon_env, pgn_moves
from drivers.simulators.busemulator import BusChainEmulator
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.gamelogs import distinct_openings
from drivers.simulators.handling import human_sensor_log

SPEED = 2.0  # the boards play twice as fast as human hands (the daemon's own start-up
# is real seconds: faster, it is minutes of the games, with more moves than a log holds)
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

            if not until(whole, 60):
                daemon.stderr.seek(0)
                said = [ln for ln in daemon.stderr.read().decode().splitlines() if "bus" in ln]
                raise AssertionError(_why(storage, expected, daemon.seen) + "\n".join(said))
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


def pair_config(where: tuple[str, str]) -> str:
    return f"""clock:
  device: none
boards:
  - {{id: "7", {where[0]}, white: "Sighted", black: "Blind"}}
  - {{id: "7b", {where[1]}, same_game_as: "7", own_side: black, diverge_after: 4}}
"""


class PairBoards:
    """The two boards of one game: on one chain in bus mode, or two USB boards."""

    def __init__(self, tmp_path: Path, kind: str) -> None:
        self.chain: BusChainEmulator | None = None
        self.usb: list[BoardEmulator] = []
        if kind == "bus":
            self.chain = BusChainEmulator(tmp_path, serials=["01025", "01026"], seed=3).start()
            port = self.chain.port_path
            self.where = (
                f'bus_port: "{port}", bus_serial: "01025"',
                f'bus_port: "{port}", bus_serial: "01026"',
            )
        else:
            for name in ("sighted", "blind"):
                (tmp_path / name).mkdir()
                self.usb.append(BoardEmulator(tmp_path / name).start())
            self.where = (f'port: "{self.usb[0].port_path}"', f'port: "{self.usb[1].port_path}"')

    def square(self, index: int, square: str, piece: str | None) -> None:
        if self.chain is not None:
            self.chain.set_square_on(index, square, piece)
        else:
            self.usb[index].set_square(square, piece)

    def stop(self) -> None:
        for emulator in [self.chain, *self.usb]:
            if emulator is not None:
                emulator.stop()


def _move(boards: PairBoards, index: int, frm: str, to: str, piece: str) -> None:
    boards.square(index, frm, None)
    time.sleep(0.05)
    boards.square(index, to, piece)


@pytest.mark.parametrize("kind", ["bus", "usb"])
def test_two_boards_for_one_game_resume_their_hand_over_after_a_move_made_on_both_meanwhile(
    tmp_path: Path, kind: str
) -> None:
    """E.1: the sighted player moves on his board, the blind player on his own, each
    repeating the other's move. The daemon is killed after 1. e4 e5; meanwhile 2. Nf3
    is played on the sighted board and repeated on the blind one. The restarted daemon
    recovers 2. Nf3, says nothing of diverging boards (both show the game), hands the
    game to the blind player's board, and counts his reply and the moves after it.
    Before, a false boards_diverged came, each of his moves was a fault on his board
    until the sighted player repeated it, and the last ply was never counted."""
    storage = tmp_path / "games"
    config = tmp_path / "pair.yaml"
    env = daemon_env(0.3)
    sighted, blind = 0, 1
    feeds: list[dict[str, Any]] = []
    chain = PairBoards(tmp_path, kind)
    try:
        config.write_text(pair_config(chain.where))
        daemon = RunningDaemon("", storage, env, config=config)

        def moved(ply: int, uci: str, timeout: float = 20.0) -> None:
            daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == ply, timeout)
            made = [e["uci"] for e in daemon.seen if e["type"] == "move" and e["ply"] == ply]
            assert made[-1] == uci, made

        try:
            daemon.wait_for(lambda e: e["type"] == "game_start")
            _move(chain, sighted, "e2", "e4", "P")
            moved(1, "e2e4")
            _move(chain, blind, "e2", "e4", "P")  # repeated on the blind player's board
            time.sleep(1.0)
            _move(chain, blind, "e7", "e5", "p")  # his own move, on his own board
            moved(2, "e7e5")
            _move(chain, sighted, "e7", "e5", "p")
            time.sleep(1.0)
            daemon.kill()
            feeds += daemon.seen
            _move(chain, sighted, "g1", "f3", "N")  # while the daemon is down...
            _move(chain, blind, "g1", "f3", "N")  # ...and repeated on the other board
            time.sleep(1.0)
            daemon = RunningDaemon("", storage, env, config=config)
            moved(3, "g1f3", 30)
            time.sleep(1.0)
            _move(chain, blind, "b8", "c6", "n")  # the blind player's reply, on his board
            moved(4, "b8c6")
            _move(chain, sighted, "b8", "c6", "n")
            time.sleep(1.0)
            _move(chain, sighted, "f1", "b5", "B")
            moved(5, "f1b5")
            _move(chain, blind, "f1", "b5", "B")
            time.sleep(1.0)
            _move(chain, blind, "a7", "a6", "p")
            moved(6, "a7a6")
            _move(chain, sighted, "a7", "a6", "p")
            time.sleep(1.0)
            daemon.kill()  # again: now two moves while it is down, each on both boards
            feeds += daemon.seen
            _move(chain, sighted, "b5", "a4", "B")
            _move(chain, blind, "b5", "a4", "B")
            _move(chain, blind, "g8", "f6", "n")  # the blind player's, on his board...
            _move(chain, sighted, "g8", "f6", "n")  # ...repeated on the sighted board
            time.sleep(1.0)
            daemon = RunningDaemon("", storage, env, config=config)
            moved(8, "g8f6", 30)
            assert [e["uci"] for e in daemon.seen if e["type"] == "move"] == ["b5a4", "g8f6"]
            time.sleep(1.0)
            _move(chain, sighted, "e1", "g1", "K")  # castles: king first, then the rook
            _move(chain, sighted, "h1", "f1", "R")
            moved(9, "e1g1")
            _move(chain, blind, "e1", "g1", "K")
            _move(chain, blind, "h1", "f1", "R")
            time.sleep(1.0)
            _move(chain, blind, "f8", "e7", "b")  # the last ply, on his board
            moved(10, "f8e7")
            _move(chain, sighted, "f8", "e7", "b")
            daemon.drain(6.0)  # longer than diverge_after: any disagreement would show
        finally:
            code = daemon.stop()
            feeds += daemon.seen
        assert code == 0 and not daemon.traceback()
    finally:
        chain.stop()
    irregular = [(e.get("kind"), e.get("board")) for e in feeds if e["type"] == "irregularity"]
    assert irregular == [], [e for e in feeds if e["type"] not in ("clock", "move")]
    journals = sorted((storage / "board-7").glob("*.jsonl"))
    assert len(journals) == 1
    assert pgn_moves(journals[0]) == [
        *("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7")
    ]
