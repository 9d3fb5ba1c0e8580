"""The issue-13 and issue-26 handling set on real games (the benchmark runs it at full size)."""

from __future__ import annotations

import random

import pytest
from rules_support import kinds, of_type, played, run

from daemon.rules import RulesSettings
from drivers.simulators.handling_cases import HANDLING_CASES, handling_case, handling_ply

GAMES_PER_CASE = 2


@pytest.mark.parametrize("clock", [False, True], ids=["no clock", "clock"])
@pytest.mark.parametrize("case_name", HANDLING_CASES)
def test_each_handling_case_in_real_games_gives_exactly_what_it_should(
    real_games, case_name, clock
):
    rng = random.Random(case_name)
    tried = 0
    for game in real_games:
        if tried == GAMES_PER_CASE:
            break
        ply = None if game.needs_set_position else handling_ply(game, case_name, rng)
        if ply is None:
            continue
        tried += 1
        case = handling_case(game, case_name, ply, seed=game.index, with_clock=clock)
        out = run(case.events, RulesSettings(use_clock=clock))
        starts = [i for i, e in enumerate(out) if e.type == "game_start"]
        first = out[: starts[1]] if len(starts) > 1 else out
        assert played(first) == case.moves, f"game {game.index}"
        assert sorted(kinds(out)) == sorted(case.irregularities), f"game {game.index}"
        notices = [e.code for e in of_type(out, "notice")]  # type: ignore[attr-defined]
        assert [code for code in notices if code not in case.allowed_notices] == []
        if case.result is not None:
            ends = [(e.result, e.reason) for e in of_type(out, "game_end")]
            assert ends == [(case.result, "result_on_board")]
        if case.next_game_moves is not None:
            assert len(starts) == 2 and played(out[starts[1] :]) == case.next_game_moves
    assert tried == GAMES_PER_CASE
