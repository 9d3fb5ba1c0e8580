"""The outputs of a board's pipeline (``daemon.boards.outputs.Output``): a bug in one of
them must not cost the journal or the other outputs a move."""

from __future__ import annotations

import logging
from pathlib import Path

import chess
import pytest

from daemon.boards.pipeline import BoardPipeline, SimulatedScheduler
from daemon.compose import build_board_parts
from daemon.config import Settings
from daemon.game.events import DomainEvent, Move
from daemon.storage.journal import Journal
from drivers.simulators.handling import human_sensor_log
from tests.daemon.feed import Heard

OPENING = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]


class Broken:
    """An output with a bug: it raises on every move."""

    def receive(self, event: DomainEvent) -> None:
        if event.type == "move":
            raise RuntimeError("a bug in an output")


def test_an_output_that_raises_costs_neither_the_journal_nor_the_outputs_after_it_a_move(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    scheduler = SimulatedScheduler()
    journal = Journal(tmp_path)
    heard = Heard()
    pipeline = BoardPipeline(
        "1",
        build_board_parts(Settings()),
        scheduler,
        journal=journal,
        outputs=[Broken(), heard],
    )
    moves = [chess.Move.from_uci(uci) for uci in OPENING]
    with caplog.at_level(logging.ERROR):
        for event in human_sensor_log(chess.Board(), moves, seed=1, with_clock=False):
            scheduler.run_before(event.t)
            pipeline.submit(event)
        scheduler.run_before(None)
    assert [e.uci for e in heard if isinstance(e, Move)] == OPENING
    assert [e["uci"] for e in journal.game_events if e["type"] == "move"] == OPENING
    assert "output Broken failed on move" in caplog.text
    journal.close()
