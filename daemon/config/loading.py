"""Reading a configuration: the file found, its tree composed (or read back from the
cache), the environment's overrides put in, each section bound, the boards' own
``clock:``/``speech:`` keys bound over the sections', and the files it names checked.
A mistake anywhere is a ConfigError naming the file, the line and the key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from daemon.config.binder import Binder
from daemon.config.environment import apply_environment, overrides
from daemon.config.errors import ConfigError
from daemon.config.nodes import (
    MAP,
    Light,
    Node,
    cached_tree,
    compose,
    is_mapping,
    is_sequence,
    keep_tree,
    node_at,
)
from daemon.config.sections import PART_SECTIONS, Settings, board_entries, section_types


def load_text(
    text: str, source: str = "<text>", environ: Mapping[str, str] | None = None
) -> Settings:
    """Settings from YAML text (plus environment overrides), or a ConfigError."""
    environ = {} if environ is None else environ
    root = cached_tree(text)
    parsed = root is None
    if parsed:
        root = compose(text, source)
    root = apply_environment(root, environ)
    binder = Binder(source)
    if not is_mapping(root):
        raise binder.error(root, "", "the file must be a mapping of sections (board:, clock: ...)")
    sections = section_types()
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
    _one_place_for_the_tournament(settings, root, binder)
    _check_references(settings, root, binder)
    _check_board_keys(settings, root, binder)
    if parsed and not overrides(environ):  # the file's own tree, which loaded
        keep_tree(text, root, binder.scalar)
    return settings


def _bind_board_overrides(settings: Settings, root: Node, binder: Binder) -> None:
    """Each board's ``clock:``/``speech:`` keys over the sections' own, bound by the
    parts' settings classes (so a mistake there names its line), and the boards'
    ids unique and their references known."""
    boards_node = node_at(root, ("boards",))
    items = boards_node.value if is_sequence(boards_node) else []
    seen: set[str] = set()
    for index, (entry, item) in enumerate(zip(settings.boards, items, strict=False)):
        key = f"boards[{index}]"
        if entry.id in seen:
            raise binder.error(item, f"{key}.id", f"board id {entry.id!r} given twice")
        seen.add(entry.id)
        for section in ("clock", "speech"):
            override = node_at(item, (section,)) if is_mapping(item) else None
            base = getattr(settings, section)
            if override is None or getattr(entry, section) is None or base is None:
                setattr(entry, section, base)
                continue
            main = node_at(root, (section,))
            pairs = list(main.value) if is_mapping(main) else []
            pairs += list(override.value) if is_mapping(override) else []
            merged = Light("mapping", MAP, _last_wins(pairs, binder), override.start_mark)
            bound = binder.bind_dataclass(type(base), merged, f"{key}.{section}")
            setattr(entry, section, bound)
    for index, entry in enumerate(settings.boards):
        if entry.same_game_as and entry.same_game_as not in seen - {entry.id}:
            node = items[index] if index < len(items) else boards_node
            raise binder.error(
                node, f"boards[{index}].same_game_as", f"no board {entry.same_game_as!r}"
            )


def _last_wins(pairs: list[tuple[Node, Node]], binder: Binder) -> list[tuple[Node, Node]]:
    """Key/value pairs with a later key replacing an earlier one (a board's own)."""
    out: dict[Any, tuple[Node, Node]] = {}
    for key_node, value_node in pairs:
        out[binder.scalar(key_node)] = (key_node, value_node)
    return list(out.values())


#: ``game:``'s keys that ``broadcast:`` names now (issue 29), and what each is.
_TOURNAMENT_KEYS = {"event": "the event", "site": "the site", "round": "the round"}


def _one_place_for_the_tournament(settings: Settings, root: Node, binder: Binder) -> None:
    """Event, Site and Round are named once, in ``broadcast:``: the page, the PGN files
    on disk, MQTT and lichess read them there (``pairings`` writes ``broadcast.round``).
    ``game.event``/``site``/``round`` are deprecated: still read (a warning says where
    to move them) when ``broadcast:`` leaves the key "?", refused when both name it
    differently, since the page and the files on disk would then disagree."""
    broadcast = settings.broadcast
    if broadcast is None:
        return
    for key, what in _TOURNAMENT_KEYS.items():
        old = getattr(settings.game, key)
        if old in ("?", ""):
            continue
        new = getattr(broadcast, key, "?")
        if new not in ("?", "") and new != old:
            node = node_at(root, ("game", key))
            raise binder.error(
                node,
                f"game.{key}",
                f"{old!r} but broadcast.{key} is {new!r}: {what} is named once, in "
                f"broadcast.{key} (the page, the PGN files, MQTT and lichess read it "
                f"there); remove game.{key}",
            )
        if new in ("?", ""):
            setattr(broadcast, key, old)
        settings.warnings.append(
            f"game.{key} is deprecated: write {what} as broadcast.{key} ({old!r}); "
            f"read from game.{key} for now"
        )


def _check_references(settings: Settings, root: Node, binder: Binder) -> None:
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
        node = node_at(root, ("speech", "vocabulary"))
        raise binder.error(node, "speech.vocabulary", _vocabulary_message(str(exc))) from exc
    try:
        load_vocabulary(speech.vocabulary, getattr(speech, "files", ""))
    except ValueError as exc:
        node = node_at(root, ("speech", "files"))
        raise binder.error(node, "speech.files", _vocabulary_message(str(exc))) from exc


def _check_board_keys(settings: Settings, root: Node, binder: Binder) -> None:
    """Each board's key file (``broadcast.mqtt.board_key_file``, ``{board}`` for each
    board's id) read now, so a missing or damaged one is named at its line rather
    than leaving a board unsigned (a relay with the hall's key would drop all it
    says), and the keys kept for the publishers (``Settings.board_keys``: read
    once); ``arbiter_key`` said to be deprecated, at its line."""
    mqtt = getattr(settings.broadcast, "mqtt", None)
    if mqtt is None or not mqtt.enabled:
        return
    key = "broadcast.mqtt.board_key_file"
    if mqtt.arbiter_key:
        node = node_at(root, ("broadcast", "mqtt", "arbiter_key"))
        why = (
            "ignored: board_key_file signs every message; remove it"
            if mqtt.board_key_file
            else "deprecated: every Pi holds it, so one stolen Pi signs any board's "
            "results; give each board its own key (board_key_file, docs/broadcast.md)"
        )
        settings.warnings.append(str(binder.error(node, "broadcast.mqtt.arbiter_key", why)))
    if not mqtt.board_key_file:
        return
    from daemon.broadcast import boardkeys

    # the daemon's boards (its one board "1" when the file names none) and the cards
    ids = [entry.id for entry in board_entries(settings)]
    ids += [card.id for card in getattr(settings.broadcast, "boards", None) or []]
    try:
        settings.board_keys = boardkeys.read_board_keys(mqtt.board_key_file, ids)
    except boardkeys.BoardKeyError as exc:
        node = node_at(root, ("broadcast", "mqtt", "board_key_file"))
        raise binder.error(node, key, str(exc)) from None


def _vocabulary_message(message: str) -> str:
    """A vocabulary error as the line's message: the key is named already, so not
    "speech.vocabulary: vocabulary 'x': ..." nor "...: vocabulary file x: ..." (the
    file itself stays named)."""
    message = re.sub(r"^vocabulary '[^']*': ", "", message)
    return re.sub(r"^vocabulary file (.+?): ", r"\1: ", message)


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
    from daemon.files import resources

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
