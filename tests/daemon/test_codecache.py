"""The dataclasses' code kept compiled (``daemon.files.codecache``): a later start
compiles nothing, and the classes it makes are the ones a compiling start makes."""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from daemon.files import codecache
from tests.daemon.test_cli_imports import child_json, hall_config, until_ready


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("CACHE_DIRECTORY", str(tmp_path / "cache"))
    yield tmp_path / "cache" / "code"


def make_classes() -> dict[str, type]:
    """Dataclasses of every shape ``dataclass`` writes an ``__init__`` for."""

    @dataclasses.dataclass(frozen=True)
    class Reading:
        t: float
        side: str = "white"
        seen: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass
    class Derived:
        base: int
        scale: dataclasses.InitVar[int] = 2
        doubled: int = dataclasses.field(init=False, default=0)

        def __post_init__(self, scale: int) -> None:
            self.doubled = self.base * scale

    @dataclasses.dataclass(kw_only=True, slots=True)
    class Named:
        board: str
        number: int = 1

    return {"Reading": Reading, "Derived": Derived, "Named": Named}


def behaviour(classes: dict[str, type]) -> list[Any]:
    """What a user of the classes sees: signatures, annotations, values, errors."""
    reading, derived, named = classes["Reading"], classes["Derived"], classes["Named"]
    first, second = reading(1.0), reading(2.0, "black")
    first.seen.append(3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.t = 5.0
    return [
        [str(inspect.signature(cls.__init__)) for cls in classes.values()],
        [cls.__init__.__annotations__ for cls in classes.values()],
        [repr(first), repr(second), second.seen is not first.seen, first == reading(1.0, seen=[3])],
        [repr(derived(4)), repr(derived(4, 3)), repr(named(board="b1"))],
    ]


def test_classes_made_from_kept_code_behave_as_compiled_ones(cache: Path) -> None:
    compiled = behaviour(make_classes())
    with codecache.kept() as first:
        made_first = behaviour(make_classes())
    with codecache.kept() as again:
        made_again = behaviour(make_classes())
    assert first.compiled >= 3 and first.reused == 0  # nothing kept yet
    assert again.compiled == 0 and again.reused == first.compiled
    assert made_first == made_again == compiled
    # the hook is gone after the block: dataclasses compile as always
    assert not hasattr(dataclasses, "exec")


def test_a_damaged_or_unwritable_cache_costs_only_the_saving(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with codecache.kept():
        make_classes()
    (path,) = cache.iterdir()
    kept = path.read_bytes()
    middle = len(kept) // 2
    one_bit_changed = kept[:middle] + bytes([kept[middle] ^ 0x10]) + kept[middle + 1 :]
    for damage in (b"\x00not marshal data" * 3, kept[:-40], one_bit_changed):
        path.write_bytes(damage)
        with codecache.kept() as damaged:
            assert behaviour(make_classes()) == behaviour(make_classes())
        assert damaged.compiled >= 3  # read as empty, compiled again and kept anew
        with codecache.kept() as mended:
            make_classes()
        assert mended.compiled == 0
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("CACHE_DIRECTORY", str(blocker))  # no directory can be made below it
    with codecache.kept() as unwritable:
        assert behaviour(make_classes())
    assert unwritable.compiled >= 3


def test_a_cache_past_its_limit_keeps_only_what_the_last_build_used(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(codecache, "LIMIT", 2)
    with codecache.kept() as first:
        make_classes()
    path = codecache.cache_path()
    assert path is not None
    assert set(codecache.read(path)) == first.used  # all kept at first
    with codecache.kept() as used:
        dataclasses.dataclass(type("Other", (), {"__annotations__": {"x": "int"}}))
    assert used.compiled == 3  # its __init__, __repr__ and __eq__
    assert set(codecache.read(path)) == used.used  # past the limit: the last build's alone
    assert not used.used & first.used


#: The daemon started as the unit runs it, stopped at READY: how many of the
#: dataclasses' texts were compiled before it (``exec`` of the text, or ``compile``).
COMPILED_BEFORE_READY = until_ready(
    """
import builtins
counts = {"compiled": 0}
def counting(original):
    def counted(source, *args, **kwargs):
        if isinstance(source, str) and "__create_fn__" in source:
            counts["compiled"] += 1
        return original(source, *args, **kwargs)
    return counted
builtins.compile = counting(builtins.compile)
builtins.exec = counting(builtins.exec)
""",
    "counts",
)


def test_the_daemons_second_start_compiles_no_dataclass(tmp_path: Path) -> None:
    """A hall (a USB board and a bus chain) started twice with one cache directory, as
    systemd gives the unit: the first start compiles its dataclasses' ``__init__`` and
    keeps them, the second makes every class before READY from the kept code."""
    env = {**os.environ, "PYTHONOPTIMIZE": "2", "CACHE_DIRECTORY": str(tmp_path / "cache"),
           "DGT_BRIDGE_BROADCAST__ENABLED": "false"}  # fmt: skip
    argv = ["run", "--config", str(hall_config(tmp_path)),
            "--storage", str(tmp_path / "games"), "--no-speech"]  # fmt: skip
    first = child_json(COMPILED_BEFORE_READY, *argv, env=env)
    second = child_json(COMPILED_BEFORE_READY, *argv, env=env)
    assert first["compiled"] > 50  # the daemon's records, settings and events
    assert second["compiled"] == 0
    assert [p.name.split("-")[0] for p in (tmp_path / "cache" / "code").iterdir()] == [
        "dataclasses"
    ]
