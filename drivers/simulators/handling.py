"""A model of human hands on a DGT board: a game in, a realistic sensor log out.

``human_sensor_log`` plays a game "as a human would": thinking, lifting,
sliding through squares, adjusting a piece, setting the new square down before
the old one reads empty, capturing in all three orders (victim first, capturer
first, the victim's code replaced directly by the capturer's), parking a
captured piece for a moment on a neighbouring square on its way off the board,
castling king first or with both pieces in hand, en passant in both orders,
promotion directly, via the pawn on the last rank or with the new piece set
down before the pawn is lifted, the mover re-centring the piece he has just
released (after his press), with a clock press after each move or without a
clock. The board is scanned about every 0.2 s, so
changes are spaced by that much. A seed makes every log reproducible.

It knows no rules beyond which squares a move changes (python-chess tells);
deciding what is a move is the rules core's job, and this model is what the
core is tested against. ``castle_rook_first`` (an irregularity by 4.4b) is a
style you may ask for; it is not part of ``ALL``.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import chess

from drivers.records import FrozenRecord
from drivers.sensors import BoardDump, ClockReport, SensorEvent, SquareChange

#: Every clean handling style: none of them is an irregularity.
ALL = frozenset(
    {
        "plain",
        "slide",
        "early_place",
        "adjust",
        "capture_victim_first",
        "capture_capturer_first",
        "capture_direct",
        "capture_park",
        "castle_king_first",
        "castle_together",
        "ep_victim_first",
        "ep_pawn_first",
        "promote_direct",
        "promote_via_pawn",
        "promote_piece_first",
        "recentre",
        "fast_reply",
    }
)
#: Styles that break a Law on purpose (for tests of the rules core).
IRREGULAR = frozenset({"castle_rook_first"})

_CAPTURES = ("capture_victim_first", "capture_capturer_first", "capture_direct", "capture_park")
_CASTLES = ("castle_king_first", "castle_together", "castle_rook_first")
_EP = ("ep_victim_first", "ep_pawn_first")
_PROMOTIONS = ("promote_direct", "promote_via_pawn", "promote_piece_first")

SCAN = 0.2  # seconds between two board scans, roughly


@dataclass(eq=False, repr=False, slots=True)
class Timing(FrozenRecord):
    """How long things take, in seconds (uniform ranges)."""

    think: tuple[float, float] = (0.8, 3.0)
    fast_think: tuple[float, float] = (0.05, 0.3)
    step: tuple[float, float] = (SCAN * 0.9, SCAN * 2.2)
    park: tuple[float, float] = (0.15, 0.35)
    before_press: tuple[float, float] = (0.15, 0.6)


class Hands:
    """The physical board and the time, as a player's hands change them.

    Useful on its own to script a test: ``lift``, ``put``, ``wait`` and
    ``press`` append sensor events; ``play`` makes one move in a chosen style.
    """

    def __init__(
        self,
        start: chess.Board,
        *,
        seed: int,
        with_clock: bool,
        start_time: float = 0.0,
        clock_seconds: float = 5400.0,
        increment: float = 30.0,
        flipped: bool = False,
        timing: Timing | None = None,
        initial_dump: bool = True,
    ) -> None:
        self.rng = random.Random(seed)
        self.board = start.copy()
        self.pieces: dict[int, str] = {s: p.symbol() for s, p in start.piece_map().items()}
        self.t = start_time
        self.flipped = flipped
        self.timing = timing or Timing()
        self.events: list[SensorEvent] = []
        self.with_clock = with_clock
        self.times = {"white": clock_seconds, "black": clock_seconds}
        self.increment = increment
        self.running: str | None = None
        self.turn_started = start_time
        self._moving = ""
        if initial_dump:
            self.dump()
        if with_clock:
            self.clock_report()
            self.wait(0.1)
            self.running = "white" if start.turn == chess.WHITE else "black"
            self.turn_started = self.t
            self.clock_report()

    # -- primitive actions ---------------------------------------------------------

    def _raw(self, square: int) -> str:
        return chess.square_name(63 - square if self.flipped else square)

    def dump(self) -> None:
        board = chess.BaseBoard.empty()
        for square, symbol in self.pieces.items():
            board.set_piece_at(square, chess.Piece.from_symbol(symbol))
        placement = board.transform(chess.flip_vertical).transform(chess.flip_horizontal)
        shown = placement if self.flipped else board
        self.events.append(BoardDump(round(self.t, 3), shown.board_fen()))

    def wait(self, seconds: float) -> None:
        self.t += seconds

    def step(self) -> None:
        self.wait(self.rng.uniform(*self.timing.step))

    def lift(self, square: int) -> str:
        piece = self.pieces.pop(square)
        self.events.append(SquareChange(round(self.t, 3), self._raw(square), None))
        return piece

    def put(self, square: int, piece: str) -> None:
        if self.pieces.get(square) == piece:
            return
        self.pieces[square] = piece
        self.events.append(SquareChange(round(self.t, 3), self._raw(square), piece))

    def _elapsed(self) -> float:
        return self.t - self.turn_started

    def clock_report(self, flags: tuple[str, ...] = ()) -> None:
        times = dict(self.times)
        if self.running:
            times[self.running] = max(0.0, times[self.running] - self._elapsed())
        self.events.append(
            ClockReport(
                round(self.t, 3),
                round(times["white"], 1),
                round(times["black"], 1),
                # Both hold colour names only ("white", "black"), typed as str here.
                self.running,  # type: ignore[arg-type]
                flags,  # type: ignore[arg-type]
            )
        )

    def press(self) -> None:
        """The player on move stops his clock and starts the opponent's (6.7)."""
        if not self.running:
            return
        mover = self.running
        self.times[mover] = max(0.0, self.times[mover] - self._elapsed()) + self.increment
        self.running = "black" if mover == "white" else "white"
        self.turn_started = self.t
        self.clock_report()

    def think(self, fast: bool = False) -> None:
        low, high = self.timing.fast_think if fast else self.timing.think
        seconds = self.rng.uniform(low, high)
        if self.with_clock and self.running and seconds > 1.0 and self.rng.random() < 0.3:
            self.wait(seconds / 2)
            self.clock_report()
            self.wait(seconds / 2)
        else:
            self.wait(seconds)

    # -- one move ------------------------------------------------------------------

    def _neighbour_empty(self, square: int) -> int | None:
        around = [s for s in chess.SquareSet(chess.BB_KING_ATTACKS[square]) if s not in self.pieces]
        return self.rng.choice(sorted(around)) if around else None

    def _slide_path(self, move: chess.Move) -> list[int]:
        piece = self.board.piece_type_at(move.from_square)
        if piece not in (chess.BISHOP, chess.ROOK, chess.QUEEN):
            return []
        between = list(chess.SquareSet.between(move.from_square, move.to_square))
        if move.to_square < move.from_square:
            between.reverse()
        return [s for s in between if s not in self.pieces]

    def _adjust(self, move: chess.Move, styles: Collection[str]) -> None:
        """J'adoube: lift a piece and put it back, one that cannot count against 4.3."""
        if "adjust" not in styles or self.rng.random() > 0.08:
            return
        movable = {m.from_square for m in self.board.legal_moves}
        stuck = [s for s in self.board.pieces(chess.PAWN, self.board.turn) if s not in movable]
        square = move.from_square
        if stuck and self.rng.random() < 0.3 and not self.board.is_castling(move):
            square = self.rng.choice(sorted(stuck))
            if self.board.is_capture(move):
                return  # the victim must stay the first touched opposing piece
        piece = self.lift(square)
        self.step()
        self.put(square, piece)
        self.step()

    def _choose(self, options: Sequence[str], styles: Collection[str], default: str) -> str:
        allowed = [o for o in options if o in styles]
        return self.rng.choice(allowed) if allowed else default

    def play(self, move: chess.Move, styles: Collection[str] = ALL) -> None:
        """Make ``move`` on the physical board, in one of the allowed styles."""
        board = self.board
        self._adjust(move, styles)
        if board.is_castling(move):
            self._castle(move, styles)
        elif board.is_en_passant(move):
            self._en_passant(move, styles)
        else:
            self._ordinary(move, styles)
        board.push(move)

    def _placed_piece(self, move: chess.Move) -> str:
        if move.promotion:
            symbol = chess.piece_symbol(move.promotion)
            return symbol.upper() if self.board.turn == chess.WHITE else symbol
        return self.pieces[move.from_square]

    def _travel(self, move: chess.Move, styles: Collection[str]) -> None:
        """Carry the lifted piece over the squares on its way (the board sees them)."""
        if "slide" not in styles or self.rng.random() > 0.3:
            return
        piece = self.pieces.get(move.from_square) or self._moving
        for square in self._slide_path(move):
            self.put(square, piece)
            self.step()
            self.lift(square)
            self.step()

    def recentre(self, square: int) -> None:
        """The mover's hand goes back to the piece it has just released and sets it
        straight (lifted and put back within a fraction of a second)."""
        piece = self.pieces.get(square)
        if piece is None:
            return
        self.wait(self.rng.uniform(0.05, 0.3))
        self.lift(square)
        self.wait(self.rng.uniform(0.1, 0.3))
        self.put(square, piece)

    def _promote_piece_first(self, move: chess.Move, new_piece: str) -> None:
        """The new piece set on the promotion square first, then the pawn taken away
        (4.6: in any order); a victim there is lifted first or its code replaced."""
        frm, to = move.from_square, move.to_square
        if to in self.pieces and self.rng.random() < 0.5:
            self.lift(to)
            self.step()
        self.put(to, new_piece)
        self.wait(self.rng.uniform(0.2, 0.6))
        self.lift(frm)

    def _ordinary(self, move: chess.Move, styles: Collection[str]) -> None:
        frm, to = move.from_square, move.to_square
        new_piece = self._placed_piece(move)
        pawn = self.pieces[frm]
        self._moving = pawn
        promotion_style = (
            self._choose(_PROMOTIONS, styles, "promote_direct") if move.promotion else ""
        )
        if promotion_style == "promote_piece_first":
            self._promote_piece_first(move, new_piece)
            return
        via_pawn = promotion_style == "promote_via_pawn"
        first_landing = pawn if via_pawn else new_piece
        if to in self.pieces:  # a capture
            style = self._choose(_CAPTURES, styles, "capture_victim_first")
            if style == "capture_victim_first":
                victim = self.lift(to)
                self.step()
                self.lift(frm)
                self.step()
                self._travel(move, styles)
                self.put(to, first_landing)
            elif style == "capture_capturer_first":
                self.lift(frm)
                self.step()
                self._travel(move, styles)
                victim = self.lift(to)
                self.step()
                self.put(to, first_landing)
            else:
                self.lift(frm)
                self.step()
                self._travel(move, styles)
                victim = self.pieces[to]
                self.put(to, first_landing)  # the code changes straight to the capturer's
                if style == "capture_park":
                    parking = self._neighbour_empty(to)
                    if parking is not None:
                        self.wait(self.rng.uniform(*self.timing.park))
                        self.put(parking, victim)
                        self.wait(self.rng.uniform(*self.timing.park))
                        self.lift(parking)
            del victim
        elif "early_place" in styles and not via_pawn and self.rng.random() < 0.15:
            self.put(to, new_piece)  # the new square reads before the old one is empty
            self.wait(self.rng.uniform(0.05, SCAN))
            self.lift(frm)
        else:
            self.lift(frm)
            self.step()
            self._travel(move, styles)
            self.put(to, first_landing)
        if via_pawn:
            self.wait(self.rng.uniform(0.3, 1.0))
            if self.rng.random() < 0.5:
                self.lift(to)
                self.step()
            self.put(to, new_piece)

    def _en_passant(self, move: chess.Move, styles: Collection[str]) -> None:
        frm, to = move.from_square, move.to_square
        victim_square = to - 8 if self.board.turn == chess.WHITE else to + 8
        pawn = self.pieces[frm]
        if self._choose(_EP, styles, "ep_victim_first") == "ep_victim_first":
            self.lift(victim_square)
            self.step()
            self.lift(frm)
            self.step()
            self.put(to, pawn)
        else:
            self.lift(frm)
            self.step()
            self.put(to, pawn)
            self.step()
            self.lift(victim_square)

    def _castle(self, move: chess.Move, styles: Collection[str]) -> None:
        board = self.board
        king_from = move.from_square
        rank = chess.square_rank(king_from)
        kingside = board.is_kingside_castling(move)
        rook_from = move.to_square if board.chess960 else chess.square(7 if kingside else 0, rank)
        king_to = chess.square(6 if kingside else 2, rank)
        rook_to = chess.square(5 if kingside else 3, rank)
        style = self._choose(_CASTLES, styles, "castle_king_first")
        simple = not board.chess960 or (
            king_to != rook_from and rook_to != king_from and king_from != king_to
        )
        if style == "castle_together" or not simple:
            king = self.lift(king_from)
            self.step()
            rook = self.lift(rook_from) if rook_from != rook_to else None
            self.step()
            if self.rng.random() < 0.5 or not simple:
                if rook:
                    self.put(rook_to, rook)
                    self.step()
                self.put(king_to, king)
            else:
                self.put(king_to, king)
                self.step()
                if rook:
                    self.put(rook_to, rook)
            return
        first, second = (king_from, king_to), (rook_from, rook_to)
        if style == "castle_rook_first":
            first, second = second, first
        for frm, to in (first, second):
            piece = self.lift(frm)
            self.step()
            self.put(to, piece)
            self.wait(self.rng.uniform(0.2, 0.5))


def human_sensor_log(
    start: chess.Board,
    moves: Sequence[chess.Move],
    *,
    seed: int,
    with_clock: bool,
    styles: Collection[str] = ALL,
    start_time: float = 0.0,
    flipped: bool = False,
    timing: Timing | None = None,
    clock_seconds: float = 5400.0,
    increment: float = 30.0,
) -> list[SensorEvent]:
    """The sensor log of ``moves`` played from ``start`` by two humans.

    The log opens with a board dump of ``start`` (and, ``with_clock``, the clock
    started for the side to move); each move follows a think time, is made in
    a style drawn from ``styles`` (seeded by ``seed``) and, with the clock, is
    completed by a press. ``flipped`` reports the squares of a board turned
    round by 180 degrees. Times are seconds from ``start_time``; the clock
    starts at ``clock_seconds`` a side and adds ``increment`` per move.
    """
    hands = Hands(
        start,
        seed=seed,
        with_clock=with_clock,
        start_time=start_time,
        flipped=flipped,
        timing=timing,
        clock_seconds=clock_seconds,
        increment=increment,
    )
    fast = False
    for move in moves:
        fast = not fast and "fast_reply" in styles and hands.rng.random() < 0.05
        hands.think(fast=fast)
        castling = hands.board.is_castling(move)
        hands.play(move, styles)
        if with_clock:
            hands.wait(hands.rng.uniform(*hands.timing.before_press))
            hands.press()
        if "recentre" in styles and not castling and hands.rng.random() < 0.1:
            hands.recentre(move.to_square)
    return hands.events
