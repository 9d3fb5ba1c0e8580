"""What the daemon's start to READY costs, in instructions, and how much of it is ours.

    python -m benchmarks.ready_cost [--runs N] [--quick]

READY on a Pi Zero 2 W's budget is seconds (``benchmarks.pibudget``: < 5 s), and
nearly all of it is the start's own CPU: the interpreter, the imports and the boards'
set-up. On this shared machine its time moves with the load by more than a change
to it saves, so it is counted here in instructions (valgrind's cachegrind, no cache
simulation), each run in a fresh interpreter:

- ``python -c pass``: the interpreter and ``site``;
- ``import chess``: python-chess, which builds its attack tables when imported;
- ``import asyncio`` (with ``ssl``, which asyncio and paho-mqtt need);
- the daemon from its start to READY=1, as the unit runs it (``PYTHONOPTIMIZE=2``,
  the bytecode compiled, the configuration's parsed tree and the dataclasses' code
  cached, as after a first start): one board with the page and MQTT on (plain, and
  over TLS), and a hall (a bus chain of 12 boards and a USB board). The board ports do
  not exist: READY comes once the links are started, before a port opens.

What is left of the daemon's count without the other three is the rest: our modules,
the standard library's they import (logging, argparse, json, dataclasses and
inspect ...) and the boards' set-up. The libraries share a few modules (``re``,
``enum``), counted once in each, so the rest is if anything a little more.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from benchmarks.common import footer, header, valgrind_instructions
from benchmarks.daemonrun import (
    ROOT,
    UNTIL_READY,
    compile_sources,
    unit_config,
    unit_environment,
    warm_cache,
)
from benchmarks.testca import make_test_ca

BROADCAST: dict[str, Any] = {
    "address": "127.0.0.1",
    "port": 0,
    "mqtt": {"enabled": True, "host": "127.0.0.1", "port": 1883, "tournament": "ready"},
}


def one_board(work: Path, **mqtt: Any) -> Path:
    """The shipped configuration on one board, the page and MQTT on (``mqtt``: more of
    its keys)."""
    broadcast = {**BROADCAST, "mqtt": {**BROADCAST["mqtt"], **mqtt}}
    return unit_config(work, None, {"board": {"port": "/nonexistent/dgt-board"},
                                    "broadcast": broadcast})  # fmt: skip


def one_board_tls(work: Path) -> Path:
    """As ``one_board``, MQTT over TLS with the benchmarks' own CA (its context is made
    after READY, with the rest of MQTT)."""
    make_test_ca(work)
    return one_board(work, tls=True, ca_file=str(work / "ca.crt"))


def hall(work: Path) -> Path:
    shipped = yaml.safe_load((ROOT / "config" / "dgt-bridge.yaml").read_text(encoding="utf-8"))
    boards: list[dict[str, Any]] = [
        {"id": f"b{n}", "bus_port": "/nonexistent/dgt-bus", "bus_serial": f"{1000 + n:05d}"}
        for n in range(1, 13)
    ]
    boards.append({"id": "s1", "port": "/nonexistent/dgt-board", "speak": True})
    tree = {key: value for key, value in shipped.items() if key != "board"}
    tree.update(boards=boards, broadcast={**(tree.get("broadcast") or {}), **BROADCAST})
    path = work / "hall.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False), encoding="utf-8")
    return path


DAEMONS = {
    "one board, page and MQTT": one_board,
    "one board, page and MQTT over TLS": one_board_tls,
    "a hall: 12 bus boards, a USB board": hall,
}


def daemon_until_ready(work: Path, config: Path) -> tuple[list[str], dict[str, str]]:
    env = unit_environment(work)
    warm_cache(config, env)
    command = [sys.executable, "-c", UNTIL_READY, "run", "--config", str(config),
               "--storage", str(work / "games")]  # fmt: skip
    return command, env


def counted(command: list[str], env: dict[str, str], runs: int) -> int:
    return int(statistics.median(valgrind_instructions(command, env) for _ in range(runs)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each, the median (3)")
    parser.add_argument("--quick", action="store_true", help="one run of each")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs = 1
    header("start -> READY in instructions (valgrind, PYTHONOPTIMIZE=2)")
    compile_sources()
    with tempfile.TemporaryDirectory(prefix="dgt-ready-cost-") as scratch:
        work = Path(scratch)
        env = unit_environment(work)
        python = [sys.executable]
        parts = {
            "python -c pass": counted([*python, "-c", "pass"], env, args.runs),
            "import chess": counted([*python, "-c", "import chess"], env, args.runs),
            "import asyncio": counted([*python, "-c", "import asyncio"], env, args.runs),
        }
        base = parts["python -c pass"]
        others = sum(count - base for count in parts.values()) + base
        print("| run | instructions (M) | without the interpreter (M) |")
        print("|---|---|---|")
        for name, count in parts.items():
            print(f"| {name} | {count / 1e6:,.0f} | {(count - base) / 1e6:,.0f} |")
        for name, make in DAEMONS.items():
            place = work / make.__name__
            place.mkdir()
            count = counted(*daemon_until_ready(place, make(place)), args.runs)
            rest = count - others
            print(
                f"| the daemon to READY, {name} | {count / 1e6:,.0f} | "
                f"{(count - base) / 1e6:,.0f} (the rest, without chess and asyncio: "
                f"{rest / 1e6:,.0f}, {100 * rest / count:.0f} % of all) |"
            )
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
