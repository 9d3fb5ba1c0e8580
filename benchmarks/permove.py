"""What the per-move CPU benchmarks share (``phrase_cost``, ``state_cost``): real games
as the rules core's ``move`` events, and one command line (games, plies, runs; the
median run shown)."""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable, Iterator, Sequence

import chess

from benchmarks.common import GAMES_PGN, footer, header
from daemon.game.events import Move
from drivers.simulators.gamelogs import distinct_openings

#: Seconds of CPU a move over the games given.
Measure = Callable[[list[list[chess.Move]]], float]


def move_events(game: list[chess.Move]) -> Iterator[Move]:
    """The rules core's ``move`` events of ``game`` from the start position, one a
    second."""
    board = chess.Board()
    for ply, move in enumerate(game, 1):
        san, by = board.san(move), "white" if board.turn == chess.WHITE else "black"
        board.push(move)
        fen = board.fen()
        yield Move(t=float(ply), ply=ply, uci=move.uci(), san=san, fen=fen, by=by, speech="")


def per_move_main(
    argv: Sequence[str] | None,
    doc: str,
    title: str,
    measure: Measure,
    *,
    plies: int,
    note: str = "",
) -> int:
    """A per-move benchmark's command line: ``measure`` run over distinct real
    openings of up to ``plies`` plies, each run and the median printed."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--games", type=int, default=5, help="games a run (5)")
    parser.add_argument("--plies", type=int, default=plies, help=f"plies a game at most ({plies})")
    parser.add_argument("--runs", type=int, default=5, help="runs; the median is shown (5)")
    parser.add_argument("--quick", action="store_true", help="one short game, one run")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.plies, args.runs = 1, 10, 1
    header(title)
    games = distinct_openings(GAMES_PGN, args.games, args.plies)
    moves = sum(len(g) for g in games)
    runs = []
    for number in range(1, args.runs + 1):
        runs.append(measure(games))
        print(f"run {number}: {runs[-1] * 1e6:.0f} µs of CPU a move ({moves} moves)")
    print(f"median run: {statistics.median(runs) * 1e6:.0f} µs of CPU a move{note}")
    footer()
    return 0
