"""``dgt-bridge run``: the daemon (board -> rules core -> speech, broadcast, journal)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from typing import Any, TextIO


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run the daemon: read the board, decide moves, speak, broadcast, journal",
        description=(
            "Run the daemon. The configuration comes from --config, else $DGT_BRIDGE_CONFIG, "
            "else /etc/dgt-bridge/dgt-bridge.yaml, else the shipped defaults; "
            "DGT_BRIDGE_<SECTION>__<KEY> variables override single keys. An unfinished game "
            "in the storage directory is resumed."
        ),
    )
    parser.add_argument("--config", metavar="FILE", help="the YAML configuration file")
    parser.add_argument(
        "--port", metavar="PATH", help="the board's serial port (overrides board.port)"
    )
    parser.add_argument(
        "--events",
        metavar="PATH|-",
        help="also write the event feed as JSON lines to PATH ('-': stdout; the log then goes "
        "to stderr)",
    )
    parser.add_argument("--no-speech", action="store_true", help="do not speak (moves are logged)")
    parser.add_argument(
        "--storage", metavar="DIR", help="journal directory (overrides storage.directory)"
    )
    parser.add_argument("--verbose", action="store_true", help="debug logging")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from daemon.service.gcfreeze import building

    with contextlib.ExitStack() as stack:
        # Start-up makes what lives as long as the daemon and frees no cycles: no
        # collection until the daemon is made, then what it made is kept out of every
        # later collection (gc.freeze: less CPU per collection during the games).
        with building():
            made = _make_daemon(args, stack)
        if isinstance(made, int):
            return made
        import asyncio

        return asyncio.run(made.run())


def _make_daemon(args: argparse.Namespace, stack: contextlib.ExitStack) -> Any:
    """The daemon of this configuration, or the exit status when it cannot be made
    (the reason printed)."""
    from pathlib import Path

    from daemon.config import ConfigError, load

    try:
        settings = load(args.config)
    except ConfigError as exc:
        print(f"dgt-bridge: configuration error: {exc}", file=sys.stderr)
        return 2
    from daemon.app import Daemon, setup_logging

    events_out: TextIO | None = None
    log_stream: TextIO = sys.stdout
    if args.events == "-":
        events_out, log_stream = sys.stdout, sys.stderr
    elif args.events:
        events_out = stack.enter_context(open(args.events, "a", encoding="utf-8"))  # noqa: SIM115
    setup_logging(log_stream, verbose=args.verbose)
    from daemon.service.capacity import warnings_here

    # a deprecated key (still read), more boards than this computer was measured with
    for warning in settings.warnings + warnings_here(settings):
        logging.getLogger("dgt-bridge").warning("%s: %s", settings.source, warning)
    try:  # one daemon for one board (board:) or many (boards:)
        return Daemon(
            settings,
            port=args.port,
            events_out=events_out,
            speech=not args.no_speech,
            storage_dir=Path(args.storage) if args.storage else None,
        )
    except ValueError as exc:  # --port with boards:, a vocabulary that cannot be read
        print(f"dgt-bridge: cannot start: {exc}", file=sys.stderr)
        return 2
