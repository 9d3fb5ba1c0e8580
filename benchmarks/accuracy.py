"""Accuracy on real games: every move, every irregularity, by handling style and by kind.

    python -m benchmarks.accuracy [--games N] [--style-games N] [--injection-games N]
                                  [--handling-games N] [--quick]

Four passes, each through the rules core exactly as the daemon feeds it:

1. mixed: every game of ``../shared/data/games.pgn`` played by the human-handling
   model (``drivers.simulators.handling``, every clean style mixed), with and without a clock;
2. by style: one style at a time (the move in that style wherever it applies, plain
   moves elsewhere), so a regression shows which handling it comes from;
3. by irregularity: each irregularity of the rules tests' generator injected into real
   games, with and without a clock where it exists without one;
4. the handling set (issues 13 and 26): several pieces touched (4.3a/b/c), a promotion
   swapped after 4.4d, a wrong-colour promotion piece, an illegal castling put back slowly,
   the three results signalled with the kings, the board cleared after a signalled result
   and the next game played; an illegal castling with the king unable to move (4.4c), a
   castling without the right pressed with a slow rook, the mover's hand knocking a piece
   after its move, a new game set up after a resignation, both colours touched by an
   illegal move (4.3c), a lone king on a centre square taken back; each in real games,
   with and without a clock.

Counted: moves recognised exactly (ply by ply against the moves the Laws let stand),
games fully exact, irregularities found with the right kind and article, false alarms
(any irregularity nobody made), corrections of an already announced move.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from benchmarks.common import GAMES_PGN, footer, header
from daemon.rules import RulesSettings
from daemon.rules.simulation import run
from drivers.simulators.gamelogs import (
    CLOCK_ONLY,
    EXPECTED,
    INJECTIONS,
    Game,
    injected_log,
    injection_ply,
    lawful_moves,
    read_games,
    set_position_request,
)
from drivers.simulators.handling import ALL, human_sensor_log
from drivers.simulators.handling_cases import HANDLING_CASES, Case, handling_case, handling_ply


@dataclass
class Tally:
    """The counts of one row of a table."""

    games: int = 0
    exact_games: int = 0
    moves: int = 0
    exact_moves: int = 0
    expected_irregularities: int = 0
    found_irregularities: int = 0
    false_alarms: int = 0
    corrections: int = 0
    failures: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in (
            "games",
            "exact_games",
            "moves",
            "exact_moves",
            "expected_irregularities",
            "found_irregularities",
            "false_alarms",
            "corrections",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.failures += other.failures


def _moves_played(out: Sequence) -> list[str]:
    """The feed's moves, corrections applied and takebacks undone (as a viewer sees)."""
    moves: list[str] = []
    for event in out:
        if event.type in ("move", "takeback"):
            del moves[event.ply - 1 :]
            if event.type == "move":
                moves.append(event.uci)
    return moves


def judge(
    game: Game,
    out: Sequence,
    expected: Sequence[tuple[str, str]],
    label: str,
    *,
    flipped: bool = False,
) -> Tally:
    """Compare one replay's feed with what the game and the injection call for."""
    want = lawful_moves(game)
    got = _moves_played(out)
    tally = Tally(games=1, moves=len(want))
    tally.exact_moves = sum(1 for i, uci in enumerate(want) if i < len(got) and got[i] == uci)
    found = Counter((e.kind, e.article) for e in out if e.type == "irregularity")
    wanted = Counter(expected)
    if flipped:  # a board turned round is recognised, not reported as irregular
        wanted_flip = 1
        seen_flip = sum(1 for e in out if e.type == "game_start" and e.flipped)
        tally.expected_irregularities += wanted_flip
        tally.found_irregularities += min(wanted_flip, seen_flip)
    tally.expected_irregularities += sum(wanted.values())
    tally.found_irregularities += sum((found & wanted).values())
    tally.false_alarms = sum((found - wanted).values())
    tally.corrections = sum(1 for e in out if e.type == "move" and e.correction)
    exact = (
        got == want
        and tally.found_irregularities == tally.expected_irregularities
        and tally.false_alarms == 0
    )
    tally.exact_games = int(exact)
    if not exact or tally.corrections:
        first_wrong = next(
            (i for i, uci in enumerate(want) if i >= len(got) or got[i] != uci), None
        )
        tally.failures.append(
            f"{label}: game {game.index}, {len(got)}/{len(want)} moves, first wrong ply "
            f"{None if first_wrong is None else first_wrong + 1}, irregularities "
            f"{sorted(found.elements())[:3]}, corrections {tally.corrections}"
        )
    return tally


def clean_pass(
    games: Sequence[Game], styles: Collection[str], with_clock: bool, label: str
) -> Tally:
    total = Tally()
    for game in games:
        log = human_sensor_log(
            game.start, game.moves, seed=game.index, with_clock=with_clock, styles=styles
        )
        out = run(set_position_request(game) + log, RulesSettings(chess960=True))
        total.add(judge(game, out, [], label))
    return total


def injection_pass(
    games: Sequence[Game], kind: str, with_clock: bool, limit: int, label: str
) -> Tally:
    rng = random.Random(f"{kind}-{with_clock}")
    total = Tally()
    whole_game = kind in ("wrong_setup", "turned_board")
    for game in games:
        if total.games >= limit:
            break
        if whole_game and game.needs_set_position:
            continue
        ply = None if whole_game else injection_ply(game, kind, rng)
        if ply is None and not whole_game:
            continue
        log = injected_log(game, kind, ply, seed=game.index, with_clock=with_clock)
        # with Chess960 allowed, a king and queen swapped is a legal Chess960 start
        settings = RulesSettings(chess960=kind != "wrong_setup")
        out = run(set_position_request(game) + log, settings)
        total.add(judge(game, out, EXPECTED[kind], label, flipped=kind == "turned_board"))
    return total


def judge_case(game: Game, case: Case, out: Sequence, label: str) -> Tally:
    """One handling case: the first game's moves, the irregularities, the end, the next game."""
    starts = [index for index, e in enumerate(out) if e.type == "game_start"]
    second = starts[1] if len(starts) > 1 else len(out)
    got = _moves_played(out[:second])
    want = case.moves
    tally = Tally(games=1, moves=len(want))
    tally.exact_moves = sum(1 for i, uci in enumerate(want) if i < len(got) and got[i] == uci)
    found = Counter((e.kind, e.article) for e in out if e.type == "irregularity")
    found.update(
        ("notice", e.code)
        for e in out
        if e.type == "notice" and e.code == "board_reset" and e.code not in case.allowed_notices
    )
    wanted = Counter(case.irregularities)
    tally.expected_irregularities = sum(wanted.values())
    tally.found_irregularities = sum((found & wanted).values())
    tally.false_alarms = sum((found - wanted).values())
    tally.corrections = sum(1 for e in out if e.type == "move" and e.correction)
    exact = got == want
    if case.result is not None:
        tally.expected_irregularities += 1
        ends = [(e.result, e.reason) for e in out if e.type == "game_end"]
        signalled = ends == [(case.result, "result_on_board")]
        tally.found_irregularities += signalled
        exact = exact and signalled
    if case.next_game_moves is not None:
        tally.moves += len(case.next_game_moves)
        after = _moves_played(out[second:]) if len(starts) == 2 else []
        tally.exact_moves += sum(
            1 for i, uci in enumerate(case.next_game_moves) if i < len(after) and after[i] == uci
        )
        exact = exact and after == case.next_game_moves
    exact = exact and tally.found_irregularities == tally.expected_irregularities
    exact = exact and tally.false_alarms == 0
    tally.exact_games = int(exact)
    if not exact or tally.corrections:
        tally.failures.append(
            f"{label}: game {game.index}, {len(got)}/{len(want)} moves, irregularities "
            f"{sorted(found.elements())[:3]}, corrections {tally.corrections}"
        )
    return tally


def handling_pass(
    games: Sequence[Game], case_name: str, with_clock: bool, limit: int, label: str
) -> Tally:
    rng = random.Random(f"{case_name}-{with_clock}")
    total = Tally()
    for game in games:
        if total.games >= limit:
            break
        if game.needs_set_position:
            continue
        ply = handling_ply(game, case_name, rng)
        if ply is None:
            continue
        case = handling_case(game, case_name, ply, seed=game.index, with_clock=with_clock)
        out = run(case.events, RulesSettings(chess960=True))
        total.add(judge_case(game, case, out, label))
    return total


def percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:7.2f}%" if whole else "      -"


def print_table(title: str, rows: Sequence[tuple[str, Tally]]) -> None:
    print(f"\n{title}")
    print(
        f"{'':48} {'games':>6} {'exact':>8} {'moves':>7} {'exact':>8} "
        f"{'irreg.':>6} {'found':>8} {'false':>5} {'corr.':>5}"
    )
    for name, t in rows:
        print(
            f"{name:48} {t.games:6d} {percent(t.exact_games, t.games)} {t.moves:7d} "
            f"{percent(t.exact_moves, t.moves)} {t.expected_irregularities:6d} "
            f"{percent(t.found_irregularities, t.expected_irregularities)} "
            f"{t.false_alarms:5d} {t.corrections:5d}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=None, help="first N games (default all)")
    parser.add_argument(
        "--style-games", type=int, default=300, help="games per handling style (default 300)"
    )
    parser.add_argument(
        "--injection-games",
        type=int,
        default=300,
        help="games per irregularity kind and clock mode (default 300)",
    )
    parser.add_argument(
        "--handling-games",
        type=int,
        default=100,
        help="games per handling case and clock mode (default 100)",
    )
    parser.add_argument("--quick", action="store_true", help="a few games (smoke test)")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.style_games, args.injection_games = 12, 3, 2
        args.handling_games = 2
    header("accuracy: real games through the human-handling model and the rules core")
    started = time.perf_counter()
    games = read_games(GAMES_PGN, limit=args.games)
    print(f"games: {len(games)} from {GAMES_PGN}")

    mixed = []
    for with_clock in (True, False):
        mode = "with clock" if with_clock else "without clock"
        mixed.append((f"all styles mixed, {mode}", clean_pass(games, ALL, with_clock, mode)))
    print_table("1. every game, every clean handling style mixed", mixed)

    by_style = []
    style_games = games[: args.style_games]
    for style in sorted(ALL):
        styles = {"plain", style}
        tally = Tally()
        for with_clock in (True, False):
            tally.add(clean_pass(style_games, styles, with_clock, f"style {style}"))
        by_style.append((style, tally))
    print_table(
        f"2. by handling style ({len(style_games)} games each, with and without clock)", by_style
    )

    by_kind = []
    for kind in INJECTIONS:
        for with_clock in (True, False):
            if not with_clock and kind in CLOCK_ONLY:
                continue
            mode = "clock" if with_clock else "no clock"
            name = f"{kind} ({mode})"
            by_kind.append(
                (name, injection_pass(games, kind, with_clock, args.injection_games, name))
            )
    print_table(f"3. by irregularity injected (up to {args.injection_games} games each)", by_kind)

    by_case = []
    for case_name in HANDLING_CASES:
        for with_clock in (True, False):
            name = f"{case_name} ({'clock' if with_clock else 'no clock'})"
            by_case.append(
                (name, handling_pass(games, case_name, with_clock, args.handling_games, name))
            )
    print_table(
        f"4. handling set, issues 13 and 26 (up to {args.handling_games} games each; "
        "'irreg.' counts the irregularities and signalled results expected)",
        by_case,
    )

    clean_total, injected_total = Tally(), Tally()
    for _, t in mixed + by_style:
        clean_total.add(t)
    for _, t in by_kind + by_case:
        injected_total.add(t)
    with_clock_corrections = mixed[0][1].corrections + sum(
        t.corrections for name, t in by_kind + by_case if "(clock)" in name
    )
    everything = Tally()
    everything.add(clean_total)
    everything.add(injected_total)
    print(
        "\nsummary (targets: 100.00%, 100.00%, 100.00%, 0 false alarms, 0 corrections with clock)"
    )
    print(
        f"  moves recognised exactly:      {percent(everything.exact_moves, everything.moves)}"
        f" of {everything.moves}"
    )
    print(
        f"  games fully exact:             {percent(everything.exact_games, everything.games)}"
        f" of {everything.games}"
    )
    print(
        f"  irregularities right kind/art: "
        f"{percent(injected_total.found_irregularities, injected_total.expected_irregularities)}"
        f" of {injected_total.expected_irregularities}"
    )
    print(f"  false alarms:                  {everything.false_alarms}")
    print(f"  corrections (with a clock):    {with_clock_corrections}")
    print(f"  corrections (all runs):        {everything.corrections}")
    if everything.failures:
        print(f"\nfirst failures ({len(everything.failures)} in all):")
        for line in everything.failures[:15]:
            print(f"  {line}")
    print(f"\nelapsed: {time.perf_counter() - started:.1f} s")
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
