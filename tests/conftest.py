"""Shared fixtures: where the shared material lives; Hypothesis without deadlines."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("DGT_BRIDGE_SHARED", ROOT.parent / "shared"))

# No property test here is about speed (timing targets live in benchmarks/), and
# Hypothesis's default 200 ms deadline per example fails tests on a loaded machine
# (tests/clock/test_dgt_clock.py's glitch property did, once, under eight engineers'
# test runs on two cores). A test that means a deadline still sets its own.
settings.register_profile("no-deadlines", deadline=None)
settings.load_profile("no-deadlines")

# The parsed-YAML cache (daemon.files.yamlcache) of this run, and of the commands it starts,
# in a directory of its own: never the user's ~/.cache, never another run's.
_CACHE = tempfile.mkdtemp(prefix="dgt-bridge-test-cache-")
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)
os.environ["XDG_CACHE_HOME"] = _CACHE
os.environ.pop("CACHE_DIRECTORY", None)


@pytest.fixture(scope="session")
def shared() -> Path:
    """The shared material (real games, the real DGT capture); skip where absent."""
    if not (SHARED / "data").is_dir():
        missing = f"shared material not found at {SHARED} (set DGT_BRIDGE_SHARED)"
        if os.environ.get("CI"):  # CI has it beside the clone: its absence is a fault
            pytest.fail(missing)
        pytest.skip(missing)
    return SHARED


# Every board's page state the hub keeps for new viewers (``Hub.board_text``) is made
# afresh too and compared, in this process and in the daemons the tests start: a
# stale one fails the test that made it.
os.environ["DGT_BRIDGE_CHECK_KEPT_TEXTS"] = "1"


@pytest.fixture(autouse=True)
def _no_stale_page_state() -> Iterator[None]:
    from daemon.broadcast import hub

    hub.CHECK_KEPT_TEXTS = True
    before = len(hub.STALE_TEXTS)
    yield
    stale = hub.STALE_TEXTS[before:]
    assert not stale, f"the hub kept a stale page state for: {stale}"
