"""Where the shipped configuration lives, installed or not.

A wheel carries ``config/`` as ``daemon/_shipped_config`` (hatchling force-include in
pyproject); a source or editable checkout has it at ``<repo>/config``. Every command
that needs a default (the configuration, the vocabularies, the demo games) asks here,
so it works from any directory without the source tree.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Overrides the lookup (tests, packagers who put the files elsewhere).
ENV_CONFIG_DIR = "DGT_BRIDGE_SHIPPED_CONFIG"

DEFAULT_CONFIG_NAME = "dgt-bridge.yaml"
DEMO_GAMES_NAME = "demo.pgn"


def shipped_config_dir() -> Path:
    """The directory of the shipped ``config/`` tree.

    Raises FileNotFoundError with both places looked at when neither exists (a broken
    install), rather than letting a later open() fail with a path nobody expects.
    """
    override = os.environ.get(ENV_CONFIG_DIR)
    if override:
        return Path(override)
    # The wheel puts config/ into the package as _shipped_config (pyproject.toml);
    # an editable or source install has it beside the package. Found from __file__,
    # as importlib.resources.files("daemon") would for a package on disk (the only
    # kind the Path below supports), without importing importlib.resources and
    # zipfile at every command's start (about 10 ms).
    package = Path(__file__).resolve().parent.parent  # daemon/, this module is in files/
    candidates = [package / "_shipped_config", package.parent / "config"]
    for candidate in candidates:
        if (candidate / DEFAULT_CONFIG_NAME).is_file():
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"the shipped configuration is missing (looked in {looked})")


def default_config_file() -> Path:
    """The shipped ``dgt-bridge.yaml``: every key with its default and a comment."""
    return shipped_config_dir() / DEFAULT_CONFIG_NAME


def games_dir() -> Path:
    """The shipped public-domain games the demo plays."""
    return shipped_config_dir() / "games"


def demo_games_file() -> Path:
    return games_dir() / DEMO_GAMES_NAME


def vocabularies_dir() -> Path:
    """The speech vocabularies (the speech part's files; located here for every part)."""
    return shipped_config_dir() / "vocabularies"
