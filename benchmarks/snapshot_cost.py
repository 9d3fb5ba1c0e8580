"""What a viewer that connects mid-round costs the daemon, in CPU: its snapshot (or,
resuming, what it missed), and what a scraper's read costs: ``/state.json`` and
``/game.pgn``.

    python -m benchmarks.snapshot_cost [--boards N] [--plies N] [--viewers N] [--quick]

The page asks for every board's state when its feed opens (``/events?state=1``),
and again each time it reopens: after a Wi-Fi blip, a hall's phones all do at
once. A broadcast site polls ``/game.pgn`` every few seconds. A round of real games
(``../shared/data/games.pgn``, distinct openings) is published on ``--boards``
boards, a move and a clock report at a time, each board in turn, as a hall's feed
goes; after each board's move ``--viewers`` viewers connect (``Hub.snapshot`` of
every board, what a new viewer is sent), as many resume from the number before that
move (``Hub.resumed``: what a page reopened after a Wi-Fi blip is sent, with
``Last-Event-ID``), and as many reads of ``/state.json``
(``Hub.state_json``) and of ``/game.pgn`` (``Hub.pgn``) are made. The two reads are
also made afresh, as the handlers made them before the hub kept them (each board's
page state dumped; each board's ``GameRecord.pgn``), in the same run. Each is timed
with this thread's CPU clock; the median, the 99th percentile and the whole storm's
cost after the round's last move are shown, and what one of each sends there.
Another tree (its snapshot only): ``PYTHONPATH=<tree> python -m
benchmarks.snapshot_cost``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable, Sequence

import chess

from benchmarks.common import GAMES_PGN, footer, header, percentile
from benchmarks.permove import move_events
from daemon.broadcast import strictjson
from daemon.broadcast.hub import Hub
from daemon.broadcast.settings import BroadcastSettings
from drivers.simulators.gamelogs import distinct_openings

Read = Callable[[Hub], object]
#: What each read is made of: as the handlers make it now, and made afresh.
READS: dict[str, Read] = {
    "snapshot": lambda hub: hub.snapshot(),
    "/state.json": lambda hub: hub.state_json(hub.board_ids()),
    "/state.json afresh": lambda hub: strictjson.dumps(
        {"seq": hub.seq, "boards": {b: hub.page_state(b) for b in hub.board_ids()}}
    ),
    "/game.pgn": lambda hub: hub.pgn(),
    "/game.pgn afresh": lambda hub: "\n".join(hub.boards[b].record.pgn() for b in hub.board_ids()),
}


def _sent(made: object) -> int:
    """The characters a read sends: its text, or its messages' data."""
    if isinstance(made, str):
        return len(made)
    if isinstance(made, list):
        return sum(_sent(m) for m in made)
    return len(getattr(made, "data", ""))


async def read_costs(
    boards: int, plies: int, viewers: int
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Each read's CPU seconds over a round, by kind, and what each sent after the
    round's last move (characters)."""
    hub = Hub(BroadcastSettings())
    page = hub.subscribe(with_state=True)  # the page's viewers: each event's state is made
    games = [list(move_events(g)) for g in distinct_openings(GAMES_PGN, boards, plies)]
    for number in range(boards):
        hub.publish(str(number + 1), {"t": 0.0, "type": "game_start", "fen": chess.STARTING_FEN})
    reads = {name: read for name, read in READS.items() if name == "snapshot" or
             hasattr(hub, "state_json")}  # fmt: skip
    if hasattr(hub, "resumed"):
        reads["resumed (what it missed)"] = lambda hub: hub.resumed(page, before)
    costs: dict[str, list[float]] = {name: [] for name in reads}
    sizes: dict[str, int] = {}
    for ply in range(max(len(g) for g in games)):
        for number, game in enumerate(games):
            if ply >= len(game):
                continue
            move = game[ply].to_dict()
            board = str(number + 1)
            before = hub.seq
            hub.publish(board, move)
            clock = move.get("clock") or {"white": 100.0, "black": 100.0}
            running = "black" if move["by"] == "white" else "white"
            report = {"type": "clock", "t": move["t"] + 0.01, **clock, "running": running}
            hub.publish(board, report)
            for name, read in reads.items():
                for _ in range(viewers):
                    start = time.thread_time_ns()
                    made = read(hub)
                    costs[name].append((time.thread_time_ns() - start) / 1e9)
                sizes[name] = _sent(made)
    return costs, sizes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--boards", type=int, default=26, help="boards (26: a Pi 4 hall)")
    parser.add_argument("--plies", type=int, default=30, help="plies a game at most (30)")
    parser.add_argument("--viewers", type=int, default=100, help="viewers after each move (100)")
    parser.add_argument("--quick", action="store_true", help="3 boards, 6 plies, 3 viewers")
    args = parser.parse_args(argv)
    if args.quick:
        args.boards, args.plies, args.viewers = 3, 6, 3
    header(f"a new viewer's snapshot and a scraper's reads mid-round: {args.boards} boards, "
           f"{args.plies} plies, {args.viewers} of each after each move")  # fmt: skip
    costs, sizes = asyncio.run(read_costs(args.boards, args.plies, args.viewers))
    print(f"reads of each kind: {len(costs['snapshot'])}")
    print("| read | median (µs) | p99 (µs) | a storm of "
          f"{args.viewers} after the round's last move (ms of CPU) | "
          "one sends then (kB) |")  # fmt: skip
    print("|---|---|---|---|---|")
    for name, spent in costs.items():
        storm = sum(spent[-args.viewers :])
        print(f"| {name} | {statistics.median(spent) * 1e6:,.0f} | "
              f"{percentile(spent, 0.99) * 1e6:,.0f} | {storm * 1e3:.1f} | "
              f"{sizes[name] / 1e3:.1f} |")  # fmt: skip
    footer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
