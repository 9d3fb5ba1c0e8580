"""The bus's own share of the press -> move lag: the poll order on a 9600-baud line.

    python -m benchmarks.bus_order [--boards 12] [--plies 26] [--sets 6] [--react 0.002,0.006,0.010]
                                   [--quick]

Simulated time, no daemon and no CPU quota: ``drivers.dgt.bus.BusPoller`` (the poller
the daemon runs) polls a chain of boards, each playing a different real game of
``../shared/data/games.pgn`` at blitz pace (the human-handling model's thinking and
handling times, a 3+2 clock), on a line that takes its real time: 10 bits a byte at
9600 baud, each command and its reply in turn, the board's 2 ms turnaround, and
``--react`` seconds of the daemon's own reaction per command (reading the reply,
deciding, writing the next command: ~2 ms at full speed here, more on a Pi's budget,
where the group waits for its quota). Each of ``--sets`` chains plays other games
with other hands. Measured: a lever press -> the change list that holds it on its way
to the daemon, p50/p99/p99.9/max over every set, and each set's worst board's p99
(the hall's target is on every board), with the poll order as shipped, with every
board in its turn only (``press_window`` 0, the order before issue 19's third round),
without deferring the clock readings and quiet dumps while a press is awaited, and
with each clock read every second between presses, and with an awaited press's wait
counted twice (both as before issue 28's last round) or four times; and the commands
a second by kind (the line's budget).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import chess

from benchmarks.common import GAMES_PGN, footer, header, percentile
from drivers.dgt import buscodec
from drivers.dgt.bus import BusPoller, BusTimings
from drivers.dgt.buscodec import BusCommand, BusReplyId
from drivers.dgt.protocol import (
    CODE_BY_PIECE,
    ClockSideTime,
    EeClockTime,
    bwtime_times_data,
    codes_from_placement,
    square_index,
)
from drivers.sensors import ClockReport, SquareChange
from drivers.simulators.gamelogs import distinct_openings
from drivers.simulators.handling import human_sensor_log

BYTE = 10 / 9600  # seconds a byte takes on the line
TURNAROUND = 0.002  # a board's, before it answers
START = codes_from_placement("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR")


@dataclass
class Board:
    """One board of the chain as the line sees it: its change list and its clock."""

    address: int
    codes: bytearray = field(default_factory=lambda: bytearray(START))
    changes: list[tuple[int, int] | EeClockTime] = field(default_factory=list)
    last: bytes = b""
    white_to_move: bool = True
    times: dict[str, int] = field(default_factory=lambda: {"white": 180, "black": 180})
    pressed_at: list[float] = field(default_factory=list)  # presses not yet sent

    def set_square(self, square: str, piece: str | None) -> None:
        index, code = square_index(square), CODE_BY_PIECE[piece] if piece else 0
        self.codes[index] = code
        self.changes.append((index, code))

    def press(self, t: float, report: ClockReport) -> None:
        presser = "white" if self.white_to_move else "black"
        seconds = int(getattr(report, presser))
        self.times[presser] = seconds
        self.changes.append(EeClockTime(presser == "white", 0, seconds // 60, seconds % 60))
        self.white_to_move = not self.white_to_move
        self.pressed_at.append(t)

    def answer(self, command: BusCommand) -> bytes:
        if command == BusCommand.SEND_CHANGES:
            self.last, self.changes = buscodec.encode_changes(self.changes), []
            return buscodec.encode_reply(BusReplyId.UPDATE, self.address, self.last)
        if command == BusCommand.REPEAT_CHANGES:
            return buscodec.encode_reply(BusReplyId.UPDATE, self.address, self.last)
        if command == BusCommand.SEND_BRD:
            return buscodec.encode_reply(BusReplyId.BRD_DUMP, self.address, bytes(self.codes))
        if command == BusCommand.SEND_CLK:
            white, black = (_side(self.times[c]) for c in ("white", "black"))
            data = bwtime_times_data(
                white, black, running=True, lever_right_high=not self.white_to_move,
                left_to_move=self.white_to_move, right_to_move=not self.white_to_move,
            )  # fmt: skip
            return buscodec.encode_reply(BusReplyId.BWTIME, self.address, data)
        if command == BusCommand.SEND_VERSION:
            return buscodec.encode_reply(BusReplyId.VERSION, self.address, bytes([1, 7]))
        return buscodec.encode_reply(BusReplyId.PING, self.address)


def _side(seconds: int) -> ClockSideTime:
    return ClockSideTime(0, seconds // 60, seconds % 60, False, False, False)


def plan_of(boards: int, plies: int, game_set: int = 0) -> list[tuple[float, int, object]]:
    """(time, board index, what happens) for every board's game, from 5 s on: set
    ``game_set`` of the file's distinct games (another set: other games, other hands)."""
    plan: list[tuple[float, int, object]] = []
    games = distinct_openings(GAMES_PGN, boards * (game_set + 1), plies)[boards * game_set :]
    for i, game in enumerate(games):
        seed = 1 + i + 100 * game_set
        log = human_sensor_log(
            chess.Board(), game, seed=seed, with_clock=True, clock_seconds=180, increment=2
        )
        t0, running = log[0].t, None
        for event in log:
            if isinstance(event, SquareChange):
                plan.append((5.0 + event.t - t0, i, event))
            elif isinstance(event, ClockReport):
                if running is not None and event.running not in (None, running):
                    plan.append((5.0 + event.t - t0, i, event))  # a lever press
                running = event.running
    plan.sort(key=lambda item: item[0])
    return plan


class SimulatedLine:
    """The poller (``BusPoller``, as the daemon runs it) and a chain of emulated boards
    on a 9600-baud line in simulated time: ``step()`` is one command, its board's
    answer and the reply fed back (or the wait until something is due)."""

    def __init__(self, timings: BusTimings, boards: int) -> None:
        self.chain = [Board(1025 + i) for i in range(boards)]
        self.by_address = {b.address: b for b in self.chain}
        self.poller = BusPoller([b.address for b in self.chain], timings, discover=False)
        self.t = 0.0

    def step(
        self, react: float, asked: Callable[[Board, BusCommand, float], None] | None = None
    ) -> None:
        """One command on the line; ``asked(board, command, t)`` hears it as it reaches
        its board (before the board answers), ``react`` is the daemon's own time after
        the reply."""
        poller, t = self.poller, self.t
        poller.expire(t)
        frame = poller.next_command(t)
        if frame is None:
            self.t = max(t + 0.001, poller.idle_until(t))
            return
        board = self.by_address.get((frame[1] << 7) | frame[2]) if len(frame) == 4 else None
        if board is None:  # the one-byte switch into bus mode
            self.t = t + len(frame) * BYTE
            return
        command = BusCommand(frame[0])
        on_its_way = t + len(frame) * BYTE + TURNAROUND
        if asked is not None:
            asked(board, command, on_its_way)
        reply = board.answer(command)
        self.t = on_its_way + len(reply) * BYTE + react
        poller.feed(reply, self.t)


def simulate(
    timings: BusTimings, boards: int, plies: int, react: float, game_set: int = 0
) -> tuple[dict[int, list[float]], dict[str, float]]:
    """Every press's wait for the change list that holds it, by board; commands a
    second by kind."""
    line = SimulatedLine(timings, boards)
    plan = plan_of(boards, plies, game_set)
    end = plan[-1][0] + 3.0
    waits: dict[int, list[float]] = {b.address: [] for b in line.chain}

    def asked(board: Board, command: BusCommand, on_its_way: float) -> None:
        if command == BusCommand.SEND_CHANGES:
            presses = sum(isinstance(c, EeClockTime) for c in board.changes)
            waits[board.address] += [on_its_way - board.pressed_at.pop(0) for _ in range(presses)]

    while line.t < end:
        while plan and plan[0][0] <= line.t:
            at, index, event = plan.pop(0)
            if isinstance(event, SquareChange):
                line.chain[index].set_square(event.square, event.piece)
            elif isinstance(event, ClockReport):
                line.chain[index].press(at, event)
        line.step(react, asked)
    rates = {name: count / line.t for name, count in line.poller.stats.by_command.items()}
    return waits, rates


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=12, help="boards on the chain (12)")
    parser.add_argument("--plies", type=int, default=26, help="plies of each game (26)")
    parser.add_argument("--sets", type=int, default=6, help="sets of games, each a chain (6)")
    parser.add_argument(
        "--react", default="0.002,0.006,0.010", help="the daemon's reaction per command, s"
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks the plumbing")
    args = parser.parse_args(argv)
    if args.quick:
        args.boards, args.plies, args.react, args.sets = 3, 6, "0.002", 1
    header("the bus's poll order: press -> its change list on a 9600-baud line (simulated)")
    shipped = BusTimings(discovery_interval=0)
    orders = {"shipped": shipped, "in turn only": replace(shipped, press_window=0)}
    if hasattr(shipped, "housekeeping_defer"):  # absent before issue 28's poll order
        orders["clock and dumps not deferred"] = replace(shipped, housekeeping_defer=0.0)
    if shipped.clock_interval != 1.0:
        orders["clocks read every 1 s"] = replace(shipped, clock_interval=1.0)
    for weight in (2.0, 4.0):  # the press's weight before issue 28's last round, and more
        if shipped.press_weight != weight:
            orders[f"press weight {weight:g}"] = replace(shipped, press_weight=weight)
    print(
        f"{args.boards} boards, {args.plies} plies each, blitz (3+2), {args.sets} sets of "
        f"games; {shipped}"
    )
    print(
        "| reaction per command | poll order | presses | p50 / p99 / p99.9 / max (ms) "
        "| worst board's p99, each set (ms) | commands/s |"
    )
    print("|---|---|---|---|---|---|")
    for react in (float(r) for r in args.react.split(",") if r):
        for name, timings in orders.items():
            every: list[float] = []
            worst: list[float] = []
            for game_set in range(args.sets):
                by_board, rates = simulate(timings, args.boards, args.plies, react, game_set)
                every += [w for waits in by_board.values() for w in waits]
                worst.append(max(percentile(sorted(w), 0.99) for w in by_board.values() if w))
            every.sort()
            shown = [percentile(every, q) for q in (0.5, 0.99, 0.999)] + [every[-1]]
            figures = " / ".join(f"{1000 * v:.0f}" for v in shown)
            boards = " ".join(f"{1000 * v:.0f}" for v in worst)
            kinds = ", ".join(f"{k} {v:.1f}" for k, v in sorted(rates.items()) if v >= 0.05)
            row = (f"{1000 * react:.0f} ms", name, str(len(every)), figures, boards, kinds)
            print("| " + " | ".join(row) + " |")
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
