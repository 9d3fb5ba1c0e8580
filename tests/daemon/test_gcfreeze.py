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
