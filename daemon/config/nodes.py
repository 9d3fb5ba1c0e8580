"""The YAML node tree a configuration is bound from: PyYAML's own nodes when a file is
parsed, light ones when its tree is read back from the cache (``daemon.files.yamlcache``).

Why nodes and not ``yaml.safe_load``: nodes carry the line of each key and value, so
every message names it. Why a cache: a file that loaded before is not parsed again, so
a command starts without importing PyYAML; the light nodes have the same tags, text
values and lines, so the binding and its messages are the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from daemon.config.errors import ConfigError

#: A node of a configuration's tree: PyYAML's, when the file was parsed, or a
#: ``Light`` one, when it was read back from the cache; the binder reads both alike
#: (their ``id``, ``tag``, ``value`` and ``start_mark.line``).
Node = Any

MAP = "tag:yaml.org,2002:map"
NULL = "tag:yaml.org,2002:null"


def yaml_module() -> Any:
    """PyYAML, imported when a file must be parsed (``daemon.files.yamlcache`` says why)."""
    import yaml

    return yaml


def compose(text: str, source: str) -> Node | None:
    """The YAML node tree, or a ConfigError naming the line of a syntax error."""
    yaml = yaml_module()
    try:
        # libyaml's parser where PyYAML has it (several times faster); the same
        # nodes, marks and errors as the Python one.
        return yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "not valid YAML"
        raise ConfigError(source, line, "", f"not valid YAML: {problem}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(source, None, "", f"not valid YAML: {exc}") from exc


class LightMark:
    """Where a cached node stood: the line is what the messages use."""

    __slots__ = ("line", "name")

    def __init__(self, name: str, line: int) -> None:
        self.name = name
        self.line = line


class Light:
    """A node of a cached tree, with what the binder reads of PyYAML's nodes: ``id``
    (scalar, sequence, mapping), the resolved tag, the value (a scalar's text, the
    items, the key/value pairs), the start mark, and a scalar's constructed value."""

    __slots__ = ("constructed", "id", "start_mark", "tag", "value")

    def __init__(
        self, id: str, tag: str, value: Any, start_mark: Any, constructed: Any = None
    ) -> None:
        self.id = id
        self.tag = tag
        self.value = value
        self.start_mark = start_mark
        self.constructed = constructed


def is_scalar(node: Any) -> bool:
    return getattr(node, "id", None) == "scalar"


def is_sequence(node: Any) -> bool:
    return getattr(node, "id", None) == "sequence"


def is_mapping(node: Any) -> bool:
    return getattr(node, "id", None) == "mapping"


def node_at(root: Node, path: tuple[str, ...]) -> Node:
    """The value node at a dotted path, or the deepest section found on the way (None:
    not even the first part)."""
    node: Node = root
    for part in path:
        if not is_mapping(node):
            return node
        found = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
        if found is None:
            return None if node is root else node
        node = found
    return node


# --- the cache of a tree that loaded -------------------------------------------------------

#: How a scalar node's value is constructed (the binder's, which holds the loader).
Scalar = Callable[[Node], Any]


class _Uncacheable(Exception):
    """A tree JSON cannot hold (a date, an alias that contains itself)."""


def _plain(node: Any, scalar: Scalar, depth: int = 0) -> list[Any]:
    """A node tree as JSON lists: ["s", tag, line, text, value], ["q", tag, line,
    items], ["m", tag, line, pairs]."""
    if depth > 100:
        raise _Uncacheable
    line = node.start_mark.line
    if is_scalar(node):
        value = scalar(node)
        if type(value) not in (str, int, float, bool, type(None)):
            raise _Uncacheable
        return ["s", node.tag, line, node.value, value]
    if is_sequence(node):
        return ["q", node.tag, line, [_plain(item, scalar, depth + 1) for item in node.value]]
    pairs = [[_plain(k, scalar, depth + 1), _plain(v, scalar, depth + 1)] for k, v in node.value]
    return ["m", node.tag, line, pairs]


def _light(data: list[Any]) -> Light:
    kind, tag, line = data[0], data[1], data[2]
    mark = LightMark("<cache>", int(line))
    if kind == "s":
        return Light("scalar", tag, data[3], mark, data[4])
    if kind == "q":
        return Light("sequence", tag, [_light(item) for item in data[3]], mark)
    if kind == "m":
        return Light("mapping", tag, [(_light(k), _light(v)) for k, v in data[3]], mark)
    raise ValueError(f"not a node: {kind!r}")


def light_value(node: Light) -> Any:
    """A cached node's Python value: a scalar's constructed value, a sequence's as a
    list, a mapping's as a dict (a board's own ``speech:`` keys, which the loader
    binds later, are such a mapping: without it they read as None, absent)."""
    if is_mapping(node):
        return {light_value(k): light_value(v) for k, v in node.value}
    if is_sequence(node):
        return [light_value(item) for item in node.value]
    return node.constructed


def cached_tree(text: str) -> Light | None:
    """The tree of a file with this text that loaded before, or None."""
    from daemon.files import yamlcache

    data = yamlcache.read("config", text)
    if data is None:
        return None
    try:
        return _light(data)
    except (ValueError, TypeError, IndexError, KeyError, RecursionError):
        return None  # a cache file of another shape: parse the file


def keep_tree(text: str, root: Any, scalar: Scalar) -> None:
    """Keep a tree that loaded, for the next start (one JSON cannot hold: not kept)."""
    from daemon.files import yamlcache

    try:
        plain = _plain(root, scalar)
    except (_Uncacheable, RecursionError):
        return
    yamlcache.write("config", text, plain)
