"""The feed's history keeps a board's current game, not the games of the day before it.

A viewer that resumes (SSE ``Last-Event-ID``) within the current game gets what it
missed; one resuming from a game that has since ended gets a fresh snapshot, as from
an event too old for the history. What the history holds does not grow from game to
game (issue 19: a tournament day through one daemon).
"""

from __future__ import annotations

import chess

from daemon.broadcast.hub import Hub
from daemon.broadcast.settings import BroadcastSettings


def play_game(hub: Hub, board: str, t: float) -> list[int]:
    """A game start and four moves on ``board``; the sequence numbers they got."""
    seqs = []
    hub.publish(board, {"type": "game_start", "t": t, "fen": chess.STARTING_FEN})
    seqs.append(hub.seq)
    position = chess.Board()
    for ply, uci in enumerate(("e2e4", "e7e5", "g1f3", "b8c6"), start=1):
        move = chess.Move.from_uci(uci)
        san = position.san(move)
        position.push(move)
        by = "white" if ply % 2 else "black"
        event = {"type": "move", "t": t + ply, "ply": ply, "uci": uci, "san": san, "by": by}
        hub.publish(board, {**event, "fen": position.fen()})
        seqs.append(hub.seq)
    return seqs


def test_a_new_game_drops_the_boards_earlier_games_from_the_history() -> None:
    hub = Hub(BroadcastSettings(history=5000))
    first = play_game(hub, "1", 0.0)
    other = play_game(hub, "2", 0.5)  # another board of the hall, still playing
    for day in range(20):
        current = play_game(hub, "1", 100.0 * (day + 1))
    # Board 1's current game and board 2's game: no more, however many games before.
    assert len(hub.history) == len(current) + len(other)
    # Resuming within the current game: exactly what was missed.
    missed = hub.subscribe(["1"], last_seq=current[1])
    assert [m.seq for m in missed.queue] == current[2:]
    # Resuming from a game long over: a snapshot of the board as it is now.
    stale = hub.subscribe(["1"], last_seq=first[2])
    assert [m.kind for m in stale.queue] == ["snapshot"]
