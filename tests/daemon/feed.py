"""Event feeds of real games for the daemon's tests, made with the shared event types."""

from __future__ import annotations

from typing import Any

import chess
import chess.pgn

from daemon.game.events import DomainEvent, GameEnd, GameStart, Irregularity, Move


def feed_of_game(uci_moves: list[str], *, result: str | None = None) -> list[dict[str, Any]]:
    """The feed a rules core emits for a clean game: game_start, one move per ply."""
    board = chess.Board()
    events: list[dict[str, Any]] = [GameStart(t=0.0, fen=board.fen()).to_dict()]
    for ply, uci in enumerate(uci_moves, 1):
        move = chess.Move.from_uci(uci)
        san = board.san(move)
        by = "white" if board.turn == chess.WHITE else "black"
        board.push(move)
        events.append(
            Move(
                t=float(ply), ply=ply, uci=uci, san=san, fen=board.fen(), by=by, speech=san
            ).to_dict()
        )
    if result:
        events.append(GameEnd(t=len(uci_moves) + 1.0, result=result, reason="arbiter").to_dict())
    return events


def illegal(t: float, by: str, count: int) -> dict[str, Any]:
    return Irregularity(t=t, kind="illegal_move", article="7.4", by=by, count=count).to_dict()


class Heard(list[DomainEvent]):
    """An output of a board's pipeline that keeps every event it receives, in order."""

    def receive(self, event: DomainEvent) -> None:
        self.append(event)
