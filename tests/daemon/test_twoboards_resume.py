"""Two boards for one game (Appendix E.1) resume with their hand-over intact
(issue 29): the daemon reading the sighted player's board and the blind player's is
stopped, a move is made on one board only while it is down, and the daemon started
again on the same journal reads the game where that move was made.

In-process on two emulated USB boards, the daemon's clock 4x real time."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from daemon.app import Daemon
from daemon.config import load_text
from drivers.simulators.emulator import BoardEmulator


def pair_config(sighted: str, blind: str) -> str:
    return f"""
rules:
  settle_time: 0.6
clock:
  device: none
broadcast:
  enabled: false
boards:
  - {{id: "7", port: "{sighted}", white: "Sighted", black: "Blind"}}
  - {{id: "7b", port: "{blind}", same_game_as: "7", own_side: black, diverge_after: 8}}
"""


async def _until(condition, timeout: float = 8.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.02)
    return bool(condition())


class Pair:
    """The two emulated boards, and the daemon reading them (started again by
    ``restart``); ``feed`` holds what every run of it decided."""

    def __init__(self, tmp_path: Path) -> None:
        for name in ("sighted", "blind"):
            (tmp_path / name).mkdir()
        self.sighted = BoardEmulator(tmp_path / "sighted").start()
        self.blind = BoardEmulator(tmp_path / "blind").start()
        self.settings = load_text(
            pair_config(self.sighted.port_path, self.blind.port_path), "pair.yaml", {}
        )
        self.storage = tmp_path / "games"
        self.feed: list[dict] = []
        self.daemon: Daemon | None = None

    async def start(self, resume: bool) -> None:
        self.daemon = Daemon(
            self.settings,
            speech=False,
            storage_dir=self.storage,
            resume=resume,
            time_scale=4.0,
            on_event=self.feed.append,
        )
        await self.daemon.start()
        assert await _until(lambda: all(b.connected for b in self.daemon.boards.values()))

    async def stop(self) -> None:
        if self.daemon is not None:
            self.daemon.stop()
            await self.daemon.close(drain_speech=False)
            self.daemon = None

    async def move(self, board: BoardEmulator, frm: str, to: str, piece: str) -> None:
        board.set_square(frm, None)
        await asyncio.sleep(0.05)
        board.set_square(to, piece)

    def moves(self) -> list[str]:
        moves: list[str] = []
        for event in self.feed:
            if event["type"] == "move":
                del moves[event["ply"] - 1 :]
                moves.append(event["uci"])
        return moves

    def irregular(self) -> list[dict]:
        return [e for e in self.feed if e["type"] == "irregularity"]

    def close(self) -> None:
        self.sighted.stop()
        self.blind.stop()


@pytest.mark.parametrize("on_move", ["black", "white"])
async def test_a_move_made_on_one_board_while_the_daemon_was_down_is_read_on_that_board(
    tmp_path: Path, on_move: str
) -> None:
    """``black``: stopped after 1. e4 (repeated on the blind player's board), the blind
    player plays 1...e5 on his own board while the daemon is down. ``white``: stopped
    after 1. e4 e5, the sighted player plays 2. Nf3, the blind player repeats it and
    replies 2...Nc6 on his own board meanwhile. The restarted daemon reads the blind
    player's move on his board, at once, as it would have had it been up. Before, the
    game stayed on the sighted player's board: his move was counted only once the
    sighted player had repeated it, and meanwhile his own board was reported as
    diverging (E.2.7), telling him to take his move back."""
    pair = Pair(tmp_path)
    try:
        await pair.start(resume=False)
        assert await _until(lambda: any(e["type"] == "game_start" for e in pair.feed))
        await pair.move(pair.sighted, "e2", "e4", "P")
        assert await _until(lambda: pair.moves() == ["e2e4"])
        await pair.move(pair.blind, "e2", "e4", "P")  # repeated on the blind board
        if on_move == "white":
            await asyncio.sleep(0.3)
            await pair.move(pair.blind, "e7", "e5", "p")  # his own, on his own board
            assert await _until(lambda: pair.moves() == ["e2e4", "e7e5"])
            await pair.move(pair.sighted, "e7", "e5", "p")
        await asyncio.sleep(0.3)
        await pair.stop()  # the daemon is down...
        if on_move == "white":
            await pair.move(pair.sighted, "g1", "f3", "N")
            await pair.move(pair.blind, "g1", "f3", "N")  # ...Nf3 repeated...
            await pair.move(pair.blind, "b8", "c6", "n")  # ...and his reply
            played = ["e2e4", "e7e5", "g1f3", "b8c6"]
        else:
            await pair.move(pair.blind, "e7", "e5", "p")  # ...his reply, on his board
            played = ["e2e4", "e7e5"]
        await pair.start(resume=True)
        assert await _until(lambda: pair.moves() == played, 4.0), pair.moves()
        reply = played[-1]
        await pair.move(pair.sighted, reply[:2], reply[2:], "n" if "c6" in reply else "p")
        await asyncio.sleep(0.3)
        await pair.move(pair.sighted, "f1", "c4", "B")
        assert await _until(lambda: pair.moves() == [*played, "f1c4"])
        await pair.move(pair.blind, "f1", "c4", "B")
        await asyncio.sleep(0.3)
        await pair.move(pair.blind, "g8", "f6", "n")  # the last ply, on his board
        assert await _until(lambda: pair.moves() == [*played, "f1c4", "g8f6"])
        await pair.move(pair.sighted, "g8", "f6", "n")
        await asyncio.sleep(2.3)  # more than diverge_after: a disagreement would show
        assert pair.irregular() == []
        assert sum(e["type"] == "game_resumed" for e in pair.feed) == 1
    finally:
        await pair.stop()
        pair.close()
