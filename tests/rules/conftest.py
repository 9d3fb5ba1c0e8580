"""Fixtures of the rules-core tests."""

from __future__ import annotations

import pytest
from rules_support import Game, read_games

REAL_GAMES = 1000  # the first 1,000 of games.pgn, all 8 Chess960 games among them


@pytest.fixture(scope="session")
def real_games(shared) -> list[Game]:
    """Parsed once for every test module that plays real games."""
    return read_games(shared / "data" / "games.pgn", limit=REAL_GAMES)
