"""A command's build runs without the garbage collector, and no way out of it (an
error, a return, the build declared done early) leaves the collector off."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from daemon.service import gcfreeze


@pytest.fixture
def freezes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts gc.freeze calls instead of freezing the test process's objects."""
    calls: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(1))
    yield calls
    gc.enable()


def test_no_collection_while_building_and_collection_after(freezes: list[int]) -> None:
    with gcfreeze.building():
        assert not gc.isenabled()
    assert gc.isenabled() and freezes == [1]


def test_an_error_in_the_build_leaves_collection_on(freezes: list[int]) -> None:
    with pytest.raises(RuntimeError), gcfreeze.building():
        raise RuntimeError("the board's port is gone")
    assert gc.isenabled()


def test_done_early_freezes_once(freezes: list[int]) -> None:
    with gcfreeze.building() as start:
        start.done()
        assert gc.isenabled()
    assert freezes == [1]


def test_the_daemon_up_freezes_without_a_full_collection(
    freezes: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the page is up, start-up's objects are frozen with no collection first: a
    full one walked a hall's ~29,000 objects to find 0-5, one loop turn of 6-7 ms on a
    desktop core, while a restarted hall's boards were being read (issue 28). Once
    only in a process."""
    monkeypatch.setattr(gcfreeze, "_frozen_after_start", False)
    full = gc.get_stats()[2]["collections"]
    gcfreeze.freeze_startup()
    gcfreeze.freeze_startup()
    assert gc.get_stats()[2]["collections"] == full
    assert freezes == [1]
