"""Two independent PGN readers judge a file: pgn-extract (strict, in C) and
python-chess (what lichess-like tools in Python read)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import chess.pgn
import pytest

PGN_EXTRACT = shutil.which("pgn-extract") or (
    "/usr/games/pgn-extract" if Path("/usr/games/pgn-extract").exists() else None
)


def unescape(value: str) -> str:
    """A tag value as the PGN standard reads it (python-chess keeps the escapes)."""
    return re.sub(r"\\(.)", r"\1", value)


def pgn_extract_report(text: str) -> str:
    """What ``pgn-extract -r`` says about the file (its errors, and the count)."""
    if PGN_EXTRACT is None:
        pytest.skip("pgn-extract is not installed (apt-get install pgn-extract)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "live.pgn"
        path.write_text(text, encoding="utf-8")
        done = subprocess.run(
            [PGN_EXTRACT, "-r", str(path)], capture_output=True, text=True, timeout=30,
            check=False,
        )  # fmt: skip
    return done.stdout + done.stderr


def validated_games(text: str, count: int) -> list[chess.pgn.Game]:
    """The games of ``text``, after both readers accepted all ``count`` of them
    without a single complaint."""
    report = pgn_extract_report(text)
    assert "Line number" not in report and "rror" not in report, report
    assert f"{count} game{'s' if count != 1 else ''} matched out of {count}." in report, report
    handle = io.StringIO(text)
    games = []
    while (game := chess.pgn.read_game(handle)) is not None:
        assert not game.errors, game.errors
        games.append(game)
    assert len(games) == count
    return games
