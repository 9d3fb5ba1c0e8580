"""What a move costs the page's game record, in CPU: its fold and the state read.

    python -m benchmarks.state_cost [--games N] [--plies N] [--runs N] [--quick]

At every move the board's record folds it (``GameRecord.apply``), and the page reads
the record's state (``GameRecord.state``, through ``Hub.page_state``) for a viewer
that wants the state with each event (a hall's wall) and for MQTT's retained state:
the position, its FEN and whether it is check. Real games (``../shared/data/games.pgn``,
distinct openings) are folded as the pipeline folds them; each move's fold and state
read are timed with this thread's CPU clock, and the median run is shown. Another
tree: ``PYTHONPATH=<tree> python -m benchmarks.state_cost``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import chess

from benchmarks.permove import move_events, per_move_main
from daemon.game.record import GameRecord


def cpu_per_move(games: list[list[chess.Move]]) -> float:
    """Seconds of CPU a move's fold and state read take, over ``games``."""
    spent, moves = 0, 0
    for game in games:
        record = GameRecord()
        record.apply({"t": 0.0, "type": "game_start", "fen": chess.STARTING_FEN})
        for event in move_events(game):
            data = event.to_dict()
            start = time.thread_time_ns()
            record.apply(data)
            record.state(with_moves=False)  # as Hub.page_state reads it
            spent += time.thread_time_ns() - start
            moves += 1
    return spent / 1e9 / moves


def main(argv: Sequence[str] | None = None) -> int:
    title = "a move's CPU in the page's game record (fold and state)"
    return per_move_main(argv, __doc__, title, cpu_per_move, plies=160)


if __name__ == "__main__":
    raise SystemExit(main())
