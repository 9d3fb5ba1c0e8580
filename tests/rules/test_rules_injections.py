"""Irregularities injected into real games: each is reported with its kind and article,
and nothing else is, and every move of the game still comes out right."""

from __future__ import annotations

import random

import pytest
from rules_support import (
    CLOCK_ONLY,
    EXPECTED,
    INJECTIONS,
    injected_log,
    injection_ply,
    kinds,
    lawful_moves,
    of_type,
    played,
    run,
    set_position_request,
)

from daemon.rules import RulesSettings

GAMES_PER_CASE = 6
CASES = [
    (kind, with_clock)
    for kind in INJECTIONS
    for with_clock in (True, False)
    if with_clock or kind not in CLOCK_ONLY
]


@pytest.fixture(scope="module")
def games(real_games):
    return real_games[:400]


@pytest.mark.parametrize(
    ("kind", "with_clock"), CASES, ids=[f"{k}-{'clock' if c else 'board'}" for k, c in CASES]
)
def test_injected_irregularity_is_reported_exactly(games, kind, with_clock):
    rng = random.Random(kind)
    tried = 0
    for game in games:
        if tried == GAMES_PER_CASE:
            break
        whole_game = kind in ("wrong_setup", "turned_board")
        if whole_game and game.needs_set_position:
            continue
        ply = None if whole_game else injection_ply(game, kind, rng)
        if ply is None and not whole_game:
            continue
        tried += 1
        log = injected_log(game, kind, ply, seed=game.index, with_clock=with_clock)
        # with Chess960 allowed, a king and queen swapped is a legal Chess960 start
        settings = RulesSettings(chess960=kind != "wrong_setup")
        out = run(set_position_request(game) + log, settings)
        label = (game.index, ply)
        assert kinds(out) == EXPECTED[kind], label
        assert played(out) == lawful_moves(game), label
        irregularity = of_type(out, "irregularity")
        if kind in ("illegal_then_restored", "knocked_piece"):
            assert len(of_type(out, "position_restored")) == 1, label
            assert irregularity[0].restore, label
        if kind == "illegal_then_restored":
            mover = "white" if (game.start.turn == (ply % 2 == 0)) else "black"
            assert irregularity[0].by == mover
            assert irregularity[0].count == 1
            assert "two extra minutes" in irregularity[0].consequence
        if kind == "wrong_setup":
            restore = {item["square"]: item["piece"] for item in irregularity[0].restore}
            assert restore == {"d1": "Q", "e1": "K", "d8": "q", "e8": "k"}
            assert len(of_type(out, "game_start")) == 1
        if kind == "turned_board":
            assert [e.flipped for e in of_type(out, "game_start")] == [True]
    assert tried == GAMES_PER_CASE, f"only {tried} games allow {kind}"
