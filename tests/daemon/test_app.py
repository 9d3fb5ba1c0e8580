"""The daemon shell's own decisions: board orientation and the log line per event."""

from __future__ import annotations

import chess

from daemon.app import describe_event, turned_round
from daemon.events import Irregularity, Move
from drivers.sensors import BoardDump, ClockReport, SquareChange

#: What the sensors of a board standing turned round report for the start position.
TURNED_START = "RNBKQBNR/PPPPPPPP/8/8/8/8/pppppppp/rnbkqbnr"


def test_a_board_configured_as_turned_round_is_read_the_right_way() -> None:
    dump = turned_round(BoardDump(0.0, TURNED_START))
    assert dump.placement == chess.Board().board_fen()
    # White's king's pawn sits on the sensor the turned board calls d7.
    assert turned_round(SquareChange(1.0, "d7", None)) == SquareChange(1.0, "e2", None)
    assert turned_round(SquareChange(1.5, "d5", "P")) == SquareChange(1.5, "e4", "P")
    clock = ClockReport(2.0, 300.0, 300.0, "black")
    assert turned_round(clock) is clock


def test_log_lines_say_the_move_and_the_irregularity_plainly() -> None:
    move = Move(t=1.0, ply=4, uci="b8c6", san="Nc6", fen="", by="black", speech="Springer")
    assert describe_event(move.to_dict()) == "move 2... Nc6: Springer"
    irregular = Irregularity(
        t=2.0, kind="illegal_move", article="7.4", by="white", squares=["g1", "g3"], count=2
    )
    line = describe_event(irregular.to_dict())
    assert line.startswith("IRREGULARITY illegal_move by white #2 (7.4)") and "g1 g3" in line
