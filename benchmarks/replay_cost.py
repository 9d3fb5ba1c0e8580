"""The rules core's cost per sensor event, in instructions (issue 28).

    python -m benchmarks.replay_cost [--tool cachegrind|callgrind]

``dgt-bridge replay --fast`` of a long game cost more per event than the real
capture's, so the core's own cost is counted here in a way the machine's load cannot
change: valgrind counts the instructions. Two logs go through ``RulesCore.judge`` (and
``tick`` when a settle timer is due, as the daemon's timer does):

- the real DGT capture (57 plies, with its clock);
- game 404 of ``games.pgn`` (160 plies) played by the human-handling model with a clock.

Each log is run twice under valgrind in a fresh interpreter, each first feeding the
capture once to warm up (imports, first calls): once then feeding the log, once not. The
difference, divided by the sensor events, is the core's cost per event (python-chess's work
inside ``judge`` counts). Hash randomisation is off so both runs do the same work.

``--child LOG feed|build`` is what valgrind runs; ``--profile LOG`` prints cProfile's
view of the feed instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from benchmarks.common import CAPTURE_LOG, GAMES_PGN, footer, header, valgrind_instructions

LONG_GAME = 404  # 160 plies from the standard position
LOGS = ("capture", "long")


def build(name: str) -> list:
    """The sensor log ``name`` names, made the same way on every run."""
    if name == "capture":
        from drivers.sensorlog import read_log

        return read_log(str(CAPTURE_LOG))
    from drivers.simulators.gamelogs import read_games
    from drivers.simulators.handling import human_sensor_log

    game = read_games(GAMES_PGN, limit=LONG_GAME + 1)[LONG_GAME]
    assert len(game.moves) == 160 and not game.needs_set_position
    return human_sensor_log(game.start, game.moves, seed=LONG_GAME, with_clock=True)


def feed(events: list) -> list:
    """Feed ``events`` as the daemon does; return the domain events (nothing else is
    done per event, so the harness adds little to the count)."""
    from daemon.rules import RulesCore, RulesSettings

    core = RulesCore(RulesSettings(use_clock=True))
    out: list = []
    for event in events:
        while (deadline := core.next_deadline()) is not None and deadline <= event.t:
            out += core.tick(deadline)
        out += core.judge(event)
    while (deadline := core.next_deadline()) is not None:
        out += core.tick(deadline)
    return out


def child(name: str, mode: str) -> None:
    events = build(name)
    # Warm up in both modes (imports, python-chess's first calls, a first game), so
    # the difference is the feed of this log alone, as in a daemon that has run a game.
    feed(build("capture"))
    if mode == "feed":
        moves = sum(type(out).__name__ == "Move" for out in feed(events))
        print(f"{name}: {len(events)} events, {moves} moves")
    else:
        print(f"{name}: {len(events)} events")


def instructions(tool: str, name: str, mode: str) -> int:
    """Instructions valgrind's ``tool`` counts for one child run."""
    command = [sys.executable, "-m", "benchmarks.replay_cost", "--child", name, mode]
    return valgrind_instructions(command, {**os.environ, "PYTHONHASHSEED": "0"}, tool)


def profile(name: str) -> None:
    import cProfile
    import pstats

    events = build(name)
    feed(build("capture"))  # warm up, as under valgrind
    profiler = cProfile.Profile()
    profiler.runcall(feed, events)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(30)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", choices=("cachegrind", "callgrind"), default="cachegrind")
    parser.add_argument("--child", nargs=2, metavar=("LOG", "MODE"), help=argparse.SUPPRESS)
    parser.add_argument("--profile", choices=LOGS, help="cProfile a log's feed instead")
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    if args.profile:
        profile(args.profile)
        return 0
    header("rules-core instructions per sensor event (valgrind)")
    for name in LOGS:
        events = len(build(name))
        fed = instructions(args.tool, name, "feed")
        built = instructions(args.tool, name, "build")
        print(
            f"{name:8} {events:4d} events: {fed - built:12,d} instructions in the core, "
            f"{(fed - built) / events:9,.0f} per event"
        )
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
