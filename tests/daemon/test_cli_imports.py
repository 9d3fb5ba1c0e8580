"""The CLI starts at once: each command imports only what it needs.

Timings belong in ``benchmarks/cli_startup.py``; what is checked here is what makes
them: which modules a command has imported by the time it is done.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from daemon import commands
from daemon.cli import build_parser, command_names

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "rules" / "logs" / "en_passant_pawn_first.jsonl"

#: Libraries no command needs just to start, and replay never.
HEAVY = ("aiohttp", "asyncio", "paho", "serial", "usb", "pyttsx3")


def modules_after(*argv: str) -> set[str]:
    """The modules imported once ``dgt-bridge ARGV`` has finished."""
    code = (
        "import io, json, sys, contextlib\n"
        "from daemon.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        f"        main({list(argv)!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def top(names: set[str]) -> set[str]:
    return {name.split(".")[0] for name in names}


def test_help_imports_no_command_and_no_library() -> None:
    loaded = modules_after("--help")
    assert not {m for m in loaded if m.startswith("daemon.commands.")}
    assert not top(loaded) & {*HEAVY, "chess", "yaml"}


def test_replay_imports_neither_the_web_nor_the_engines_nor_the_loop() -> None:
    loaded = modules_after("replay", "--fast", str(LOG))
    assert "daemon.rules.core" in loaded  # it did replay
    assert not top(loaded) & set(HEAVY)
    assert not {m for m in loaded if m.startswith(("daemon.broadcast.server", "daemon.speech.e"))}
    assert [m for m in loaded if m.startswith("daemon.commands.")] == ["daemon.commands.replay"]


def test_every_command_is_listed_with_the_help_its_own_parser_gives() -> None:
    parser = build_parser(None)  # every command module imported
    (subparsers,) = [a for a in parser._actions if a.dest == "command"]
    helps = {action.dest: action.help for action in subparsers._choices_actions}
    assert set(command_names()) == set(helps) == set(commands.COMMANDS)
    assert helps == commands.COMMANDS
