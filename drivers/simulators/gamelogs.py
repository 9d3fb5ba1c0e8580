"""Sensor logs of real games, played by hand, with irregularities made on purpose.

What the rules tests and the accuracy benchmark feed the rules core: a game read from
PGN (``read_games``), the moves the Laws let stand (``lawful_moves``), the sensor log
of two humans playing it (``drivers.simulators.handling``) with one irregularity of Article 4 or
7 injected at a chosen ply (``injected_log``), and which irregularity the core must
then report (``EXPECTED``). It only makes sensor events; no chess rules are decided
here, so it lives with the drivers and the package's users (tests, benchmarks) import
it from there.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import chess
import chess.pgn

from drivers.records import Record
from drivers.sensors import BoardDump, Request, SensorEvent
from drivers.simulators.handling import ALL, Hands


@dataclass(eq=False, repr=False)
class Game(Record):
    index: int
    start: chess.Board
    moves: list[chess.Move]
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def needs_set_position(self) -> bool:
        return self.start.fen() != chess.STARTING_FEN or self.start.chess960


def read_games(path, limit: int | None = None) -> list[Game]:
    games: list[Game] = []
    with open(path, encoding="utf-8") as handle:
        while limit is None or len(games) < limit:
            game = chess.pgn.read_game(handle)
            if game is None:
                break
            if game.errors:
                raise AssertionError(f"game {len(games)}: {game.errors}")
            games.append(
                Game(len(games), game.board(), list(game.mainline_moves()), dict(game.headers))
            )
    return games


def lawful_moves(game: Game) -> list[str]:
    """The moves the Laws let stand: a dead position ends the game at once (5.2b).

    A few recorded games go on after python-chess sees insufficient material;
    the core ends those games there, and so must the expectation.
    """
    board = game.start.copy()
    moves = []
    for move in game.moves:
        if board.is_checkmate() or board.is_stalemate() or board.is_insufficient_material():
            break
        moves.append(move.uci())
        board.push(move)
    return moves


def set_position_request(game: Game) -> list[SensorEvent]:
    if not game.needs_set_position:
        return []
    return [
        Request(0.0, "set_position", {"fen": game.start.fen(), "chess960": game.start.chess960})
    ]


# ---------------------------------------------------------------------- injection

INJECTIONS = (
    "illegal_then_restored",
    "touch_move",
    "castling_rook_first",
    "incomplete_castling",
    "incomplete_promotion",
    "clock_without_move",
    "knocked_piece",
    "wrong_setup",
    "turned_board",
)
CLOCK_ONLY = {"incomplete_castling", "incomplete_promotion", "clock_without_move"}

EXPECTED = {
    "illegal_then_restored": [("illegal_move", "7.4")],
    "touch_move": [("touch_move", "4.3")],
    "castling_rook_first": [("castling_rook_first", "4.4")],
    "incomplete_castling": [("incomplete_castling", "4.6")],
    "incomplete_promotion": [("incomplete_promotion", "4.6")],
    "clock_without_move": [("clock_without_move", "6.7")],
    "knocked_piece": [("displaced_pieces", "7.3")],
    "wrong_setup": [("wrong_setup", "7.1")],
    "turned_board": [],
}

CLEAN = ALL - {"adjust"}  # an adjustment before an injected touch would hide it


def injection_ply(game: Game, kind: str, rng: random.Random) -> int | None:
    """A ply of the game where ``kind`` can be injected, or None."""
    board = game.start.copy()
    candidates = []
    for ply, move in enumerate(game.moves):
        ok = False
        if kind == "castling_rook_first" or kind == "incomplete_castling":
            ok = board.is_castling(move) and not board.chess960
        elif kind == "incomplete_promotion":
            ok = move.promotion is not None
        elif kind == "touch_move":
            ok = _other_movable(board, move) is not None
        elif kind == "illegal_then_restored":
            ok = _illegal_target(board, move.from_square) is not None
        elif kind == "knocked_piece":
            ok = _knockable(board) is not None
        elif kind == "clock_without_move":
            ok = True
        if ok:
            candidates.append(ply)
        board.push(move)
    return rng.choice(candidates) if candidates else None


def _other_movable(board: chess.Board, move: chess.Move) -> int | None:
    excluded = {move.from_square}
    if board.is_castling(move):
        excluded.add(move.to_square)
        rank = chess.square_rank(move.from_square)
        excluded.update({chess.square(0, rank), chess.square(7, rank)})
    movable = sorted({m.from_square for m in board.legal_moves} - excluded)
    return movable[0] if movable else None


def _illegal_target(board: chess.Board, square: int) -> int | None:
    """An empty square near ``square`` its piece cannot legally go to."""
    legal = {m.to_square for m in board.legal_moves if m.from_square == square}
    for target in chess.SQUARES:
        if (
            board.piece_at(target) is None
            and target not in legal
            and chess.square_distance(square, target) <= 2
            and not (
                board.piece_type_at(square) == chess.PAWN and chess.square_rank(target) in (0, 7)
            )
            # a king set on a centre square may be the first half of a result signalled
            # with the kings: the core waits SIGNAL_PATIENCE for the other king, and this
            # injection takes the move back sooner (the king's move has its own test)
            and not (board.piece_type_at(square) == chess.KING and target in _CENTRE)
        ):
            return target
    return None


_CENTRE = frozenset({chess.D4, chess.E4, chess.D5, chess.E5})


def _knockable(board: chess.Board) -> tuple[int, int] | None:
    """A piece of the side not on move (no king) and an empty neighbouring square."""
    for square, piece in sorted(board.piece_map().items()):
        if piece.color == board.turn or piece.piece_type == chess.KING:
            continue
        for target in sorted(chess.SquareSet(chess.BB_KING_ATTACKS[square])):
            if board.piece_at(target) is None and chess.square_rank(target) not in (0, 7):
                return square, target
    return None


def injected_log(game: Game, kind: str, ply: int | None, *, seed: int, with_clock: bool):
    """The sensor log of ``game`` with ``kind`` injected at ``ply`` (see EXPECTED)."""
    flipped = kind == "turned_board"
    hands = Hands(
        game.start,
        seed=seed,
        with_clock=with_clock,
        flipped=flipped,
        initial_dump=kind != "wrong_setup",
    )
    if kind == "wrong_setup":
        _wrong_setup(hands)
    settle = 1.2
    for index, move in enumerate(game.moves):
        hands.think()
        board = hands.board
        if index == ply:
            if kind == "illegal_then_restored":
                frm = move.from_square
                target = _illegal_target(board, frm)
                assert target is not None
                piece = hands.lift(frm)
                hands.step()
                hands.put(target, piece)
                if with_clock:
                    hands.wait(0.3)
                    hands.press()
                hands.wait(settle)
                hands.lift(target)
                hands.step()
                hands.put(frm, piece)
                hands.wait(settle)
                if with_clock:  # the arbiter sets the clocks back (6.13)
                    hands.running = "white" if board.turn == chess.WHITE else "black"
                    hands.turn_started = hands.t
                    hands.clock_report()
                    hands.wait(0.5)
            elif kind == "touch_move":
                square = _other_movable(board, move)
                assert square is not None
                piece = hands.lift(square)
                hands.step()
                hands.put(square, piece)
                hands.step()
            elif kind == "knocked_piece":
                hands.wait(3.0)  # while thinking, well after the last move
                knockable = _knockable(board)
                assert knockable is not None  # injection_ply chose a ply that has one
                frm, target = knockable
                piece = hands.lift(frm)
                hands.put(target, piece)
                hands.wait(settle)
                hands.lift(target)
                hands.put(frm, piece)
                hands.wait(settle)
            elif kind == "clock_without_move":
                hands.press()
                hands.wait(settle)
                hands.play(move, CLEAN)
                continue
            elif kind == "incomplete_castling":
                rank = chess.square_rank(move.from_square)
                king_to = chess.square(6 if board.is_kingside_castling(move) else 2, rank)
                king = hands.lift(move.from_square)
                hands.step()
                hands.put(king_to, king)
                hands.wait(0.3)
                hands.press()
                hands.wait(settle)
                rook_from = chess.square(7 if board.is_kingside_castling(move) else 0, rank)
                rook_to = chess.square(5 if board.is_kingside_castling(move) else 3, rank)
                rook = hands.lift(rook_from)
                hands.step()
                hands.put(rook_to, rook)
                board.push(move)
                continue
            elif kind == "incomplete_promotion":
                pawn = hands.lift(move.from_square)
                hands.step()
                if move.to_square in hands.pieces:
                    hands.lift(move.to_square)
                    hands.step()
                hands.put(move.to_square, pawn)
                hands.wait(0.3)
                hands.press()
                hands.wait(settle)
                assert move.promotion is not None  # a promotion injection is on one
                symbol = chess.piece_symbol(move.promotion)
                hands.put(move.to_square, symbol.upper() if pawn == "P" else symbol)
                board.push(move)
                continue
            elif kind == "castling_rook_first":
                hands.play(move, {"castle_rook_first"})
                if with_clock:
                    hands.wait(0.3)
                    hands.press()
                continue
        hands.play(move, CLEAN)
        if with_clock:
            hands.wait(hands.rng.uniform(0.15, 0.6))
            hands.press()
    return hands.events


def _wrong_setup(hands: Hands) -> None:
    """King and queen of both sides swapped, then put right (7.1a)."""
    wrong = dict(hands.pieces)
    for queen, king in ((chess.D1, chess.E1), (chess.D8, chess.E8)):
        wrong[queen], wrong[king] = wrong[king], wrong[queen]
    right = hands.pieces
    hands.pieces = wrong
    hands.dump()
    hands.wait(2.0)
    for queen, king in ((chess.D1, chess.E1), (chess.D8, chess.E8)):
        q, k = hands.lift(queen), hands.lift(king)
        hands.step()
        hands.put(queen, k)
        hands.put(king, q)
        hands.step()
    assert hands.pieces == right
    hands.wait(1.0)
    if hands.with_clock:
        hands.clock_report()


def dump_of(board: chess.Board, t: float = 0.0) -> BoardDump:
    return BoardDump(t, board.board_fen())


def distinct_openings(path, count: int, plies: int) -> list[list[chess.Move]]:
    """The first ``plies`` moves of ``count`` standard games of a PGN file, no two the
    same: a different real game for each board of a hall (tests, the benchmarks)."""
    found: list[list[chess.Move]] = []
    with open(path, encoding="utf-8") as handle:
        while len(found) < count and (game := chess.pgn.read_game(handle)) is not None:
            moves = list(game.mainline_moves())[:plies]
            standard = game.headers.get("Variant", "Standard") == "Standard"
            if standard and not game.errors and len(moves) == plies and moves not in found:
                found.append(moves)
    if len(found) < count:
        raise ValueError(f"{path}: only {len(found)} games of {plies} plies")
    return found
