"""``dgt-bridge check-config FILE``: validate a configuration before the daemon needs it."""

from __future__ import annotations

import argparse
import os
import sys

from daemon.config import ConfigError, load_file


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check-config",
        help="validate a configuration file and print the result",
        description=(
            "Read FILE as the daemon would (with DGT_BRIDGE_<SECTION>__<KEY> environment "
            "overrides) and say whether it is valid; on an error, name the file, the line, "
            "the key and what is expected. Exit code 0 when valid, 2 when not."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="the YAML configuration file")
    parser.add_argument(
        "--show", action="store_true", help="print the resulting settings, section by section"
    )
    parser.set_defaults(func=check_config)


def check_config(args: argparse.Namespace) -> int:
    try:
        settings = load_file(args.file, os.environ)
    except ConfigError as exc:
        print(f"{exc}", file=sys.stderr)
        print(f"{args.file}: INVALID", file=sys.stderr)
        return 2
    print(f"{args.file}: OK")
    for warning in settings.warnings:
        print(f"{args.file}: warning: {warning}")
    from daemon.speech.checks import speech_warnings

    for warning in speech_warnings(settings.speech):
        print(f"{args.file}: warning: {warning}")
    from daemon.service.capacity import warnings_here

    for warning in warnings_here(settings):
        print(f"{args.file}: warning: {warning}")
    if args.show:
        for name in ("board", "clock", "rules", "speech", "broadcast", "game", "storage"):
            print(f"{name}: {getattr(settings, name)!r}")
    return 0
