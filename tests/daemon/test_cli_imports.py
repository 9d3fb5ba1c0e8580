"""The CLI starts at once: each command imports only what it needs.

Timings belong in ``benchmarks/cli_startup.py``; what is checked here is what makes
them: which modules a command has imported by the time it is done.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from daemon import commands
from daemon.cli import build_parser, command_names

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "rules" / "logs" / "en_passant_pawn_first.jsonl"

#: Libraries no command needs just to start, and replay never.
HEAVY = ("aiohttp", "asyncio", "paho", "serial", "usb", "pyttsx3")


def child_json(code: str, *argv: str, env: dict[str, str] | None = None,
               timeout: float = 60) -> Any:  # fmt: skip
    """What a fresh interpreter running ``code`` (with ``argv``) printed last, as JSON:
    nothing this test process has imported hides what the child imports."""
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT,
        timeout=timeout, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


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
    return set(child_json(code))


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


#: The daemon's CLI, which prints the expression RESULT as JSON at READY=1 and ends.
_STOPPED_AT_READY = """
import json, os, sys
from daemon.service import notify
def ready(self, status=""):
    print(json.dumps(RESULT), flush=True)
    os._exit(0)
notify.Notifier.ready = ready
from daemon.cli import main
main(sys.argv[1:])
"""


def until_ready(prelude: str, result: str) -> str:
    """A child's code: ``prelude``, then the daemon's CLI, which at READY=1 prints the
    expression ``result`` as JSON and ends there."""
    return prelude + _STOPPED_AT_READY.replace("RESULT", result)


def hall_config(tmp_path: Path) -> Path:
    """A hall of a USB board and a bus chain's board, ports that do not exist (READY
    comes before a port is opened)."""
    config = tmp_path / "hall.yaml"
    config.write_text(
        "boards:\n"
        "  - {id: one, port: /nonexistent/usb-board}\n"
        '  - {id: b1, bus_port: /nonexistent/bus, bus_serial: "01025"}\n'
        "clock:\n  device: none\n"
    )
    return config


#: Run in a child as the unit runs the daemon (``PYTHONOPTIMIZE=2``): every dataclass
#: made until READY, as (module, class, methods generated, a docstring before).
MADE_BEFORE_READY = until_ready(
    """
import dataclasses
made = []
process_class = dataclasses._process_class
def watched(cls, init, repr, eq, order, unsafe_hash, frozen, *rest):
    generated = [name for name, on in (("repr", repr), ("eq", eq), ("frozen", frozen)) if on]
    made.append((cls.__module__, cls.__qualname__, generated, bool(cls.__dict__.get("__doc__"))))
    return process_class(cls, init, repr, eq, order, unsafe_hash, frozen, *rest)
dataclasses._process_class = watched
""",
    "made",
)


def test_the_daemon_makes_no_dataclass_of_ours_with_generated_methods_before_ready(
    tmp_path: Path,
) -> None:
    """READY on a Pi Zero 2 W's budget is seconds of imports (issue 28): a dataclass's
    generated ``==``, ``repr`` or frozen ``__setattr__`` is compiled at import, and
    under ``-OO`` ``dataclass`` writes a docstring from ``inspect.signature``. Ours
    take them from ``drivers.records`` instead (a bus chain's modules included)."""
    config = hall_config(tmp_path)
    env = {**os.environ, "PYTHONOPTIMIZE": "2", "DGT_BRIDGE_BROADCAST__ENABLED": "false"}
    made = child_json(MADE_BEFORE_READY, "run", "--config", str(config),
                      "--storage", str(tmp_path / "games"), "--no-speech", env=env)  # fmt: skip
    ours = [row for row in made if row[0].split(".")[0] in ("daemon", "drivers")]
    assert {"drivers.dgt.buslink", "daemon.rules.tree"} <= {row[0] for row in ours}
    assert [row for row in ours if row[2]] == []
    assert [row for row in ours if not row[3]] == []


EVERY_DATACLASS = """
import dataclasses, importlib, json, pkgutil, sys
from drivers.records import Shown
for package in ("daemon", "drivers"):
    for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
plain = sorted(
    f"{name}.{value.__qualname__}"
    for name, module in list(sys.modules.items()) if name.split(".")[0] in ("daemon", "drivers")
    for value in vars(module).values()
    if isinstance(value, type) and dataclasses.is_dataclass(value)
    and value.__module__ == name and not issubclass(value, Shown)
)
print(json.dumps(plain))
"""


def test_every_dataclass_of_ours_takes_its_methods_from_the_records() -> None:
    """Every command's start (the daemon's speech and page after READY, ``replay``,
    ``relay``) pays for each dataclass it makes: none of ours compiles its own."""
    assert child_json(EVERY_DATACLASS, timeout=120) == []
