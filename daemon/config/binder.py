"""Binding a YAML node tree to settings dataclasses: a field of a dataclass is a key
of the file, its type says what the key takes, and every mistake is a ConfigError
naming the file, the line and the dotted key, with what was expected.

Fields whose type cannot come from a file (callables such as the rules core's
``describe_move``), private and ``init=False`` fields, and those the daemon derives
from another section (``DERIVED_FIELDS``) are not keys. A field marked
``BOUND_LATER`` in its metadata is read as it stands and bound by the loader (a
board's ``clock:`` over the section's own keys).
"""

from __future__ import annotations

import dataclasses
import enum
import math
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from daemon.config import nodes
from daemon.config.checks import check_value
from daemon.config.errors import ConfigError
from daemon.config.nodes import Light, Node, is_mapping, is_scalar, is_sequence
from daemon.config.sections import BOUND_LATER, part_classes


class Binder:
    """Turns a composed YAML node into an instance of a type, or a ConfigError."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._constructor: Any = None

    @staticmethod
    def from_environment(node: Node | None) -> bool:
        return (
            node is not None
            and isinstance(node.start_mark.name, str)
            and node.start_mark.name.startswith("environment ")
        )

    def error(self, node: Node | None, key: str, message: str) -> ConfigError:
        if self.from_environment(node):
            assert node is not None
            return ConfigError(node.start_mark.name, None, key, message)
        line = node.start_mark.line + 1 if node is not None else None
        return ConfigError(self.source, line, key, message)

    def scalar(self, node: Node) -> Any:
        """The node's Python value, as PyYAML constructs it: a scalar's, or (for a
        field bound later, ``Any``) a mapping's or sequence's whole, also when the
        node was read back from the cache."""
        if isinstance(node, Light):
            return node.constructed if is_scalar(node) else nodes.light_value(node)
        if self._constructor is None:
            self._constructor = nodes.yaml_module().SafeLoader("")
        return self._constructor.construct_object(node, deep=True)

    def bind(self, tp: Any, node: Node, key: str) -> Any:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if tp is Any:
            return self.scalar(node)
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return self.bind_dataclass(tp, node, key)
        if origin in (typing.Union, types.UnionType):
            options = [a for a in args if a is not type(None)]
            if type(None) in args and self._is_null(node):
                return None
            errors = []
            for option in options:
                try:
                    return self.bind(option, node, key)
                except ConfigError as exc:
                    errors.append(exc)
            if len(options) == 1:
                raise errors[0]
            raise self.error(node, key, f"expected {describe_type(tp)}, got {self._show(node)}")
        if origin is Literal:
            value = self.scalar(node) if is_scalar(node) else None
            if any(value == a and type(value) is type(a) for a in args):
                return value
            raise self.error(node, key, f"expected {describe_type(tp)}, got {self._show(node)}")
        if origin in (list, tuple, set, frozenset) or tp in (list, tuple):
            if not is_sequence(node):
                raise self.error(node, key, f"expected {describe_type(tp)}, got {self._show(node)}")
            item_type = args[0] if args else Any
            items = [self.bind(item_type, item, f"{key}[{i}]") for i, item in enumerate(node.value)]
            container = origin or tp
            return container(items)
        if origin in (dict, Mapping) or tp is dict or origin is typing.Mapping:
            if not is_mapping(node):
                raise self.error(node, key, f"expected {describe_type(tp)}, got {self._show(node)}")
            key_type, value_type = args if args else (Any, Any)
            result = {}
            for key_node, value_node in node.value:
                k = self.bind(key_type, key_node, key)
                result[k] = self.bind(value_type, value_node, f"{key}.{k}")
            return result
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            value = self.scalar(node) if is_scalar(node) else None
            for member in tp:
                if value in (member.value, member.name):
                    return member
            raise self.error(node, key, f"expected {describe_type(tp)}, got {self._show(node)}")
        if not is_scalar(node):
            raise self.error(node, key, f"expected {describe_type(tp)}, got {self._show(node)}")
        value = self.scalar(node)
        if tp is bool:
            if isinstance(value, bool):
                return value
        elif tp is int:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        elif tp is float:
            if isinstance(value, int | float) and not isinstance(value, bool):
                if not math.isfinite(value):
                    raise self.error(node, key, f"expected a finite number, got {node.value!r}")
                return float(value)
        elif tp is str:
            if isinstance(value, str):
                return value
            if self.from_environment(node) and node.value:
                return node.value  # a variable is text: DEVICE=null is ALSA's null device
            if isinstance(value, int | float) and not isinstance(value, bool):
                return node.value  # a round number or a port given as digits is fine as text
        elif tp is Path:
            if isinstance(value, str):
                return Path(value)
        else:
            raise self.error(node, key, f"cannot be set from a file (type {tp!r})")
        raise self.error(node, key, f"expected {describe_type(tp)}, got {self._show(node)}")

    def bind_dataclass(self, cls: type, node: Node, key: str) -> Any:
        if self._is_null(node):
            try:
                return cls()
            except TypeError:  # a section with keys that must be given
                raise self.error(
                    node, key, "expected a section of keys, got nothing (null)"
                ) from None
        if not is_mapping(node):
            raise self.error(node, key, f"expected a section of keys, got {self._show(node)}")
        fields = settable_fields(cls)
        hints = type_hints(cls)
        values: dict[str, Any] = {}
        seen: dict[str, Node] = {}
        for key_node, value_node in node.value:
            name = self.scalar(key_node)
            path = f"{key}.{name}" if key else str(name)
            if not isinstance(name, str) or name not in fields:
                known = ", ".join(fields) or "(none)"
                raise self.error(key_node, path, f"unknown key; expected one of: {known}")
            if name in seen:
                raise self.error(
                    key_node, path, f"given twice (first on line {seen[name].start_mark.line + 1})"
                )
            seen[name] = key_node
            tp = Any if fields[name].metadata.get(BOUND_LATER) else hints[name]
            values[name] = self.bind(tp, value_node, path)
            problem = check_value(path, values[name], value_node)
            if problem is not None:
                raise self.error(value_node, path, problem)
        try:
            return cls(**values)
        except (ValueError, TypeError) as exc:
            culprit = _field_named_in(str(exc), seen)
            if culprit is not None:
                return self._raise_at(seen[culprit], f"{key}.{culprit}" if key else culprit, exc)
            raise self.error(node, key, _without_key(str(exc), key)) from exc

    def _raise_at(self, node: Node, key: str, exc: Exception) -> Any:
        raise self.error(node, key, _without_key(str(exc), key)) from exc

    @staticmethod
    def _is_null(node: Node) -> bool:
        return is_scalar(node) and node.tag == nodes.NULL

    def _show(self, node: Node) -> str:
        if is_mapping(node):
            return "a section of keys"
        if is_sequence(node):
            return "a list"
        value = self.scalar(node)
        kind = {bool: "true/false", int: "a whole number", float: "a number"}.get(
            type(value), "text"
        )
        if value is None:
            return "nothing (null)"
        return f"{kind} {node.value!r}"


def _without_key(message: str, key: str) -> str:
    """A part's own message without the key it starts with: the error names the key
    already ("clock.time_control: time_control: ..." said it twice)."""
    name = key.rsplit(".", 1)[-1]
    for prefix in sorted({key, name, key.split("[", 1)[0]}, key=len, reverse=True):
        if prefix and message.startswith(prefix):
            rest = message[len(prefix) :]
            if rest[:1] in (":", " ", ","):
                return rest.lstrip(":, ") or message
    return message


def _field_named_in(message: str, seen: Mapping[str, Node]) -> str | None:
    """The key a settings class's own validation error is about, to point at its line."""
    for name in sorted(seen, key=len, reverse=True):
        if name in message:
            return name
    return None


#: Fields of a part's settings that the daemon derives from another section, so that
#: one thing is said in one place: the rules core's clock use and button mapping come
#: from ``clock:`` (``device: none`` means no clock; ``button_actions``; the time control).
DERIVED_FIELDS = {
    ("RulesSettings", "use_clock"),
    ("RulesSettings", "button_actions"),
    ("RulesSettings", "time_control"),
}


_HINTS: dict[type, dict[str, Any]] = {}


def type_hints(cls: type) -> dict[str, Any]:
    """A settings class's field types, evaluated once (each is a string to compile
    under ``from __future__ import annotations``; a load asks for them per section
    and per board). The parts' settings classes are named for the sections that
    annotate with them (imported only for type checking there)."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls, localns=part_classes())
    return hints


def field_type(cls: type, name: str) -> Any:
    """The type a key is bound as: its field's, or any value for a field the loader
    binds itself (``BOUND_LATER``)."""
    bound_later = settable_fields(cls)[name].metadata.get(BOUND_LATER)
    return Any if bound_later else type_hints(cls)[name]


def settable_fields(cls: type) -> dict[str, dataclasses.Field]:
    """The fields of a settings dataclass that a file can set (not callables, not
    private, not init=False, not derived from another section)."""
    hints = type_hints(cls)
    result = {}
    for f in dataclasses.fields(cls):
        if not f.init or f.name.startswith("_") or (cls.__name__, f.name) in DERIVED_FIELDS:
            continue
        if _mentions_callable(hints.get(f.name)):
            continue
        result[f.name] = f
    return result


def _mentions_callable(tp: Any) -> bool:
    if tp is None:
        return False
    origin = typing.get_origin(tp)
    if origin is Callable or tp is Callable or getattr(origin, "__name__", "") == "Callable":
        return True
    return any(_mentions_callable(a) for a in typing.get_args(tp) if not isinstance(a, str))


def describe_type(tp: Any) -> str:
    """What a user must write, in words."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Literal:
        return "one of " + ", ".join(
            repr(a) if not isinstance(a, bool) else str(a).lower() for a in args
        )
    if origin in (typing.Union, types.UnionType):
        parts = [describe_type(a) for a in args if a is not type(None)]
        text = " or ".join(parts)
        return text + (" or null" if type(None) in args else "")
    if origin in (list, tuple, set, frozenset):
        return f"a list of {describe_type(args[0])}" if args else "a list"
    if origin in (dict, Mapping, typing.Mapping) or tp is dict:
        return (
            f"a section mapping {describe_type(args[0])} to {describe_type(args[1])}"
            if (args)
            else "a section of keys"
        )
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "one of " + ", ".join(repr(m.value) for m in tp)
    if dataclasses.is_dataclass(tp):
        return "a section of keys"
    return {
        bool: "true or false",
        int: "a whole number",
        float: "a number",
        str: "text",
        Path: "a path",
        Any: "any value",
    }.get(tp, getattr(tp, "__name__", repr(tp)))
