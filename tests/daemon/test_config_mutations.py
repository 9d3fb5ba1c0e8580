"""``check-config`` refuses every value ``run`` would die on.

Every key of every section (found from the settings dataclasses the loader binds,
so a key added anywhere is covered) is given values of the wrong type and out of
range. Each refusal must name the file, the line and the key, once. Each value the
check accepts is then given to the daemon as ``run`` builds it: it must start, read
a board position and keep running. The accepted values are tried together, many
keys at once (the keys that switch others off alone), so that the whole sweep
costs a few dozen daemon starts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import io
import logging
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from daemon.app import Daemon
from daemon.config import ConfigError, field_type, load_text, section_types, settable_fields
from daemon.speech import vocabulary
from drivers.sensors import BoardDump

#: Values of the wrong type, then values out of any sensible range.
MUTATIONS = (
    "null",
    "[1, 2]",
    "{a: 1}",
    "some text",
    "true",
    "-5",
    "0",
    "99999",
    "1.0e12",
    "-0.5",
    ".nan",
    ".inf",
    '"../x"',
    '""',
    "42",
)
START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"


def keys(cls: type, prefix: str) -> Iterator[str]:
    """Every key a file can set under a settings dataclass, list items as ``[]``."""
    for name in settable_fields(cls):
        path = f"{prefix}.{name}"
        yield path
        tp = field_type(cls, name)
        inner = [a for a in typing.get_args(tp) if a is not type(None)] or [tp]
        for option in inner:
            if dataclasses.is_dataclass(option):
                yield from keys(option, path)
            elif typing.get_origin(option) is list:
                item = typing.get_args(option)[0]
                if dataclasses.is_dataclass(item):
                    yield from keys(item, f"{path}[]")


def all_keys() -> list[str]:
    found = []
    for name, cls in section_types().items():
        if typing.get_origin(cls) is list:  # a section that is a list (boards:)
            found += keys(typing.get_args(cls)[0], f"{name}[]")
        elif cls is not None:
            found += keys(cls, name)
    return found


def document(assignments: dict[str, Any]) -> str:
    """A YAML file setting each dotted key (``a.b[].c``: a list's one item)."""
    root: dict[str, Any] = {}
    for path, value in assignments.items():
        node: Any = root
        parts = path.split(".")
        for part in parts[:-1]:
            if part.endswith("[]"):
                items = node.setdefault(part[:-2], [{}])
                if not isinstance(items, list):
                    items = node[part[:-2]] = [{}]
                node = items[0]
            else:
                child = node.setdefault(part, {})
                if not isinstance(child, dict):
                    child = node[part] = {}
                node = child
        node[parts[-1]] = value
    return yaml.safe_dump(root, sort_keys=False)


def accepted(assignments: dict[str, Any]) -> bool:
    try:
        load_text(document(assignments), "mutant.yaml", environ={})
    except ConfigError:
        return False
    return True


@pytest.fixture(scope="module")
def checked() -> Iterator[tuple[dict[str, list[str]], list[str]]]:
    """Each key with each mutation alone (the vocabulary read once per name: it is
    the slow part, and the same file gives the same answer)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vocabulary, "load_vocabulary", functools.cache(vocabulary.load_vocabulary))
        yield single_checks()


def single_checks() -> tuple[dict[str, list[str]], list[str]]:
    """Each key with each mutation alone: which pass, and what is wrong with any refusal."""
    passed: dict[str, list[str]] = {}
    problems = []
    for key in all_keys():
        for text in MUTATIONS:
            value = yaml.safe_load(text)
            try:
                load_text(document({key: value}), "mutant.yaml", environ={})
            except ConfigError as exc:
                name = exc.key.rsplit(".", 1)[-1]
                where = str(exc).split(": ", 1)[0]
                if not re.fullmatch(r"mutant\.yaml, line \d+", where) or not exc.key:
                    problems.append(f"{key}={text}: no line or key: {exc}")
                elif exc.message.startswith((exc.key, f"{name}:", f"{name} ")):
                    problems.append(f"{key}={text}: the key is repeated: {exc}")
                continue
            except Exception as exc:  # a traceback where a message belongs
                problems.append(f"{key}={text}: {exc!r}")
                continue
            passed.setdefault(text, []).append(key)
    return passed, problems


#: Keys that decide whether other keys are used at all (a listening address that
#: fails hides the port): each is tried alone, never together with the rest.
GATES = ("broadcast.enabled", "broadcast.address", "broadcast.mqtt.enabled", "clock.device")


def combinations(text: str, keys_passed: list[str]) -> Iterator[dict[str, Any]]:
    """As few files as possible, each setting many keys to ``text``: a set the check
    refuses as a whole (two keys that only work together) is split in halves; the
    gates go alone."""
    value = yaml.safe_load(text)
    for gate in GATES:
        if gate in keys_passed:
            yield {gate: value}
    pending = [[key for key in keys_passed if key not in GATES]]
    while pending:
        group = pending.pop()
        assignments = {key: value for key in group}
        if accepted(assignments):
            yield assignments
        elif len(group) > 1:
            pending += [group[: len(group) // 2], group[len(group) // 2 :]]


async def runs(settings: Any) -> str | None:
    """Start the daemon as ``run`` does, show it a board, let it work: None if it
    lives, else how it died."""
    nowhere = "/nonexistent/dgt-board"  # never probe the test machine's serial ports
    if settings.boards:  # one daemon for the boards: list, as for one board
        for entry in settings.boards:
            if not entry.port and not entry.bus_port:
                entry.port = nowhere
        port = None
    else:
        port = nowhere if settings.board.port == "auto" else None
    daemon = Daemon(settings, port=port, speech_text=io.StringIO(), resume=False)
    try:
        await daemon.start()
        daemon.submit(BoardDump(daemon.now(), START))
        await asyncio.sleep(0.3)
        if daemon.exit_code or daemon._stopped.is_set():
            return f"stopped with exit code {daemon.exit_code}"
    except Exception as exc:
        return repr(exc)
    finally:
        daemon.stop()
        await asyncio.wait_for(daemon.close(), 20)
    return None


def test_every_refusal_names_the_file_the_line_and_the_key_once(checked) -> None:
    _, problems = checked
    assert not problems, "\n".join(problems)


@pytest.mark.slow
async def test_run_lives_on_every_value_check_config_accepts(
    checked, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)  # relative storage directories land here
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    caplog.set_level(logging.CRITICAL)
    passed, _ = checked
    deaths = []
    started = 0
    for text, keys_passed in passed.items():
        for assignments in combinations(text, keys_passed):
            assignments = {k: v for k, v in assignments.items() if not _unusable(k, v)}
            settings = load_text(document(assignments), "mutant.yaml", environ={})
            started += 1
            death = await runs(settings)
            if death is not None:
                deaths.append(f"{text} in {sorted(assignments)}: {death}")
    assert not deaths, "\n".join(deaths)
    assert started >= len(passed)


def _unusable(key: str, value: Any) -> bool:
    """Values that are valid but need what a test machine cannot give: a privileged
    port (a daemon not run as root cannot bind it)."""
    return key == "broadcast.port" and isinstance(value, int) and 0 < value < 1024


def test_board_ids_are_checked_by_the_broadcast_hubs_own_rule() -> None:
    from daemon import config
    from daemon.broadcast import hub

    assert config.BOARD_ID.pattern == hub.BOARD_ID.pattern
