"""The shipped file against the typed sections: every key it documents is a typed
field, and a key no section has is refused, in every section, with its line."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from daemon.config import (
    ConfigError,
    Settings,
    field_type,
    load_text,
    section_types,
    settable_fields,
    type_hints,
)
from daemon.files import resources

SHIPPED = resources.default_config_file()


def _dataclass_in(tp: Any) -> type | None:
    """The settings dataclass a type names (``X``, ``X | None``, ``list[X]``), or None."""
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return tp
    found = (_dataclass_in(option) for option in typing.get_args(tp))
    return next((cls for cls in found if cls is not None), None)


def _documented(cls: type, value: Any, path: str) -> Iterator[tuple[str, type, str]]:
    """(dotted key, the class holding it, field name) for every key the file sets."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        for name, child in (item or {}).items():
            yield f"{path}.{name}", cls, name
            fields = settable_fields(cls)
            inner = _dataclass_in(field_type(cls, name)) if name in fields else None
            if inner is not None and isinstance(child, dict | list):
                yield from _documented(inner, child, f"{path}.{name}")


def test_every_key_of_the_shipped_file_is_a_typed_field() -> None:
    data = yaml.safe_load(SHIPPED.read_text())
    sections = section_types()
    untyped, unknown = [], []
    for section, value in data.items():
        cls = _dataclass_in(sections[section])
        assert cls is not None, section
        for path, holder, name in _documented(cls, value, section):
            if name not in settable_fields(holder):
                unknown.append(path)
            elif field_type(holder, name) is Any:
                untyped.append(path)
    assert unknown == [] and untyped == []


def test_the_sections_are_typed_as_the_classes_that_bind_them() -> None:
    hints = type_hints(Settings)
    for name, cls in section_types().items():
        assert hints[name] == cls, name
        if not typing.get_origin(cls):
            assert isinstance(getattr(Settings(), name), cls)


def _sections(cls: type, path: str) -> Iterator[tuple[str, type]]:
    """Every section of keys a file can write, nested ones too (``broadcast.mqtt``)."""
    yield path, cls
    for name in settable_fields(cls):
        inner = _dataclass_in(field_type(cls, name))
        if inner is not None and inner is not cls:
            yield from _sections(
                inner, f"{path}.{name}[]" if _is_list(cls, name) else f"{path}.{name}"
            )


def _is_list(cls: type, name: str) -> bool:
    tp = field_type(cls, name)
    options = [tp, *typing.get_args(tp)]
    return any(typing.get_origin(option) in (list, tuple) for option in options)


def _all_sections() -> list[tuple[str, type]]:
    found = []
    for name, tp in section_types().items():
        cls = _dataclass_in(tp)
        assert cls is not None
        found += _sections(cls, f"{name}[]" if typing.get_origin(tp) is list else name)
    return found


#: What a list item needs besides the stray key to be a valid entry.
ITEMS = {"boards[]": {"id": "1", "port": "/dev/ttyACM0"}, "broadcast.boards[]": {"id": "1"}}


def _file_with_stray_key(path: str) -> str:
    """A file whose section at ``path`` has one key no section has."""
    root: dict[str, Any] = {}
    node = root
    parts = path.split(".")
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if part.endswith("[]"):
            item = dict(ITEMS.get(".".join(parts[: depth + 1]), {}))
            node[part[:-2]] = [item]
            node = item
        else:
            node = node.setdefault(part, {})
        if last:
            node["no_such_key"] = 1
    return yaml.safe_dump(root, sort_keys=False)


@pytest.mark.parametrize("path", [p for p, _ in _all_sections()])
def test_a_key_no_section_has_is_refused_with_its_line(path: str) -> None:
    text = _file_with_stray_key(path)
    with pytest.raises(ConfigError) as caught:
        load_text(text, "hall.yaml", environ={})
    error = caught.value
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "no_such_key" in t)
    assert error.line == line and error.key.endswith("no_such_key"), str(error)
    assert "unknown key; expected one of:" in error.message
