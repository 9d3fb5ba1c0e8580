"""A decision the rules core holds until the board is heard again (the picture may be
stale: the board may have gone silent) makes the pipeline ask the board at once, so
a real alarm waits one round trip, not up to the next liveness probe a second away."""

from __future__ import annotations

import pytest

from daemon.boards.pipeline import BoardPipeline, SimulatedScheduler
from daemon.compose import build_board_parts
from daemon.config import Settings
from drivers.sensors import BoardDump, BoardHeard, SquareChange
from tests.daemon.feed import Heard

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"


def test_a_held_alarm_asks_the_board_once_and_is_decided_when_it_answers() -> None:
    scheduler = SimulatedScheduler()
    feed = Heard()
    pipeline = BoardPipeline("1", build_board_parts(Settings()), scheduler, outputs=[feed])
    probes: list[float] = []
    pipeline.probe_board = lambda: probes.append(scheduler.now())

    def at(t: float, event) -> None:
        scheduler.run_before(t)
        pipeline.submit(event)

    at(0.0, BoardDump(0.0, START))
    at(0.1, BoardHeard(0.1))
    at(1.0, SquareChange(1.0, "e2", None))
    at(1.2, SquareChange(1.2, "e5", "P"))  # e2-e5: an illegal move, once it has stood
    scheduler.run_before(3.0)  # the settle time passes; the board not heard since
    assert not [e for e in feed if e.type == "irregularity"]
    assert probes == [pytest.approx(1.8)]  # asked at once, when the decision was held
    at(3.0, BoardHeard(3.0))  # the answer: the picture stands
    [alarm] = [e for e in feed if e.type == "irregularity"]
    assert alarm.kind == "illegal_move"
    assert len(probes) == 1
