"""The relay's clock rule against the order the real daemon reports a press in:
the clock (its increment added) first, then the move it completes."""

from __future__ import annotations

import chess
import pytest

from daemon.broadcast.relaycheck import Rejected
from daemon.broadcast.relayrules import GameRules


def _move(board: chess.Board, uci: str, t: float, clock: dict[str, float]) -> dict:
    by = "white" if board.turn == chess.WHITE else "black"
    san = board.san(chess.Move.from_uci(uci))
    board.push_uci(uci)
    return {"type": "move", "t": t, "ply": board.ply(), "uci": uci, "san": san,
            "fen": board.fen(), "by": by, "clock": dict(clock)}  # fmt: skip


def _daemon_feed(increment: float) -> list[dict]:
    """Four plies of 90+``increment`` as ``dgt-bridge run`` reports them from a DGT
    3000: at each press the clock with the increment added, then the move."""
    board, clock, t = chess.Board(), {"white": 5400.0, "black": 5400.0}, 1.0
    feed = [{"type": "clock", "t": t, **clock, "running": None},
            {"type": "clock", "t": t + 0.5, **clock, "running": "white"}]  # fmt: skip
    for uci in ("g1f3", "g8f6", "c2c4", "e7e6"):
        side = "white" if board.turn == chess.WHITE else "black"
        t += 3.0
        clock[side] += increment - 3.0
        other = "black" if side == "white" else "white"
        feed.append({"type": "clock", "t": t, **clock, "running": other})
        feed.append(_move(board, uci, t, clock))
    return feed


@pytest.mark.parametrize("increment", [0.0, 30.0, 120.0])
def test_every_press_of_a_game_with_an_increment_is_taken_in_the_daemon_s_order(increment):
    """Before, each side's first press (its clock, then its move) was dropped as
    "the white clock gains more than the time control allows": the increment was
    allowed only once the move had come."""
    rules = GameRules()
    for event in _daemon_feed(increment):
        rules.take(event)
    assert len(rules.board.move_stack) == 4
    assert rules.clock == {"white": 5400.0 + 2 * (increment - 3.0),
                           "black": 5400.0 + 2 * (increment - 3.0)}  # fmt: skip


def test_a_clock_still_gains_no_more_than_the_increment_ahead_of_its_move():
    """Once the game has begun (before its first move the clock is being set, and
    any time is its start), a press gains no more than the time control allows."""
    rules = GameRules()
    feed = _daemon_feed(0.0)
    for event in feed[:6]:  # the clock set, then two plies
        rules.take(event)
    clock = dict(rules.clock or {})
    with pytest.raises(Rejected, match="gains more"):
        rules.take({"type": "clock", "t": 20.0, "white": clock["white"] + 1000.0,
                    "black": clock["black"], "running": "black"})  # fmt: skip
