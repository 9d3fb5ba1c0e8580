"""The ``dgt-bridge`` command line: finds the subcommands and runs one.

It starts at once: ``dgt-bridge --help`` imports no command at all (their one-line
helps are in ``daemon.commands.COMMANDS``), and ``dgt-bridge CMD`` imports only
``daemon/commands/CMD.py``, which in turn imports what it needs when it runs. On a
Pi, every library imported for nothing is a noticeable pause before each command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module

from daemon import __version__, commands


def command_names() -> list[str]:
    """Every command of ``daemon/commands/`` (``check_config.py`` is ``check-config``),
    read from the directory, so a new module is a new command even before it is
    listed in ``COMMANDS``."""
    import os

    folder = os.path.dirname(commands.__file__)
    modules = [f[:-3] for f in os.listdir(folder) if f.endswith(".py") and not f.startswith("_")]
    return sorted({m.replace("_", "-") for m in modules} | set(commands.COMMANDS))


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The whole parser. ``chosen``: the one command whose module is imported to add
    its own options; the others are named with their one-line help only. None: all
    commands are imported (what a test of every parser wants)."""
    parser = argparse.ArgumentParser(
        prog="dgt-bridge",
        description="A DGT e-board and clock, read by the FIDE Laws, spoken and broadcast.",
    )
    parser.add_argument("--version", action="version", version=f"dgt-bridge {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in command_names():
        help_text = commands.COMMANDS.get(name)
        if chosen is not None and name != chosen and help_text is not None:
            subparsers.add_parser(name, help=help_text, add_help=False)
            continue
        module = import_module(f"{commands.__name__}.{name.replace('-', '_')}")
        module.register(subparsers)
    return parser


def _chosen_command(argv: Sequence[str]) -> str:
    """The command named on the line (the first word that is not an option), or ""."""
    return next((arg for arg in argv if not arg.startswith("-")), "")


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_chosen_command(args_list))
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
