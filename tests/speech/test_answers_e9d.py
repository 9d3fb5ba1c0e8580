"""Answers as Appendix E.9.d says (issue 27): "the number of moves completed and the
time used by both players"; after the game's end its result, never "am Zug";
a piece asked for by name says the plural as the board reading does."""

from __future__ import annotations

import chess

from daemon.game.record import GameRecord
from daemon.speech.answers import answer
from daemon.speech.vocabulary import load_vocabulary

DE = load_vocabulary("appendix-e")


def timed_game(moves: list[tuple[str, float]], *, clock_at: float | None = None) -> GameRecord:
    """A game started at t=0 whose moves were made at the given sensor times."""
    record = GameRecord()
    board = chess.Board()
    record.apply({"t": 0.0, "type": "game_start", "fen": board.fen()})
    for ply, (san, t) in enumerate(moves, 1):
        move = board.parse_san(san)
        by = "white" if board.turn == chess.WHITE else "black"
        board.push(move)
        record.apply(
            {"t": t, "type": "move", "ply": ply, "uci": move.uci(), "san": san,
             "fen": board.fen(), "by": by, "speech": "?"}
        )  # fmt: skip
    if clock_at is not None:  # the clock's report: time left, 5 minutes each at the start
        record.apply(
            {"t": clock_at, "type": "clock", "white": 280.0, "black": 250.0, "running": "white"}
        )
    return record


def test_the_clock_answer_gives_the_moves_completed_and_the_time_used_by_both() -> None:
    # White thinks 5 s, Black 40 s, White 10 s, Black 25 s; White has thought 7 s so far.
    record = timed_game([("e4", 5.0), ("e5", 45.0), ("Nf3", 55.0), ("Nc6", 80.0)], clock_at=87.0)
    assert answer("clock", {}, record, DE, by="black") == (
        "Züge gespielt: 2. Schwarz verbraucht eine Minute 5 Sekunden. Weiß verbraucht 22 Sekunden"
    )


def test_the_time_left_is_a_configured_extra() -> None:
    record = timed_game([("e4", 5.0), ("e5", 45.0)], clock_at=50.0)
    text = answer("clock", {}, record, DE, by="white", time_left=True)
    assert text == (
        "Züge gespielt: 1. Weiß verbraucht 10 Sekunden. Schwarz verbraucht 40 Sekunden."
        " Weiß 4 Minuten 40 Sekunden. Schwarz 4 Minuten 10 Sekunden"
    )


def test_after_mate_the_move_number_answer_gives_the_result() -> None:
    record = timed_game([("f3", 1.0), ("e5", 2.0), ("g4", 3.0), ("Qh4#", 4.0)])
    record.apply({"t": 4.0, "type": "game_end", "result": "0-1", "reason": "checkmate"})
    text = answer("move_number", {}, record, DE)
    assert "am Zug" not in text
    assert text == "Partie beendet. Schwarz gewinnt. Matt"


def test_a_piece_asked_for_says_the_plural_as_the_board_reading() -> None:
    record = timed_game([("e4", 1.0)])
    assert answer("piece", {"piece": "p"}, record, DE).startswith(
        "Bauern Schwarz: Anna sieben, Bella sieben, Cesar sieben"
    )
    assert answer("piece", {"piece": "K"}, record, DE) == "Koenig Weiß: Eva eins"
    board = answer("board", {}, record, DE)
    assert "Bauern Anna sieben" in board
