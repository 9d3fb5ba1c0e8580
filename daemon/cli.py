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
    names = command_names()
    if chosen in names:
        # A known command is parsed by its own parser: the others' would only be
        # built for nothing (``dgt-bridge --help`` and a misspelt command list them all).
        names = [chosen]
    for name in names:
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


#: Exit status of a command whose reader went away (``| head``): what a shell shows
#: for a Unix tool ended by SIGPIPE (128 + 13).
CLOSED_PIPE_STATUS = 141


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_chosen_command(args_list))
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a buffered write fails here, where it can be told, not at exit
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader has gone (``replay LOG | head -3``): stop quietly, as Unix tools do.
        _silence_stdout()
        return CLOSED_PIPE_STATUS
    except OSError as exc:
        # A full disk, a vanished directory: one line, never a traceback.
        _silence_stdout()
        print(f"dgt-bridge {args.command}: {describe_os_error(exc)}", file=sys.stderr)
        return 1


def describe_os_error(exc: OSError) -> str:
    """An OSError in words, once: its text and the file it is about (Python's own
    ``str()`` repeats the errno, and a wrapped error can repeat the text)."""
    text = exc.strerror or str(exc)
    names = [n for n in (exc.filename, exc.filename2) if n]
    return f"{text}: {' -> '.join(map(str, names))}" if names else text


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's own flush at exit does not
    fail again on the closed pipe or the full disk."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
