"""The schedule against real speech lengths: a real game at three paces, the real
espeak-ng's WAVs, and a player that takes each file's true length (simulated time).

Without the schedule's guarantees these fail plainly: a move cut or lost, or a lag
that grows with every move in fast play (tens of seconds by the end of a game).
The figures over many games are in benchmarks/RESULTS.md (speech schedule).
"""

from __future__ import annotations

import random
import shutil

import pytest

from daemon.speech.settings import SpeechSettings
from daemon.speech.simulation import EspeakDurations, game_timeline, simulate, standard_games
from daemon.speech.vocabulary import load_vocabulary

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="no espeak-ng")

PACES = {"classical": (5.0, 60.0), "blitz": (1.0, 3.0), "bullet": (0.6, 1.0)}


@pytest.fixture(scope="module")
def game(shared) -> list[str]:
    return standard_games(shared / "data" / "games.pgn", 1, min_plies=60)[0]


@pytest.fixture(scope="module")
def durations() -> EspeakDurations:
    return EspeakDurations("de")


def play(game, durations, pace, requests=(), **settings):
    low, high = PACES[pace]
    rng = random.Random(7)
    events = game_timeline(game, [rng.uniform(low, high) for _ in game])
    for t, what in requests:
        events.append((t, {"t": t, "type": "info_request", "what": what, "by": "white"}))
    return simulate(events, SpeechSettings(engine="text", **settings), load_vocabulary(), durations)


@pytest.mark.parametrize("pace", sorted(PACES))
@pytest.mark.parametrize("sides", [("white", "black"), ("black",)])
def test_every_move_is_heard_in_full_with_a_bounded_lag(game, durations, pace, sides) -> None:
    run = play(game, durations, pace, sides=sides)
    lags = run.lags()
    assert sorted(lags) == sorted(run.move_times)  # every move heard, none cut or lost
    assert len(run.move_times) == (len(game) if len(sides) == 2 else len(game) // 2)
    assert not [o for o in run.outcomes if o["outcome"] != "heard"]
    # Bounded: the last moves of the game are not later than the first ones were.
    assert max(lags.values()) < {"classical": 3.0, "blitz": 2.0, "bullet": 3.5}[pace]


def test_in_classical_play_moves_are_said_at_the_configured_rate(game, durations) -> None:
    run = play(game, durations, "classical", rate=150)
    assert {h.rate for h in run.heard if h.phrase.kind == "move"} == {150}


def test_in_bullet_moves_are_said_quicker_or_together(game, durations) -> None:
    run = play(game, durations, "bullet", rate=150, max_rate=300)
    moves = [h for h in run.heard if h.phrase.kind == "move"]
    assert max(h.rate for h in moves) > 150
    assert all(h.rate <= 300 for h in moves)


def test_a_board_reading_in_blitz_never_holds_a_move_up_by_more_than_one_phrase(
    game, durations
) -> None:
    run = play(game, durations, "blitz", requests=[(20.0, "board"), (60.0, "clock")])
    answer_phrases = [h for h in run.heard if h.phrase.kind == "answer"]
    assert answer_phrases, "the answers were said"
    assert max(h.seconds for h in answer_phrases) < 4.0  # short phrases
    assert max(run.answer_phrases_before(ply) for ply in run.move_times) <= 1
    # Each phrase of an answer was composed as it was said, not when it was asked.
    assert all(h.start - h.phrase.composed_at < 0.2 for h in answer_phrases)
    spoken = [o for o in run.outcomes if o["kind"] in ("answer", "notice")]
    assert spoken, "the player was told what became of each answer"
