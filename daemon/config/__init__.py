"""The configuration: one YAML file read into typed, validated settings.

A blind player's daemon that starts with a misspelt key silently ignored is worse
than one that refuses to start, and the message must say where the mistake is: every
error names the file, the key's dotted path, the line and what was expected.

The modules, one job each:

- ``sections``: the sections as dataclasses (the daemon's own; the parts' own are
  kept by each part) and the boards a daemon reads (``board_entries``);
- ``nodes``: the YAML node tree with its lines, and its cache (``daemon.files.yamlcache``);
- ``binder``: a node tree bound to the dataclasses, a field a key;
- ``checks``: values the types allow but ``run`` would die on;
- ``environment``: ``DGT_BRIDGE_<SECTION>__<KEY>`` overrides;
- ``loading``: the file found and read, the sections bound, the boards' own keys;
- ``errors``: ``ConfigError``, the one exception a bad file raises.
"""

from __future__ import annotations

from daemon.config.binder import describe_type, field_type, settable_fields, type_hints
from daemon.config.checks import VALUE_CHECKS, check_value
from daemon.config.environment import ENV_PREFIX, ENV_RESERVED, apply_environment
from daemon.config.errors import ConfigError
from daemon.config.loading import SEARCH_PATH, find_config_file, load, load_file, load_text
from daemon.config.nodes import compose
from daemon.config.sections import (
    BOARD_ID,
    PART_SECTIONS,
    BoardEntry,
    BoardSettings,
    GameSettings,
    Settings,
    StorageSettings,
    board_entries,
    part_settings_class,
    section_types,
)

__all__ = [
    "BOARD_ID",
    "ENV_PREFIX",
    "ENV_RESERVED",
    "PART_SECTIONS",
    "SEARCH_PATH",
    "VALUE_CHECKS",
    "BoardEntry",
    "BoardSettings",
    "ConfigError",
    "GameSettings",
    "Settings",
    "StorageSettings",
    "apply_environment",
    "board_entries",
    "check_value",
    "compose",
    "describe_type",
    "field_type",
    "find_config_file",
    "load",
    "load_file",
    "load_text",
    "part_settings_class",
    "section_types",
    "settable_fields",
    "type_hints",
]
