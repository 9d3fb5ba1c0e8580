"""What finding the moves made while a board was out of reach costs, per call.

    python -m benchmarks.recovery_cost [--games N] [--runs N] [--quick]

A restarted daemon (or a board back after an outage) that finds a board moved on
walks the board's log for the line of legal moves that leads to what it shows
(``daemon.rules.recovery.logged_lines``). A restarted hall does it for every board
that moved on, at each of that board's changes until it resumes (``Resuming``), all
on the one event loop: on a Pi Zero 2 W's budget a millisecond here is about 17 ms
of the loop, while every board's presses wait.

Each case is a real game (``../shared/data/games.pgn``) stopped after a random ply
(6-16), then 2-6 moves made unseen: the board's log holds each piece lifted and each
set down. A second set is the log of a whole game from its start (what
SEND_FROM_START brings: every placement of 30-60 plies). Each call is timed with
this thread's CPU clock; the median of ``--runs`` runs is shown, and how many calls
found exactly the line played.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Sequence

import chess

from benchmarks.common import GAMES_PGN, footer, header
from daemon.rules import recovery
from drivers.simulators.gamelogs import distinct_openings

#: (the position when last known, what the board shows now, its log meanwhile, the
#: line played)
Case = tuple[chess.Board, str, tuple[str, ...], tuple[chess.Move, ...]]


def outage(moves: Sequence[chess.Move], start: int, plies: int) -> Case:
    """The board known after ``start`` plies, then ``plies`` moves made unseen: its
    log has the placement with each moving piece in the hand, then set down."""
    board = chess.Board()
    for move in moves[:start]:
        board.push(move)
    known = board.copy(stack=False)
    log: list[str] = []
    for move in moves[start : start + plies]:
        lifted = chess.BaseBoard(board.board_fen())
        lifted.remove_piece_at(move.from_square)
        log.append(lifted.board_fen())
        board.push(move)
        log.append(board.board_fen())
    return known, board.board_fen(), tuple(log), tuple(moves[start : start + plies])


def cases(games: list[list[chess.Move]], seed: int = 1) -> tuple[list[Case], list[Case]]:
    """Short outages (2-6 moves after ply 6-16) and whole games from the start (games
    of 60 plies)."""
    rng = random.Random(seed)
    short = [outage(g, rng.randint(6, 16), rng.randint(2, 6)) for g in games]
    whole = [outage(g, 0, rng.randint(30, 60)) for g in games]
    return short, whole


def time_calls(kind: list[Case]) -> tuple[float, int]:
    """Seconds of CPU a call; calls that found the line."""
    exact, spent = 0, 0
    for known, shows, log, played in kind:
        start = time.thread_time_ns()
        found = recovery.logged_lines(known, shows, log)
        spent += time.thread_time_ns() - start
        exact += found == [played]
    return spent / 1e9 / len(kind), exact


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=60, help="games, each one case a set (60)")
    parser.add_argument("--runs", type=int, default=5, help="runs; the median is shown (5)")
    parser.add_argument("--quick", action="store_true", help="10 games, 1 run")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.runs = 10, 1
    header("the moves made while a board was out of reach, found in its log: CPU a call")
    short, whole = cases(distinct_openings(GAMES_PGN, args.games, 60))
    print("| the board's log | calls | exact | CPU a call, median of runs (ms) | runs (ms) |")
    print("|---|---|---|---|---|")
    for name, kind in (("2-6 moves after ply 6-16", short), ("a whole game, 30-60 plies", whole)):
        runs = [time_calls(kind) for _ in range(args.runs)]
        each = [seconds * 1e3 for seconds, _ in runs]
        print(f"| {name} | {len(kind)} | {runs[0][1]} | {statistics.median(each):.2f} | "
              f"{', '.join(f'{ms:.2f}' for ms in each)} |")  # fmt: skip
    footer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
