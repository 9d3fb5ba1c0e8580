"""One board's outputs: how often its game is folded, and the CPU an event costs.

    python -m benchmarks.one_record [--plies N] [--runs N] [--disk-writer] [--quick]

One board as the daemon makes it (``daemon.boards.board.Board``: journal, speech with the
text engine and the two phone pages' announcers, the page's hub without a server),
fed a shipped standard game played by the human-handling model on simulated time.
It prints how many times a feed event is folded into a game record (issue 25: the
board's one record, folded once; before, the journal, each announcer and the hub
folded their own), how many times an event is made a dict (``to_dict``: the
pipeline's one for the record and the journal, then each output at an edge and each
announcer its own), and the CPU the board's whole path takes per feed event (best
of the runs: the outputs' work and the journal's writes to a temporary directory
included). ``--disk-writer``: the journal's fsync and PGN on the daemon's disk
writer, as the daemon runs (here without an event loop its jobs run at once), so
the page reads the record as of the last event on the card (``daemon.boards.pageview``:
a snapshot an event).
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import chess
import chess.pgn

from benchmarks.common import GAMES_PGN, footer, header
from daemon.boards.board import Board
from daemon.boards.pipeline import SimulatedScheduler
from daemon.broadcast.server import Broadcaster
from daemon.config import board_entries, load_text
from daemon.game.events import DomainEvent
from daemon.game.record import GameRecord
from daemon.speech.vocabulary import vocabulary_of
from daemon.storage.diskwriter import DiskWriter
from drivers.simulators.handling import human_sensor_log

#: The shipped settle time (0.6 s): at 0.3 s the human-handling model's rook, set down
#: on a wrong square for 0.37 s before it went on, was a move made (4.6, rightly with no
#: clock), the game went a tempo astray at ply 34, and from ply 38 every event was an
#: irregularity: the CPU "per feed event" was mostly not of moves (found 2026-12-06).
CONFIG = (
    "rules:\n  settle_time: 0.6\nclock:\n  device: none\nspeech:\n  engine: text\n"
    "broadcast:\n  address: 127.0.0.1\n  port: 0\n"
)


def standard_game(plies: int) -> list[chess.Move]:
    with GAMES_PGN.open(encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            if "FEN" not in game.headers:
                return list(game.mainline_moves())[:plies]
    raise SystemExit(f"no standard game in {GAMES_PGN}")


def one_run(
    moves: list[chess.Move], folds: list[int], dicts: list[int], writer: DiskWriter | None
) -> tuple[int, int, float]:
    """(feed events, moves decided, CPU seconds) of one board playing ``moves``."""
    settings = load_text(CONFIG, "one_record.yaml", environ={})
    log = human_sensor_log(chess.Board(), moves, seed=3, with_clock=False)
    scheduler = SimulatedScheduler()
    page = Broadcaster(settings.broadcast)
    vocabulary = vocabulary_of(settings.speech)
    with tempfile.TemporaryDirectory() as directory:
        board = Board(
            board_entries(settings)[0],
            settings,
            journal_dir=Path(directory),
            scheduler=scheduler,
            vocabulary=vocabulary,
            named=False,
            hub=lambda: page,
            on_connection=lambda board, event: None,
            disk_writer=writer,
        )
        board.make_announcer(vocabulary, io.StringIO(), None, lambda problem: None)
        board.hand_to_page(page)
        assert board.pipeline is not None and board.journal is not None
        folds[0] = dicts[0] = 0
        start = time.process_time()
        for event in log:
            scheduler.run_before(event.t)
            board.pipeline.submit(event)
        scheduler.run_before(None)
        cpu = time.process_time() - start
        events = len(board.journal.game_events)
        decided = sum(e.get("type") == "move" for e in board.journal.game_events)
        board.journal.close()
    return events, decided, cpu


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plies", type=int, default=60, help="half-moves of the game")
    parser.add_argument("--runs", type=int, default=5, help="runs; the best CPU is shown")
    parser.add_argument("--disk-writer", action="store_true", help="as the daemon writes")
    parser.add_argument("--quick", action="store_true", help="10 plies, one run (a smoke test)")
    args = parser.parse_args(argv)
    if args.quick:
        args.plies, args.runs = 10, 1
    header("one board's game record: folds and CPU per feed event")
    folds = [0]
    real_apply = GameRecord.apply

    def counted(record: GameRecord, event: dict) -> None:
        folds[0] += 1
        real_apply(record, event)

    GameRecord.apply = counted  # type: ignore[method-assign]  # counting, this process only
    dicts = [0]
    real_to_dict = DomainEvent.to_dict

    def counted_to_dict(event: DomainEvent) -> dict:
        dicts[0] += 1
        return real_to_dict(event)

    DomainEvent.to_dict = counted_to_dict  # type: ignore[method-assign]  # likewise
    moves = standard_game(args.plies)
    writer = DiskWriter() if args.disk_writer else None
    results = [one_run(moves, folds, dicts, writer) for _ in range(max(1, args.runs))]
    events, decided = results[-1][0], results[-1][1]
    best = min(cpu for _, _, cpu in results)
    how = ", the disk writer" if writer else ""
    print(f"one board, {len(moves)} plies{how}: {events} feed events, {decided} moves decided")
    print(f"record folds: {folds[0]} ({folds[0] / events:.2f} per feed event)")
    print(f"events made dicts: {dicts[0]} ({dicts[0] / events:.2f} per feed event)")
    print(f"CPU: {best * 1000:.0f} ms for the game, {best / events * 1e6:.0f} us per feed event "
          f"(best of {len(results)})")  # fmt: skip
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
