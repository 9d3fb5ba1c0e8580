"""Shared fixtures: where the shared material lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("DGT_BRIDGE_SHARED", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared() -> Path:
    """The shared material (real games, the real DGT capture); skip where absent."""
    if not (SHARED / "data").is_dir():
        pytest.skip(f"shared material not found at {SHARED} (set DGT_BRIDGE_SHARED)")
    return SHARED
