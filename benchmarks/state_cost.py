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

import argparse
import statistics
import time
from collections.abc import Sequence

import chess

from benchmarks.common import GAMES_PGN, footer, header
from benchmarks.phrase_cost import move_events
from daemon.game.record import GameRecord
from drivers.simulators.gamelogs import distinct_openings


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=5, help="games a run (5)")
    parser.add_argument("--plies", type=int, default=160, help="plies a game at most (160)")
    parser.add_argument("--runs", type=int, default=5, help="runs; the median is shown (5)")
    parser.add_argument("--quick", action="store_true", help="one short game, one run")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.plies, args.runs = 1, 10, 1
    header("a move's CPU in the page's game record (fold and state)")
    games = distinct_openings(GAMES_PGN, args.games, args.plies)
    moves = sum(len(g) for g in games)
    runs = []
    for number in range(1, args.runs + 1):
        runs.append(cpu_per_move(games))
        print(f"run {number}: {runs[-1] * 1e6:.0f} µs of CPU a move ({moves} moves)")
    print(f"median run: {statistics.median(runs) * 1e6:.0f} µs of CPU a move")
    footer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
