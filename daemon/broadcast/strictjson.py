"""Strict JSON at the network's edge: in (request bodies) and out (every reply).

Python's ``json`` reads and writes ``NaN`` and ``Infinity``, which are not JSON:
a browser's ``JSON.parse`` throws on them, and one such number in the page's
state left every viewer with a blank page. So what comes in is parsed with the
non-finite constants refused and its nesting bounded before parsing (a deeply
nested body would otherwise exhaust the parser's recursion), and what goes out
is written with ``allow_nan=False``: should the core ever produce a non-finite
number, it is sent as ``null`` and the fact logged, never sent as ``NaN``.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

from daemon.broadcast.logthrottle import throttled

log = logging.getLogger(__name__)

MAX_DEPTH = 8
"""Deepest nesting of arrays and objects accepted in a request body; the
controls' bodies are flat objects, so this is generous."""


class BodyError(ValueError):
    """A body that is not strict JSON; the message says why, for a 400."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class NonFinite:
    """What ``NaN``, ``Infinity`` or ``-Infinity`` parse to: not a number, so a
    schema that wants a number names the field that held it."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def nesting_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """How deep arrays and objects nest in ``text`` (strings skipped), counting
    no further than ``limit + 1``: cheap, and needs no recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest


def loads_body(raw: bytes, max_depth: int = MAX_DEPTH) -> Any:
    """A request body as JSON; ``BodyError`` when it is not UTF-8, not JSON, or
    nested deeper than ``max_depth``. An empty body is an empty object."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BodyError("the body must be UTF-8 JSON") from None
    if not text.strip():
        return {}
    if nesting_depth(text, max_depth) > max_depth:
        raise BodyError(f"the body nests deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_constant=NonFinite, object_pairs_hook=_no_repeats)
    except BodyError:
        raise
    except (ValueError, RecursionError) as exc:
        raise BodyError(f"the body must be JSON (an object of arguments): {exc}") from None


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object, refused when it names a field twice: ``{"to": "white", "to":
    "black"}`` would otherwise be read as the last, whatever the arbiter's eye
    (or a proxy's check) took it for."""
    seen: dict[str, Any] = {}
    for name, value in pairs:
        if name in seen:
            raise BodyError(f"the field {name[:40]!r} is given twice", name[:40])
        seen[name] = value
    return seen


def dumps(value: Any, **kwargs: Any) -> str:
    """JSON that every browser parses: never ``NaN`` or ``Infinity``. A
    non-finite number (a bug upstream) is sent as ``null`` and logged."""
    kwargs.setdefault("separators", (",", ":"))
    try:
        return json.dumps(value, allow_nan=False, **kwargs)
    except ValueError:
        where = list(_non_finite_paths(value, "$"))
        throttled(log, "non-finite", logging.ERROR,
                  "a non-finite number was about to be sent (at %s); sent as null",
                  ", ".join(where[:5]) or "?")  # fmt: skip
        return json.dumps(_finite(value), allow_nan=False, **kwargs)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _non_finite_paths(value: Any, path: str) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _non_finite_paths(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _non_finite_paths(item, f"{path}[{index}]")
