"""The layers point one way: board -> drivers -> daemon, and tools use the package.

- ``drivers/`` never imports ``daemon/`` (not even inside a function): the drivers
  are reusable without the daemon, and the daemon's changes never break them;
- no two modules import each other, directly or round a longer loop;
- ``benchmarks/`` import the package, never ``tests/``;
- the codecs, the bus poller and the rules core are sans-I/O: no port, clock,
  thread or event loop of their own, so they are tested on simulated time;
- the simulators (``drivers/simulators/``) are loaded only by the commands that
  emulate a board: the daemon on a real board never imports an emulator.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: str) -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}


def _type_checking_only(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Name | ast.Attribute)
        and "TYPE_CHECKING" in ast.unparse(node.test)
    )


def imports_of(path: Path, name: str, *, types: bool = False) -> set[str]:
    """Every module ``path`` imports when it runs, at the top or inside a function
    (what only a type checker reads, under ``if TYPE_CHECKING:``, is left out unless
    ``types``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if not types and _type_checking_only(node):
            skipped |= {id(n) for child in node.body for n in ast.walk(child)}
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def test_importing_every_driver_does_not_import_the_daemon() -> None:
    names = [name for name in modules("drivers") if not name.endswith("__main__")]
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m == 'daemon' or m.startswith('daemon.')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_no_driver_imports_the_daemon_even_inside_a_function() -> None:
    offenders = {
        name: sorted(i for i in imports_of(path, name) if i.split(".")[0] == "daemon")
        for name, path in modules("drivers").items()
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def import_cycles(package: str, *, types: bool = False) -> list[list[str]]:
    """The loops of modules in ``package`` that import each other (``types``: counting
    what only the type checker reads)."""
    known = modules(package)
    graph = {
        name: {i for i in imports_of(path, name, types=types) if i in known and i != name}
        for name, path in known.items()
    }
    for name in graph:  # a package's __init__ importing its own modules is no loop
        graph[name] = {i for i in graph[name] if not name.startswith(i + ".")}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return cycles


@pytest.mark.parametrize("package", ["drivers", "daemon"])
def test_no_modules_import_each_other(package: str) -> None:
    assert import_cycles(package) == []


#: The rules core's dispatcher and its decision paths (``daemon.rules.core`` lists them).
DECISION_PATHS = frozenset(
    f"daemon.rules.{name}"
    for name in ("core", "base", "report", "lifts", "commit", "moves", "newgame",
                 "irregularities", "resuming", "clock", "requests", "corrections")
)  # fmt: skip


def test_the_rules_cores_decision_paths_import_no_loop_even_for_their_types() -> None:
    """Each decision path of the rules core is read on its own, from the dispatcher
    (``daemon.rules.core``) down to what it calls: the arbiter's corrections once
    typed their ``core`` argument as ``RulesCore`` while the core imported them, so
    neither could be understood, or moved, without the other."""
    loops = [c for c in import_cycles("daemon", types=True) if DECISION_PATHS & set(c)]
    assert loops == []


def test_benchmarks_use_the_package_not_the_tests() -> None:
    for name, path in modules("benchmarks").items():
        source = path.read_text(encoding="utf-8")
        imported = imports_of(path, name)
        assert not {i for i in imported if i.split(".")[0] in ("tests", "rules_support")}, name
        assert "sys.path" not in source, f"{name} changes sys.path"


#: What reads a port, a clock or a file, or waits: none of it in a sans-I/O module.
IO_MODULES = frozenset(
    {"os", "time", "socket", "select", "selectors", "serial", "asyncio", "threading",
     "subprocess", "termios", "tty", "pty", "fcntl"}
)  # fmt: skip
SANS_IO = ("drivers.dgt.protocol", "drivers.dgt.buscodec", "drivers.dgt.bus", "daemon.rules")


def test_the_codecs_the_bus_poller_and_the_rules_core_do_no_io() -> None:
    found = {}
    for package in ("drivers", "daemon"):
        for name, path in modules(package).items():
            if name in SANS_IO or name.startswith("daemon.rules."):
                io = sorted({i.split(".")[0] for i in imports_of(path, name)} & IO_MODULES)
                if io:
                    found[name] = io
    assert found == {}


def test_only_the_commands_that_emulate_a_board_import_the_simulators() -> None:
    found = {}
    for package in ("drivers", "daemon"):
        for name, path in modules(package).items():
            if name.startswith(("drivers.simulators", "daemon.commands.")):
                continue
            simulated = sorted(
                i for i in imports_of(path, name) if i.startswith("drivers.simulators")
            )
            if simulated:
                found[name] = simulated
    assert found == {}


#: feed event types a driver would have to match on to read the event feed
_FEED_TYPES = frozenset(
    {"game_start", "game_resumed", "game_end", "takeback", "position_restored", "clock_sides"}
)


def test_no_driver_reads_the_event_feed_or_decides_whose_clock_side_is_whose() -> None:
    """Whose clock side is White's is a decision about the game: the daemon's
    (``daemon.clock.sides``, asking the rules core). A driver reads left and right and
    never matches on the feed's event types, nor is handed the board's mover."""
    found = []
    for name, path in modules("drivers").items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in _FEED_TYPES:
                found.append(f"{name}: {node.value!r}")
            named = {getattr(node, key, None) for key in ("id", "attr", "arg")}
            if "board_mover" in named:
                found.append(f"{name}: board_mover")
    assert not found, found


def test_the_clock_drivers_report_left_and_right_and_know_no_colours() -> None:
    """A clock knows left and right: the drivers that read and write clocks (the DGT
    clock through the board or on a bus, a USB clock) report and take sides only.
    Which side is White's, learnt or configured, is mapped in ``daemon.clock.sides``,
    so a replay of their sensor log maps it as the daemon did."""
    colours = {"white", "black", "Colour", "ClockReport", "white_side", "white_on_left"}
    found = []
    for name, path in modules("drivers").items():
        if not name.startswith(("drivers.clock", "drivers.dgt")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = {getattr(node, key, None) for key in ("id", "attr", "arg", "value")}
            if isinstance(node, ast.alias):
                named.add(node.name)
            found += [f"{name}: {word}" for word in named & colours]
    assert not found, found


def test_each_boards_game_has_one_record_type() -> None:
    """One typed game record (``daemon.game.record.GameRecord``), folded once per event
    by the board's pipeline and read by the journal, the speech, the page and MQTT: no
    other class of the daemon folds the feed into a game of its own (``apply``
    beside ``pgn`` or ``state``)."""
    records = []
    for name, path in modules("daemon").items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
                if "apply" in methods and methods & {"pgn", "state"}:
                    records.append(f"{name}.{node.name}")
    assert records == ["daemon.game.record.GameRecord"]
