"""A daemon killed and started again while the players play on: at which moments does
the game come back whole? (issue 28, found by ``pihall --restart-at``)

    python -m benchmarks.restart_moments [--moments 0,0.25,...] [--game N] [--after PLY]
                                         [--plies N] [--quick]

One game of ``config/games/demo.pgn`` (``--game``) is played by human hands with a
clock (the emulator, at 20x up to ``--after``, each move decided at its press). Then
the daemon is killed (SIGKILL) and the hands play on at their own pace; the daemon is
started again ``moment`` seconds later (the real settle time, 0.6 s) and must decide
every later move: each moment's line says whether the PGN is whole, or the first
irregularity or notice the daemon gave and the ply it reached. A restart lands in a
different part of a move at each moment: between moves, a piece in the hand or set
down on its way, a move made and its press not, a move and its reply both made.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.common import footer, header
from benchmarks.daemonrun import (
    BRISK,
    FeedTimeout,
    RunningDaemon,
    daemon_env,
    killed_after,
    pgn_moves,
    press_indices,
    shipped_games,
)
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.handling import human_sensor_log


def one_moment(work: Path, game: int, after: int, plies: int, moment: float) -> str:
    """The game killed after move ``after``, the daemon back ``moment`` s later."""
    chosen = shipped_games()[game - 1]
    moves = list(chosen.mainline_moves())[:plies]
    log = human_sensor_log(chosen.board(), moves, seed=21, with_clock=True, timing=BRISK)
    storage = work / "games"
    with BoardEmulator(work) as emulator:
        daemon = killed_after(emulator, storage, log, after)
        try:
            emulator.play(log[press_indices(log)[after - 1] :], speed=1.0)  # play on
            time.sleep(moment)
            daemon = RunningDaemon(emulator.port_path, storage, daemon_env(0.6))
            emulator.wait_played(300)
            with contextlib.suppress(FeedTimeout):  # the verdict is the journal's
                daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == len(moves), 20)
        finally:
            daemon.stop()
            seen: list[dict] = list(daemon.seen)
    [journal] = sorted(storage.glob("*.jsonl"))
    if pgn_moves(journal) == [m.uci() for m in moves]:
        return "whole"
    wrong = next((e for e in seen if e["type"] in ("irregularity", "notice")), None)
    reached = max((e["ply"] for e in seen if e["type"] == "move"), default=after)
    what = (wrong.get("kind") or wrong.get("code")) if wrong else "no decision"
    return f"NOT WHOLE: reached ply {reached} of {len(moves)}; first: {what}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moments", default=",".join(str(x / 4) for x in range(25)),
                        help="seconds after the kill it starts again (0 to 6 s)")  # fmt: skip
    parser.add_argument("--game", type=int, default=1, help="game of demo.pgn (1)")
    parser.add_argument("--after", type=int, default=12, help="the kill after this ply (12)")
    parser.add_argument("--plies", type=int, default=20, help="plies played in all (20)")
    parser.add_argument("--quick", action="store_true", help="one moment, 16 plies")
    args = parser.parse_args(argv)
    moments = [1.0] if args.quick else [float(m) for m in args.moments.split(",")]
    plies = 16 if args.quick else args.plies
    header(f"a daemon restarted while the players play on: game {args.game}, killed after "
           f"ply {args.after}, back 0-{max(moments):g} s later")  # fmt: skip
    whole = 0
    for moment in moments:
        with tempfile.TemporaryDirectory(prefix="dgt-restart-") as work:
            found = one_moment(Path(work), args.game, args.after, plies, moment)
        whole += found == "whole"
        print(f"back after {moment:4.2f} s: {found}", flush=True)
    print(f"whole: {whole} of {len(moments)} moments")
    footer()
    return 0 if whole == len(moments) else 1


if __name__ == "__main__":
    raise SystemExit(main())
