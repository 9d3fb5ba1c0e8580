"""Shared helpers of the rules-core tests: run a log, read the feed, inject irregularities."""

from __future__ import annotations

from collections.abc import Sequence

import chess
import chess.pgn

from daemon.game.events import DomainEvent
from daemon.rules import RulesSettings
from daemon.rules.simulation import run
from drivers.sensors import BoardDump, ClockReport, Request, SensorEvent, SquareChange
from drivers.simulators.gamelogs import (
    CLEAN,
    CLOCK_ONLY,
    EXPECTED,
    INJECTIONS,
    Game,
    dump_of,
    injected_log,
    injection_ply,
    lawful_moves,
    read_games,
    set_position_request,
)

__all__ = [
    "CLEAN",
    "CLOCK_ONLY",
    "EXPECTED",
    "INJECTIONS",
    "Game",
    "Script",
    "dump_of",
    "game",
    "injected_log",
    "injection_ply",
    "kinds",
    "lawful_moves",
    "of_type",
    "played",
    "read_games",
    "run",
    "set_position_request",
    "settings",
]


def played(out: Sequence[DomainEvent]) -> list[str]:
    """The moves of the feed (UCI), corrections applied, takebacks undone."""
    moves: list[str] = []
    for event in out:
        if event.type == "move":
            del moves[event.ply - 1 :]  # type: ignore[attr-defined]
            moves.append(event.uci)  # type: ignore[attr-defined]
        elif event.type == "takeback":
            del moves[event.ply - 1 :]  # type: ignore[attr-defined]
    return moves


def kinds(out: Sequence[DomainEvent], type_: str = "irregularity") -> list[tuple[str, str]]:
    return [(e.kind, e.article) for e in out if e.type == type_]  # type: ignore[attr-defined]


def of_type(out: Sequence[DomainEvent], type_: str) -> list[DomainEvent]:
    return [e for e in out if e.type == type_]


class Script:
    """Hand-written sensor logs: ``Script().start().move("e2", "e4").press()``."""

    def __init__(self, fen: str | None = None, flipped: bool = False) -> None:
        self.t = 0.0
        self.events: list[SensorEvent] = []
        self.board = chess.Board(fen) if fen else chess.Board()
        self.pieces = {s: p.symbol() for s, p in self.board.piece_map().items()}
        self.flipped = flipped
        self.clock = {"white": 300.0, "black": 300.0}
        self.running: str | None = None

    def _raw(self, name: str) -> str:
        square = chess.parse_square(name)
        return chess.square_name(63 - square if self.flipped else square)

    def wait(self, seconds: float = 0.25) -> Script:
        self.t += seconds
        return self

    def dump(self) -> Script:
        base = chess.BaseBoard.empty()
        for square, symbol in self.pieces.items():
            shown = 63 - square if self.flipped else square
            base.set_piece_at(shown, chess.Piece.from_symbol(symbol))
        self.events.append(BoardDump(self.t, base.board_fen()))
        return self

    def lift(self, square: str, after: float = 0.25) -> Script:
        self.pieces.pop(chess.parse_square(square), None)
        self.events.append(SquareChange(self.t, self._raw(square), None))
        return self.wait(after)

    def put(self, square: str, piece: str, after: float = 0.25) -> Script:
        self.pieces[chess.parse_square(square)] = piece
        self.events.append(SquareChange(self.t, self._raw(square), piece))
        return self.wait(after)

    def move(self, frm: str, to: str, piece: str | None = None) -> Script:
        """Lift and set down (any captured piece must already be gone)."""
        symbol = piece or self.pieces[chess.parse_square(frm)]
        return self.lift(frm).put(to, symbol)

    def start_clock(self, running: str = "white") -> Script:
        self.running = running
        return self.report()

    def report(self, flags: tuple[str, ...] = ()) -> Script:
        self.events.append(
            ClockReport(self.t, self.clock["white"], self.clock["black"], self.running, flags)
        )
        return self

    def press(self) -> Script:
        assert self.running
        self.clock[self.running] -= 2.0
        self.running = "black" if self.running == "white" else "white"
        self.report()
        return self.wait()

    def request(self, action: str, **args) -> Script:
        self.events.append(Request(self.t, action, dict(args)))
        return self

    def settle(self) -> Script:
        return self.wait(1.5)

    def done(self, clock: bool) -> Script:
        """Complete the move as the game is played: the press, or the settle time."""
        return self.press() if clock else self.settle()


def game(clock: bool, fen: str | None = None) -> Script:
    """A script that opens a game (set up from ``fen``), with its clock running or none."""
    script = Script(fen)
    if fen:
        script.request("set_position", fen=fen)
    script.dump()
    if clock:
        script.start_clock("white" if script.board.turn else "black")
    return script.wait(0.5)


def settings(clock: bool, **changes) -> RulesSettings:
    return RulesSettings(use_clock=clock, **changes)
