"""What a move costs a speaking board's announcers, in CPU, before its phrase begins.

    python -m benchmarks.phrase_cost [--games N] [--plies N] [--runs N] [--quick]

A speaking board has the earphone's announcer and one for each player's phone line
(``daemon.speech.phone``), all fed every move in the event's own loop turn, the turn
before the earphone's phrase begins (``Announcer._start_now``). On a Pi Zero 2 W's
budget, 100 µs of our CPU there is about 2 ms before the blind player's first sound.
Real games (``../shared/data/games.pgn``, distinct openings) are fed as the pipeline
feeds them, with no phone page open and no event loop (the offers only); each move's
``receive`` is timed with this thread's CPU clock. The median run is shown.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from collections.abc import Iterator, Sequence

import chess

from benchmarks.common import GAMES_PGN, footer, header
from daemon.compose import build_announcer
from daemon.config import load_text
from daemon.game.events import Move
from daemon.game.record import GameRecord
from daemon.speech.announcer import Announcer, AnnouncerGroup
from daemon.speech.phoneline import PhoneLine
from daemon.speech.vocabulary import Vocabulary, load_vocabulary
from drivers.simulators.gamelogs import distinct_openings


def speaking_board(vocabulary: Vocabulary) -> tuple[GameRecord, Announcer | AnnouncerGroup]:
    """The announcers of one speaking board (earphone, white's and black's phone
    lines) on the board's one game record, made by the daemon's composition root
    (the text engine: what is measured is the announcers, not a synthesis)."""
    record = GameRecord()
    lines = {side: PhoneLine("1", side) for side in ("white", "black")}
    made = build_announcer(
        load_text("speech:\n  engine: text\n"), vocabulary, text_stream=io.StringIO(),
        phones=lines, record=record,
    )  # fmt: skip
    assert made is not None
    return record, made


def move_events(game: list[chess.Move]) -> Iterator[Move]:
    """The rules core's ``move`` events of ``game`` from the start position, one a
    second."""
    board = chess.Board()
    for ply, move in enumerate(game, 1):
        san, by = board.san(move), "white" if board.turn == chess.WHITE else "black"
        board.push(move)
        fen = board.fen()
        yield Move(t=float(ply), ply=ply, uci=move.uci(), san=san, fen=fen, by=by, speech="")


def cpu_per_move(games: list[list[chess.Move]], vocabulary: Vocabulary) -> float:
    """Seconds of CPU the announcers take a move, over ``games``."""
    spent, moves = 0, 0
    for game in games:
        record, announcers = speaking_board(vocabulary)
        announcers.receive({"t": 0.0, "type": "game_start", "fen": chess.STARTING_FEN})
        for event in move_events(game):
            record.apply(event.to_dict())  # the pipeline folds it before its outputs
            start = time.thread_time_ns()
            announcers.receive(event)
            spent += time.thread_time_ns() - start
            moves += 1
    return spent / 1e9 / moves


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=5, help="games a run (5)")
    parser.add_argument("--plies", type=int, default=80, help="plies a game at most (80)")
    parser.add_argument("--runs", type=int, default=5, help="runs; the median is shown (5)")
    parser.add_argument("--quick", action="store_true", help="one short game, one run")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.plies, args.runs = 1, 10, 1
    header("a move's CPU in a speaking board's announcers (earphone, two phone lines)")
    vocabulary = load_vocabulary()
    games = distinct_openings(GAMES_PGN, args.games, args.plies)
    moves = sum(len(g) for g in games)
    runs = []
    for number in range(1, args.runs + 1):
        runs.append(cpu_per_move(games, vocabulary))
        print(f"run {number}: {runs[-1] * 1e6:.0f} µs of CPU a move ({moves} moves)")
    print(f"median run: {statistics.median(runs) * 1e6:.0f} µs of CPU a move, no phone page open")
    footer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
