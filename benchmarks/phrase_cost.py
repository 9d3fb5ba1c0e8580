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

import io
import time
from collections.abc import Sequence

import chess

from benchmarks.permove import move_events, per_move_main
from daemon.compose import build_announcer
from daemon.config import load_text
from daemon.game.record import GameRecord
from daemon.speech.announcer import Announcer, AnnouncerGroup
from daemon.speech.phoneline import PhoneLine
from daemon.speech.vocabulary import Vocabulary, load_vocabulary


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
    vocabulary = load_vocabulary()
    return per_move_main(
        argv, __doc__, "a move's CPU in a speaking board's announcers (earphone, two phone lines)",
        lambda games: cpu_per_move(games, vocabulary), plies=80, note=", no phone page open",
    )  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
