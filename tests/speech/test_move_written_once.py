"""A move is written once (issue 25): the rules core writes its SAN
(``daemon.rules.words.san``), and the speech says that same move value in its own
words, for the Move's ``speech`` field and for the announcer's answers alike.
(The record's PGN writes the moves of any feed itself: a relay's feed carries a
SAN nobody checked.)"""

from __future__ import annotations

import chess
import pytest

from daemon import compose
from daemon.config import Settings
from daemon.game.record import replay
from daemon.rules import words
from daemon.speech.answers import move_phrase
from daemon.speech.vocabulary import vocabulary_of
from drivers.simulators.handling import human_sensor_log

OPENING = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5c6", "d7c6", "e1g1"]


def test_each_move_is_written_once_and_said_from_that_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = Settings()
    core = compose.build_core(settings)
    moves = [chess.Move.from_uci(uci) for uci in OPENING]
    log = human_sensor_log(chess.Board(), moves, seed=5, with_clock=False)
    written = 0
    # Every SAN is written by one of two: python-chess's method (through Board.san or
    # the core's own suffix, daemon.rules.words.san), or the core's reading of the text
    # off the placement (words._plain_san, None when python-chess must tell pieces apart).
    real_write = chess.Board._algebraic_without_suffix
    real_plain = words._plain_san

    def write(board: chess.Board, move: chess.Move, **options: bool) -> str:
        nonlocal written
        written += 1
        return real_write(board, move, **options)

    def plain(board: chess.Board, key: bytes, move: chess.Move) -> str | None:
        nonlocal written
        text = real_plain(board, key, move)
        written += text is not None
        return text

    monkeypatch.setattr(chess.Board, "_algebraic_without_suffix", write)
    monkeypatch.setattr(words, "_plain_san", plain)
    feed = []
    for event in log:
        while (deadline := core.next_deadline()) is not None and deadline <= event.t:
            feed += core.tick(deadline)
        feed += core.judge(event)
    while (deadline := core.next_deadline()) is not None:
        feed += core.tick(deadline)
    played = [e for e in feed if e.type == "move"]
    assert [m.uci for m in played] == OPENING
    assert written == len(OPENING), "the core writes each move once; its words take that text"
    record = replay([e.to_dict() for e in feed])
    record.board()  # the record's own replay (its PGN writes any feed's moves itself)
    written = 0
    vocabulary = vocabulary_of(settings.speech)
    said = [move_phrase(record, m.ply, vocabulary) for m in played]
    assert written == 0, "the announcer's phrase takes the record's SAN"
    assert said == [m.speech for m in played]  # the same words, from the same move value
