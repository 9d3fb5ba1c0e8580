"""The configuration: one YAML file read into typed, validated settings.

Why compose the node tree instead of ``yaml.safe_load``: a blind player's daemon that
starts with a misspelt key silently ignored is worse than one that refuses to start,
and the message must say where the mistake is. PyYAML's nodes carry the line of each
key and value, so every error names the file, the key's dotted path, the line and what
was expected.

Each section is bound to a settings dataclass; where a part owns its settings (clock,
rules, speech, broadcast) its own dataclass is used, so the file and the code cannot
drift apart: a field added there is a key accepted here. Fields whose type cannot come
from a file (callables such as the rules core's ``describe_move``) are not keys.

Environment variables override single keys: ``DGT_BRIDGE_<SECTION>__<KEY>`` (double
underscore between levels, case-insensitive), the value read as a YAML scalar, e.g.
``DGT_BRIDGE_BROADCAST__PORT=9000`` or ``DGT_BRIDGE_SPEECH__ENGINE=text``. They are
validated like the file, and an error names the variable.

A file that loaded before is not parsed again: its node tree is read back from the
cache (``daemon.yamlcache``, which says why) as light nodes with the same tags, text
values and lines, so the binding and all its messages are the same, and a command
starts without importing PyYAML.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import math
import os
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from drivers.records import Record

#: A node of a configuration's tree: PyYAML's, when the file was parsed, or a
#: ``_Light`` one, when it was read back from the cache; the binder reads both alike
#: (their ``id``, ``tag``, ``value`` and ``start_mark.line``).
Node = Any

ENV_PREFIX = "DGT_BRIDGE_"
#: Variables with the prefix that are not key overrides.
ENV_RESERVED = frozenset({"DGT_BRIDGE_CONFIG", "DGT_BRIDGE_SHARED", "DGT_BRIDGE_SHIPPED_CONFIG"})


class ConfigError(ValueError):
    """A configuration mistake, with where it is and what was expected."""

    def __init__(self, source: str, line: int | None, key: str, message: str) -> None:
        self.source = source
        self.line = line
        self.key = key
        self.message = message
        where = source if line is None else f"{source}, line {line}"
        prefix = f"{where}: {key}: " if key else f"{where}: "
        super().__init__(prefix + message)


# --- the daemon's own sections ---------------------------------------------------------


@dataclass(eq=False, repr=False)
class BoardSettings(Record):
    """The DGT e-board."""

    port: str = "auto"
    """Serial port of the board (``/dev/dgt-board``, ``/dev/ttyACM0``, ``/dev/rfcomm0``),
    or ``auto`` to find a DGT board by its USB vendor id and by probing."""
    orientation: Literal["auto", "normal", "flipped"] = "auto"
    """How the board stands: ``auto`` recognises a board turned round from the start
    position (7.1); ``normal``/``flipped`` are for displays that cannot see a start."""


@dataclass(eq=False, repr=False)
class GameSettings(Record):
    """The PGN header of the games played (the Seven Tag Roster's fixed part)."""

    event: str = "?"
    site: str = "?"
    round: str = "?"
    white: str = "?"
    black: str = "?"


@dataclass(eq=False, repr=False)
class StorageSettings(Record):
    """Where journals and PGN files go."""

    directory: str = ""
    """Directory of the per-game journals and PGN files. Empty: ``$STATE_DIRECTORY``
    (systemd's ``StateDirectory=``, /var/lib/dgt-bridge), else
    ``$XDG_DATA_HOME/dgt-bridge`` (~/.local/share/dgt-bridge)."""
    fsync: bool = True
    """fsync the journal after every move (a power cut loses no move). Only for tests
    or a RAM disk may this be false."""
    pgn_every: float = 0.0
    """Seconds between two rewrites of a game's PGN file during the game (0: after
    every move). The journal beside it always has every move; the PGN is written
    whole at the game's end and at shutdown. A hall of many boards on a small Pi: 10
    (rebuilding each game's PGN at every move was most of the CPU, issue 19)."""

    def resolved_directory(self) -> Path:
        if self.directory:
            return Path(self.directory).expanduser()
        state = os.environ.get("STATE_DIRECTORY")
        if state:
            return Path(state.split(":")[0])
        data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        return Path(data_home) / "dgt-bridge"


_BOARD_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


@dataclass(eq=False, repr=False)
class BoardEntry(Record):
    """One board of a daemon that reads several (the ``boards:`` list).

    A board is on a USB/serial port of its own (``port``) or on a chain of boards in
    DGT bus mode (``bus_port`` and the board's serial number ``bus_serial``, which is
    its bus address). ``clock`` and ``speech`` hold the keys of those sections this
    board has differently (the rest as the sections say); they are bound to the
    parts' own settings when the file is read."""

    id: str = ""
    port: str = ""
    bus_port: str = ""
    bus_serial: str = ""
    label: str = ""
    white: str = "?"
    black: str = "?"
    orientation: Literal["auto", "normal", "flipped"] = "auto"
    speak: bool = False
    """Speak this board's game (a hall's boards are silent unless a player needs it)."""
    clock: Any = None
    speech: Any = None
    journal: str = ""
    """This board's journal directory (empty: ``<storage.directory>/board-<id>``)."""
    same_game_as: str = ""
    """Two boards, one game (Appendix E.1): the id of the board whose game this board
    repeats for a blind player."""
    own_side: Literal["", "white", "black"] = ""
    """Whose board this is in a two-board game: his moves are read here."""
    diverge_after: float = 15.0
    """Seconds the two boards of one game may disagree (a move being repeated) before
    ``boards_diverged`` is reported (E.2.7)."""

    def __post_init__(self) -> None:
        if not _BOARD_ID.match(self.id):
            raise ValueError(f"id {self.id!r}: 1-32 letters, digits, '-' or '_'")
        if bool(self.port) == bool(self.bus_port):
            raise ValueError("give a board either port or bus_port (with bus_serial)")
        if self.bus_port and not self.bus_serial.isdigit():
            raise ValueError("bus_serial: the board's serial number (digits) on bus_port")
        if self.same_game_as and not self.own_side:
            raise ValueError("same_game_as needs own_side: whose moves are read on this board")
        if not self.diverge_after > 0:
            raise ValueError("diverge_after must be positive")


def board_entries(
    settings: Settings, *, port: str | None = None, board_id: str | None = None
) -> list[BoardEntry]:
    """The boards a daemon reads, as one list: ``boards:``, or ``board:`` read as a
    list of one (its id the first of ``broadcast.boards``, else "1"; ``port``:
    ``--port``). The single board speaks; a hall's boards only when asked."""
    if settings.boards:
        if port:
            raise ValueError(
                "--port reads one board; the configuration lists boards: (give each its port there)"
            )
        return list(settings.boards)
    cards = list(getattr(settings.broadcast, "boards", None) or [])
    card = next((c for c in cards if c.id == board_id), None) if board_id else None
    card = card or (cards[0] if cards and not board_id else None)
    return [
        BoardEntry(
            id=board_id or (card.id if card is not None else "1"),
            port=port or settings.board.port or "auto",
            orientation=settings.board.orientation,
            label=card.label if card is not None else "",
            speak=True,
        )
    ]


# --- sections owned by the other parts -------------------------------------------------


#: Section name -> (module, class) of the parts that own their settings.
PART_SECTIONS = {
    "clock": ("drivers.clock.settings", "ClockSettings"),
    "rules": ("daemon.rules.settings", "RulesSettings"),
    "speech": ("daemon.speech.settings", "SpeechSettings"),
    "broadcast": ("daemon.broadcast.settings", "BroadcastSettings"),
}


def part_settings_class(section: str) -> type | None:
    """A part's own settings dataclass, imported lazily so a part that is missing or
    broken names itself instead of breaking every command; None when unavailable."""
    module_name, class_name = PART_SECTIONS[section]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return getattr(module, class_name, None)


def _section_types() -> dict[str, Any]:
    """Section name -> settings dataclass (None: that part's settings are unavailable)."""
    parts = {name: part_settings_class(name) for name in PART_SECTIONS}
    return {
        "board": BoardSettings,
        "clock": parts["clock"],
        "rules": parts["rules"],
        "speech": parts["speech"],
        "broadcast": parts["broadcast"],
        "game": GameSettings,
        "storage": StorageSettings,
        "boards": list[BoardEntry],
    }


@dataclass(eq=False, repr=False)
class Settings(Record):
    """Everything the daemon reads from its configuration file."""

    board: BoardSettings = field(default_factory=BoardSettings)
    clock: Any = None
    rules: Any = None
    speech: Any = None
    broadcast: Any = None
    game: GameSettings = field(default_factory=GameSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    boards: list[BoardEntry] = field(default_factory=list)
    source: str = "<defaults>"

    def __post_init__(self) -> None:
        sections = _section_types()
        for name in PART_SECTIONS:
            cls = sections[name]
            if getattr(self, name) is None and cls is not None:
                setattr(self, name, cls())


# --- binding YAML nodes to dataclasses --------------------------------------------------


class _Binder:
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
        if isinstance(node, _Light):
            return node.constructed
        if self._constructor is None:
            self._constructor = _yaml().SafeLoader("")
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
            value = self.scalar(node) if _is_scalar(node) else None
            if any(value == a and type(value) is type(a) for a in args):
                return value
            raise self.error(node, key, f"expected {describe_type(tp)}, got {self._show(node)}")
        if origin in (list, tuple, set, frozenset) or tp in (list, tuple):
            if not _is_sequence(node):
                raise self.error(node, key, f"expected {describe_type(tp)}, got {self._show(node)}")
            item_type = args[0] if args else Any
            items = [self.bind(item_type, item, f"{key}[{i}]") for i, item in enumerate(node.value)]
            container = origin or tp
            return container(items)
        if origin in (dict, Mapping) or tp is dict or origin is typing.Mapping:
            if not _is_mapping(node):
                raise self.error(node, key, f"expected {describe_type(tp)}, got {self._show(node)}")
            key_type, value_type = args if args else (Any, Any)
            result = {}
            for key_node, value_node in node.value:
                k = self.bind(key_type, key_node, key)
                result[k] = self.bind(value_type, value_node, f"{key}.{k}")
            return result
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            value = self.scalar(node) if _is_scalar(node) else None
            for member in tp:
                if value in (member.value, member.name):
                    return member
            raise self.error(node, key, f"expected {describe_type(tp)}, got {self._show(node)}")
        if not _is_scalar(node):
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
        if not _is_mapping(node):
            raise self.error(node, key, f"expected a section of keys, got {self._show(node)}")
        fields = settable_fields(cls)
        hints = _type_hints(cls)
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
            values[name] = self.bind(hints[name], value_node, path)
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
        return _is_scalar(node) and node.tag == "tag:yaml.org,2002:null"

    def _show(self, node: Node) -> str:
        if _is_mapping(node):
            return "a section of keys"
        if _is_sequence(node):
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


# --- values the types allow but ``run`` would die on ------------------------------------


def _port(lowest: int) -> Callable[[Any, Node], str | None]:
    def check(value: Any, node: Node) -> str | None:
        if not lowest <= value <= 65535:
            return f"a TCP port is {lowest} to 65535, not {value}"
        return None

    return check


def _at_least(lowest: float, what: str = "") -> Callable[[Any, Node], str | None]:
    def check(value: Any, node: Node) -> str | None:
        if value < lowest:
            return f"must be at least {lowest:g}{what}, not {value:g}"
        return None

    return check


def _positive(value: Any, node: Node) -> str | None:
    return None if value > 0 else f"must be more than 0, not {value:g}"


def _host(value: Any, node: Node) -> str | None:
    """An address to listen on or connect to: an IP address or a host name."""
    import ipaddress

    if value in ("", "localhost"):
        return None
    try:
        ipaddress.ip_address(value)
        return None
    except ValueError:
        pass
    labels = value.rstrip(".").split(".")
    if len(value) <= 253 and all(_HOST_LABEL.fullmatch(label) for label in labels):
        return None
    return f"not an IP address or host name: {value!r}"


#: The broadcast hub's rule for board ids (``daemon.broadcast.hub.BOARD_ID``, which
#: a test keeps equal), here so that reading a file does not import the web side.
BOARD_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


def _board_id(value: Any, node: Node) -> str | None:
    """The rule the broadcast applies when it starts (ids appear in URLs and topics)."""
    if BOARD_ID.match(value):
        return None
    return f"{value!r} is not a board id: use 1-32 letters, digits, '-' or '_'"


def _unique_board_ids(value: Any, node: Node) -> str | None:
    ids = [getattr(board, "id", None) for board in value]
    twice = sorted({str(i) for i in ids if ids.count(i) > 1})
    return f"board id {twice[0]!r} appears twice" if twice else None


def _path_text(value: Any, node: Node) -> str | None:
    """A directory is written as text; a bare number is most likely a slip."""
    if _is_scalar(node) and node.tag in (
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
    ):
        return f"expected a path (text), got the number {node.value}; quote it if meant"
    if "\0" in value:
        return "a path cannot contain a NUL character"
    return None


def _readable_file(value: Any, node: Node) -> str | None:
    """A file the daemon reads at start (a TLS certificate or key); empty: none."""
    if not value:
        return None
    try:
        with open(value, "rb"):
            return None
    except OSError as exc:
        return f"cannot read {value}: {exc.strerror or exc}"


_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")

#: Dotted key (list items as ``[]``) -> a check of the bound value: ranges and forms
#: that the types allow but the part using the value would refuse at start-up or
#: later (a port above 65535 kills the web server's bind). Parts' own dataclasses
#: check the rest in ``__post_init__``; both give the same file/line/key message.
VALUE_CHECKS: dict[str, Callable[[Any, Node], str | None]] = {
    "broadcast.port": _port(0),
    "broadcast.address": _host,
    "broadcast.boards": _unique_board_ids,
    "broadcast.boards[].id": _board_id,
    "boards[].id": _board_id,
    "boards[].diverge_after": _positive,
    "broadcast.client_queue": _at_least(1),
    "broadcast.write_timeout": _positive,
    "broadcast.history": _at_least(1),
    "broadcast.keepalive": _positive,
    "broadcast.max_body": _at_least(1, " bytes"),
    "broadcast.max_viewers_per_address": _at_least(1),
    "broadcast.tls_certificate": _readable_file,
    "broadcast.tls_key": _readable_file,
    "broadcast.mqtt.port": _port(1),
    "broadcast.mqtt.host": _host,
    "broadcast.mqtt.keepalive": _at_least(1, " s"),
    "broadcast.mqtt.buffer": _at_least(1),
    "speech.stale_after": _positive,
    "speech.repeat_window": _at_least(0),
    "speech.repeat_moves": _at_least(1),
    "speech.max_interruptions": _at_least(0),
    "storage.directory": _path_text,
}


def check_value(path: str, value: Any, node: Node) -> str | None:
    """What is wrong with a bound value that its type allows, or None."""
    check = VALUE_CHECKS.get(re.sub(r"\[\d+\]", "[]", path))
    if check is None or value is None:
        return None
    return check(value, node)


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


def _type_hints(cls: type) -> dict[str, Any]:
    """A settings class's field types, evaluated once (each is a string to compile
    under ``from __future__ import annotations``; a load asks for them per section
    and per board)."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def settable_fields(cls: type) -> dict[str, dataclasses.Field]:
    """The fields of a settings dataclass that a file can set (not callables, not
    private, not init=False, not derived from another section)."""
    hints = _type_hints(cls)
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


# --- loading -------------------------------------------------------------------------------


def _yaml() -> Any:
    """PyYAML, imported when a file must be parsed (``daemon.yamlcache`` says why)."""
    import yaml

    return yaml


def compose(text: str, source: str) -> Node | None:
    """The YAML node tree, or a ConfigError naming the line of a syntax error."""
    yaml = _yaml()
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


def _overrides(environ: Mapping[str, str]) -> list[str]:
    """The names of the variables that override keys, in order."""
    return [
        name
        for name in sorted(environ)
        if name.upper().startswith(ENV_PREFIX) and name.upper() not in ENV_RESERVED
    ]


def apply_environment(root: Node | None, environ: Mapping[str, str]) -> Node:
    """Put ``DGT_BRIDGE_<SECTION>__<KEY>`` overrides into the node tree; each new value
    node is marked with its variable's name so errors point there."""
    if root is None or (_is_scalar(root) and root.tag == _NULL):
        root = _Light("mapping", _MAP, [], _LightMark("<empty>", 0))
    names = _overrides(environ)
    if not names:
        return root
    yaml = _yaml()
    for name in names:
        path = [p.lower() for p in name[len(ENV_PREFIX) :].split("__")]
        if not all(path) or not _is_mapping(root):
            continue
        # No buffer, so no snippet in the message: PyYAML itself makes such marks.
        mark = yaml.Mark(f"environment {name}", 0, 0, 0, None, None)
        value_node = _scalar_from_text(environ[name], mark)
        target = root
        for depth, part in enumerate(path):
            last = depth == len(path) - 1
            found = None
            for i, (key_node, child) in enumerate(target.value):
                if _is_scalar(key_node) and key_node.value == part:
                    found = (i, child)
                    break
            key_node = yaml.ScalarNode("tag:yaml.org,2002:str", part, mark, mark)
            if last:
                if found is None:
                    target.value.append((key_node, value_node))
                else:
                    target.value[found[0]] = (target.value[found[0]][0], value_node)
            else:
                if found is None or not _is_mapping(found[1]):
                    child = yaml.MappingNode("tag:yaml.org,2002:map", [], mark, mark)
                    if found is None:
                        target.value.append((key_node, child))
                    else:
                        target.value[found[0]] = (target.value[found[0]][0], child)
                    target = child
                else:
                    target = found[1]
    return root


def _scalar_from_text(text: str, mark: Node) -> Node:
    yaml = _yaml()
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        node = None
    if node is None:
        node = yaml.ScalarNode("tag:yaml.org,2002:null", "", mark, mark)
    _remark(node, mark)
    return node


def _remark(node: Node, mark: Node) -> None:
    node.start_mark = node.end_mark = mark
    if _is_mapping(node):
        for k, v in node.value:
            _remark(k, mark)
            _remark(v, mark)
    elif _is_sequence(node):
        for v in node.value:
            _remark(v, mark)


def load_text(
    text: str, source: str = "<text>", environ: Mapping[str, str] | None = None
) -> Settings:
    """Settings from YAML text (plus environment overrides), or a ConfigError."""
    environ = {} if environ is None else environ
    root = _cached_tree(text)
    parsed = root is None
    if parsed:
        root = compose(text, source)
    root = apply_environment(root, environ)
    binder = _Binder(source)
    if not _is_mapping(root):
        raise binder.error(root, "", "the file must be a mapping of sections (board:, clock: ...)")
    sections = _section_types()
    values: dict[str, Any] = {}
    for key_node, value_node in root.value:
        name = binder.scalar(key_node)
        if name not in sections:
            raise binder.error(
                key_node, str(name), "unknown section; expected one of: " + ", ".join(sections)
            )
        if name in values:
            raise binder.error(key_node, name, "section given twice")
        section = sections[name]
        if section is None:
            module_name, class_name = PART_SECTIONS[name]
            raise binder.error(
                key_node, name, f"this installation lacks {module_name}.{class_name}"
            )
        values[name] = binder.bind(section, value_node, name)
    settings = Settings(**values, source=source)
    _bind_board_overrides(settings, root, binder)
    _check_references(settings, root, binder)
    if parsed and not _overrides(environ):  # the file's own tree, which loaded
        _keep_tree(text, root, binder)
    return settings


# --- the node tree of a file that loaded before (daemon.yamlcache) -------------------------

_MAP = "tag:yaml.org,2002:map"
_NULL = "tag:yaml.org,2002:null"


class _LightMark:
    """Where a cached node stood: the line is what the messages use."""

    __slots__ = ("line", "name")

    def __init__(self, name: str, line: int) -> None:
        self.name = name
        self.line = line


class _Light:
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


def _is_scalar(node: Any) -> bool:
    return getattr(node, "id", None) == "scalar"


def _is_sequence(node: Any) -> bool:
    return getattr(node, "id", None) == "sequence"


def _is_mapping(node: Any) -> bool:
    return getattr(node, "id", None) == "mapping"


class _Uncacheable(Exception):
    """A tree JSON cannot hold (a date, an alias that contains itself)."""


def _plain(node: Any, binder: _Binder, depth: int = 0) -> list[Any]:
    """A node tree as JSON lists: ["s", tag, line, text, value], ["q", tag, line,
    items], ["m", tag, line, pairs]."""
    if depth > 100:
        raise _Uncacheable
    line = node.start_mark.line
    if _is_scalar(node):
        value = binder.scalar(node)
        if type(value) not in (str, int, float, bool, type(None)):
            raise _Uncacheable
        return ["s", node.tag, line, node.value, value]
    if _is_sequence(node):
        return ["q", node.tag, line, [_plain(item, binder, depth + 1) for item in node.value]]
    pairs = [[_plain(k, binder, depth + 1), _plain(v, binder, depth + 1)] for k, v in node.value]
    return ["m", node.tag, line, pairs]


def _light(data: list[Any]) -> _Light:
    kind, tag, line = data[0], data[1], data[2]
    mark = _LightMark("<cache>", int(line))
    if kind == "s":
        return _Light("scalar", tag, data[3], mark, data[4])
    if kind == "q":
        return _Light("sequence", tag, [_light(item) for item in data[3]], mark)
    if kind == "m":
        return _Light("mapping", tag, [(_light(k), _light(v)) for k, v in data[3]], mark)
    raise ValueError(f"not a node: {kind!r}")


def _cached_tree(text: str) -> _Light | None:
    """The tree of a file with this text that loaded before, or None."""
    from daemon import yamlcache

    data = yamlcache.read("config", text)
    if data is None:
        return None
    try:
        return _light(data)
    except (ValueError, TypeError, IndexError, KeyError, RecursionError):
        return None  # a cache file of another shape: parse the file


def _keep_tree(text: str, root: Any, binder: _Binder) -> None:
    from daemon import yamlcache

    try:
        plain = _plain(root, binder)
    except (_Uncacheable, RecursionError):
        return
    yamlcache.write("config", text, plain)


def _bind_board_overrides(settings: Settings, root: Node, binder: _Binder) -> None:
    """Each board's ``clock:``/``speech:`` keys over the sections' own, bound by the
    parts' settings classes (so a mistake there names its line), and the boards'
    ids unique and their references known."""
    boards_node = _node_at(root, ("boards",))
    items = boards_node.value if _is_sequence(boards_node) else []
    seen: set[str] = set()
    for index, (entry, item) in enumerate(zip(settings.boards, items, strict=False)):
        key = f"boards[{index}]"
        if entry.id in seen:
            raise binder.error(item, f"{key}.id", f"board id {entry.id!r} given twice")
        seen.add(entry.id)
        for section in ("clock", "speech"):
            override = _node_at(item, (section,)) if _is_mapping(item) else None
            base = getattr(settings, section)
            if override is None or getattr(entry, section) is None or base is None:
                setattr(entry, section, base)
                continue
            main = _node_at(root, (section,))
            pairs = list(main.value) if _is_mapping(main) else []
            pairs += list(override.value) if _is_mapping(override) else []
            merged = _Light("mapping", _MAP, _last_wins(pairs, binder), override.start_mark)
            bound = binder.bind_dataclass(type(base), merged, f"{key}.{section}")
            setattr(entry, section, bound)
    for index, entry in enumerate(settings.boards):
        if entry.same_game_as and entry.same_game_as not in seen - {entry.id}:
            node = items[index] if index < len(items) else boards_node
            raise binder.error(
                node, f"boards[{index}].same_game_as", f"no board {entry.same_game_as!r}"
            )


def _last_wins(pairs: list[tuple[Node, Node]], binder: _Binder) -> list[tuple[Node, Node]]:
    """Key/value pairs with a later key replacing an earlier one (a board's own)."""
    out: dict[Any, tuple[Node, Node]] = {}
    for key_node, value_node in pairs:
        out[binder.scalar(key_node)] = (key_node, value_node)
    return list(out.values())


def _check_references(settings: Settings, root: Node, binder: _Binder) -> None:
    """Values that name other files: a vocabulary that cannot be read stops the start
    here, at its line, rather than leaving a blind player without words."""
    speech = settings.speech
    if speech is None or not hasattr(speech, "vocabulary"):
        return
    try:
        from daemon.speech.vocabulary import load_vocabulary
    except ImportError:
        return
    try:
        load_vocabulary(speech.vocabulary)
    except ValueError as exc:
        node = _node_at(root, ("speech", "vocabulary"))
        raise binder.error(node, "speech.vocabulary", _vocabulary_message(str(exc))) from exc
    try:
        load_vocabulary(speech.vocabulary, getattr(speech, "files", ""))
    except ValueError as exc:
        node = _node_at(root, ("speech", "files"))
        raise binder.error(node, "speech.files", _vocabulary_message(str(exc))) from exc


def _vocabulary_message(message: str) -> str:
    """A vocabulary error as the line's message: the key is named already, so not
    "speech.vocabulary: vocabulary 'x': ..." nor "...: vocabulary file x: ..." (the
    file itself stays named)."""
    message = re.sub(r"^vocabulary '[^']*': ", "", message)
    return re.sub(r"^vocabulary file (.+?): ", r"\1: ", message)


def _node_at(root: Node, path: tuple[str, ...]) -> Node:
    """The value node at a dotted path, or the deepest section found on the way (None:
    not even the first part)."""
    node: Node = root
    for part in path:
        if not _is_mapping(node):
            return node
        found = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
        if found is None:
            return None if node is root else node
        node = found
    return node


def load_file(path: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from a file; a missing or unreadable file is a ConfigError too."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(source, None, "", "no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(source, None, "", f"cannot be read: {exc}") from exc
    return load_text(text, source, environ)


#: Where ``run`` looks when no --config is given, in order (then the shipped defaults).
SEARCH_PATH = (Path("/etc/dgt-bridge/dgt-bridge.yaml"),)


def find_config_file(explicit: str | None, environ: Mapping[str, str]) -> Path:
    """The file to read: --config, else $DGT_BRIDGE_CONFIG, else /etc, else shipped."""
    from daemon import resources

    if explicit:
        return Path(explicit)
    if environ.get("DGT_BRIDGE_CONFIG"):
        return Path(environ["DGT_BRIDGE_CONFIG"])
    for candidate in SEARCH_PATH:
        if candidate.is_file():
            return candidate
    return resources.default_config_file()


def load(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """The daemon's settings as ``run`` finds them."""
    env = os.environ if environ is None else environ
    return load_file(find_config_file(explicit, env), env)
