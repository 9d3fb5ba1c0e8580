"""The second handling set: real games with one behaviour of the rules core's issue 13 made.

Each case takes a real game, picks a ply where its behaviour can happen, and
plays the game through the human-handling model with that behaviour made there:
several pieces touched (4.3a/b/c), a promotion swapped after 4.4d, a piece of
the wrong colour set down as the promoted piece, an illegal castling put back
slowly, a result signalled with the kings, the board cleared after it and the
next game started. ``handling_case`` returns the log and what the feed must
say: the moves, the irregularities, the end.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import chess

from drivers.records import Record
from drivers.sensors import SensorEvent
from drivers.simulators.gamelogs import CLEAN, Game, lawful_moves
from drivers.simulators.handling import Hands

HANDLING_CASES = (
    "touch_own_pieces",
    "touch_opposing_pieces",
    "touch_both_colours",
    "promotion_swapped",
    "wrong_colour_promotion",
    "illegal_castling_put_back",
    "result_white_wins",
    "result_black_wins",
    "result_draw",
    "board_cleared_after_the_end",
    "illegal_castling_king_stuck",
    "castling_without_the_right_pressed",
    "knock_after_the_move",
    "set_up_after_a_resignation",
    "touch_both_colours_after_an_illegal_move",
    "lone_king_on_a_centre_square_taken_back",
)
#: The cases of issue 26 (the third wave), a subset of ``HANDLING_CASES``.
THIRD_WAVE = HANDLING_CASES[-6:]
_RESULTS = {
    "result_white_wins": ("1-0", chess.E4, chess.D5),
    "result_black_wins": ("0-1", chess.D4, chess.E5),
    "result_draw": ("1/2-1/2", chess.D4, chess.E4),
}
SETTLE = 1.5  # longer than the core's settle time


@dataclass(eq=False, repr=False)
class Case(Record):
    """A log and the feed it must give."""

    events: list[SensorEvent]
    moves: list[str]  # the first game's moves, as the Laws let them stand
    irregularities: list[tuple[str, str]] = field(default_factory=list)
    result: str | None = None  # a game_end with reason result_on_board
    next_game_moves: list[str] | None = None  # after the board was cleared
    #: notice codes the feed may give or not (the board_reset notice of a set-up: given
    #: once two pieces stand on start squares before the start position does)
    allowed_notices: list[str] = field(default_factory=list)


def _legal_from(board: chess.Board, square: int) -> bool:
    return any(m.from_square == square for m in board.legal_moves)


def _capturable(board: chess.Board, square: int) -> bool:
    return any(
        (m.to_square == square and board.is_capture(m) and not board.is_en_passant(m))
        for m in board.legal_moves
    )


def _touch_choice(board: chess.Board, move: chess.Move, case: str) -> list[int] | None:
    """The squares to touch, in order, so that 4.3 is broken by ``move``; None if none."""
    turn = board.turn
    mine = sorted(chess.SquareSet(board.occupied_co[turn] & ~chess.BB_SQUARES[move.from_square]))
    theirs = sorted(chess.SquareSet(board.occupied_co[not turn]))
    if board.is_castling(move):
        return None
    victim = move.to_square if board.is_capture(move) else None
    if case == "touch_own_pieces":
        stuck = [s for s in mine if not _legal_from(board, s)]
        movable = [s for s in mine if _legal_from(board, s)]
        if not movable:
            return None
        return ([stuck[0]] if stuck else []) + [movable[0]]
    if case == "touch_opposing_pieces":
        safe = [s for s in theirs if not _capturable(board, s) and s != victim]
        target = [s for s in theirs if _capturable(board, s) and s != victim]
        if not target:
            return None
        return ([safe[0]] if safe else []) + [target[0]]
    for m in board.legal_moves:  # both colours: a capture the player did not make
        if (
            board.is_capture(m)
            and not board.is_en_passant(m)
            and m.from_square != move.from_square
            and m.to_square != victim
        ):
            return [m.from_square, m.to_square]
    return None


def _castling_put_back(board: chess.Board) -> tuple[int, int, int, int] | None:
    """King and rook home, the squares between empty, castling that side illegal."""
    rank = 0 if board.turn == chess.WHITE else 7
    king = chess.square(4, rank)
    if board.piece_at(king) != chess.Piece(chess.KING, board.turn):
        return None
    for rook_file, king_to, rook_to, between in (
        (7, 6, 5, (5, 6)),
        (0, 2, 3, (1, 2, 3)),
    ):
        rook = chess.square(rook_file, rank)
        if board.piece_at(rook) != chess.Piece(chess.ROOK, board.turn):
            continue
        if any(board.piece_at(chess.square(f, rank)) for f in between):
            continue
        castle = chess.Move(king, chess.square(king_to, rank))
        if castle in board.legal_moves:
            continue
        return king, chess.square(king_to, rank), rook, chess.square(rook_to, rank)
    return None


def _castling_put_back_by(board: chess.Board, case: str) -> tuple[int, int, int, int] | None:
    """An illegal castling for ``case``: with the king unable to move (4.4c: any legal
    move then), or with the right already lost (the king or that rook moved before)."""
    squares = _castling_put_back(board)
    if squares is None:
        return None
    king_from, king_to, _, _ = squares
    if case == "illegal_castling_king_stuck":
        return None if _legal_from(board, king_from) else squares
    kingside = chess.square_file(king_to) == 6
    has_right = (
        board.has_kingside_castling_rights(board.turn)
        if kingside
        else board.has_queenside_castling_rights(board.turn)
    )
    return None if has_right or board.is_check() else squares


def _knock_choice(board: chess.Board, move: chess.Move, reply: chess.Move) -> int | None:
    """A piece of the opponent next to where ``move`` lands that his ``reply`` leaves alone."""
    if board.is_castling(move) or board.is_en_passant(move) or move.promotion:
        return None
    after = board.copy(stack=False)
    after.push(move)
    if reply not in after.legal_moves or after.is_game_over():
        return None
    around = chess.SquareSet(chess.BB_KING_ATTACKS[move.to_square])
    for square in sorted(around):
        piece = after.piece_at(square)
        if piece is None or piece.color != after.turn or square == reply.from_square:
            continue
        if square == reply.to_square or piece.piece_type == chess.KING:
            continue
        return square
    return None


_START = chess.Board()


def _set_up_step(board: chess.Board) -> chess.Move | None:
    """A legal move of the stopped game that is also a step of setting up: a piece of the
    side on move, off its start square, back on it without capturing."""
    for move in board.legal_moves:
        piece = board.piece_at(move.from_square)
        if piece is None or board.is_capture(move) or board.is_castling(move):
            continue
        if move.promotion or _START.piece_at(move.to_square) != piece:
            continue
        if _START.piece_at(move.from_square) == piece:
            continue
        after = board.copy(stack=False)
        after.push(move)
        if not after.is_game_over():
            return move
    return None


def _both_colours_choice(board: chess.Board, move: chess.Move) -> tuple[int, int] | None:
    """An illegal capture by the piece the game's move then moves, the opposing piece
    lifted first (own piece, opposing piece): that piece can be captured, and the game's
    move does not capture it, so 4.3c binds the replacing move."""
    if board.is_castling(move) or move.promotion:
        return None
    own = move.from_square
    if board.piece_type_at(own) in (chess.PAWN, chess.KING):
        return None
    legal = list(board.legal_moves)
    targets = {m.to_square for m in legal if board.is_capture(m) and not board.is_en_passant(m)}
    for theirs in sorted(chess.SquareSet(board.occupied_co[not board.turn])):
        if board.piece_type_at(theirs) == chess.KING or theirs not in targets:
            continue
        if theirs == move.to_square or any(
            m.from_square == own and m.to_square == theirs for m in legal
        ):
            continue
        return own, theirs
    return None


def _lone_king_choice(board: chess.Board) -> tuple[int, int] | None:
    """The king of the side not on move and an empty centre square it cannot reach."""
    king, other = board.king(not board.turn), board.king(board.turn)
    if king is None or other is None or board.is_check():
        return None
    if other in (chess.E4, chess.D4, chess.E5, chess.D5):
        return None  # the two kings would signal a result
    for target in (chess.E4, chess.D4, chess.E5, chess.D5):
        if board.piece_at(target) is None and chess.square_distance(king, target) > 1:
            return king, target
    return None


def _signal_ok(board: chess.Board, white_to: int, black_to: int) -> bool:
    """Neither king is next to its target (a legal king move there would be that move)."""
    white, black = board.king(chess.WHITE), board.king(chess.BLACK)
    return (
        white is not None
        and black is not None
        and chess.square_distance(white, white_to) > 1
        and chess.square_distance(black, black_to) > 1
        and not board.is_check()
    )


def handling_ply(game: Game, case: str, rng: random.Random) -> int | None:
    """A ply of ``game`` where ``case`` can be made, or None."""
    board = game.start.copy()
    lawful = lawful_moves(game)
    candidates = []
    for ply, move in enumerate(game.moves[: len(lawful)]):
        ok = False
        if case.startswith("touch_"):
            ok = _touch_choice(board, move, case) is not None
        elif case in ("promotion_swapped", "wrong_colour_promotion"):
            ok = move.promotion is not None
        elif case == "illegal_castling_put_back":
            ok = _castling_put_back(board) is not None
        elif case in ("illegal_castling_king_stuck", "castling_without_the_right_pressed"):
            ok = _castling_put_back_by(board, case) is not None
        elif case == "knock_after_the_move":
            following = game.moves[ply + 1] if ply + 1 < len(lawful) else None
            ok = following is not None and _knock_choice(board, move, following) is not None
        elif case == "set_up_after_a_resignation":
            ok = ply >= 8 and _set_up_step(board) is not None
        elif case == "touch_both_colours_after_an_illegal_move":
            ok = _both_colours_choice(board, move) is not None
        elif case == "lone_king_on_a_centre_square_taken_back":
            ok = _lone_king_choice(board) is not None
        elif case in _RESULTS or case == "board_cleared_after_the_end":
            _, white_to, black_to = _RESULTS.get(case, _RESULTS["result_white_wins"])
            ok = ply >= 6 and _signal_ok(board, white_to, black_to)
        if ok:
            candidates.append(ply)
        board.push(move)
    return rng.choice(candidates) if candidates else None


def _touch(hands: Hands, square: int) -> None:
    piece = hands.lift(square)
    hands.step()
    hands.put(square, piece)
    hands.step()


def _press_or_settle(hands: Hands, mover: str) -> None:
    if hands.with_clock:
        hands.wait(0.3)
        hands.press()
    hands.wait(SETTLE)


def _arbiter_sets_the_clock_back(hands: Hands, mover: str) -> None:
    if hands.with_clock:  # 6.13 (7.5.1 today): the clocks as before the illegal move
        hands.running = mover
        hands.turn_started = hands.t
        hands.clock_report()
        hands.wait(0.5)


def _signal(hands: Hands, white_to: int, black_to: int) -> None:
    for colour, target in ((chess.WHITE, white_to), (chess.BLACK, black_to)):
        king = hands.board.king(colour)
        assert king is not None
        piece = hands.lift(king)
        hands.step()
        if target in hands.pieces:
            hands.lift(target)  # the piece standing there makes room
            hands.step()
        hands.put(target, piece)
        hands.wait(hands.rng.uniform(0.4, 1.5))
    hands.wait(SETTLE)


def _clear_and_set_up(hands: Hands) -> None:
    for square in sorted(hands.pieces, key=lambda _: hands.rng.random()):
        hands.lift(square)
        hands.wait(hands.rng.uniform(0.05, 0.3))
    hands.wait(2.0)
    start = chess.Board()
    for square, piece in sorted(start.piece_map().items(), key=lambda _: hands.rng.random()):
        hands.put(square, piece.symbol())
        hands.wait(hands.rng.uniform(0.2, 1.2))
    hands.board = start
    hands.wait(SETTLE)


def _illegal_castling(
    hands: Hands,
    board: chess.Board,
    move: chess.Move,
    squares: tuple[int, int, int, int],
    mover: str,
    hold: float,
) -> list[tuple[str, str]]:
    """Castle illegally (king first), complete it, put it back slowly; what it must give."""
    king_from, king_to, rook_from, rook_to = squares
    king = hands.lift(king_from)
    hands.step()
    hands.put(king_to, king)
    hands.step()
    rook = hands.lift(rook_from)
    hands.step()
    hands.wait(hold)
    hands.put(rook_to, rook)
    _press_or_settle(hands, mover)
    hands.lift(king_to)  # back: the king first, a pause, then the rook
    hands.step()
    hands.put(king_from, king)
    hands.wait(1.2)
    hands.lift(rook_to)
    hands.wait(1.2)
    hands.put(rook_from, rook)
    hands.wait(SETTLE)
    _arbiter_sets_the_clock_back(hands, mover)
    expected = [("illegal_move", "7.4")]
    # 7.4a applies 4.3 and 4.4c: the king touched to castle must make another legal
    # move, if it has one; the rook touched as part of the castling does not bind
    # (4.4b binds it only when touched first), so with the king stuck any move will do
    if _legal_from(board, king_from) and move.from_square != king_from:
        expected.append(("touch_move", "4.3"))
    return expected


def _set_up_again(hands: Hands, moves: list[str]) -> Case:
    """The game stops (a resignation: the clock stopped, no result signalled) and the
    players set up the start position, the first step being a legal move of the stopped
    game that stands for longer than the settle time; then the clock is set and a second
    game begins."""
    if hands.with_clock:
        hands.wait(1.0)
        hands.running = None  # stopped: the game is over
        hands.clock_report()
    hands.wait(3.0)  # the resignation, the handshake
    step = _set_up_step(hands.board)
    assert step is not None
    piece = hands.lift(step.from_square)
    hands.step()
    hands.put(step.to_square, piece)
    hands.wait(hands.rng.uniform(0.8, 1.4))
    start = {s: p.symbol() for s, p in _START.piece_map().items()}
    misplaced = [s for s, p in hands.pieces.items() if start.get(s) != p]
    for square in sorted(misplaced, key=lambda _: hands.rng.random()):
        hands.lift(square)
        hands.wait(hands.rng.uniform(0.2, 0.6))
    empty = [s for s in start if s not in hands.pieces]
    for square in sorted(empty, key=lambda _: hands.rng.random()):
        hands.put(square, start[square])
        hands.wait(hands.rng.uniform(0.2, 1.0))
    hands.board = chess.Board()
    hands.wait(SETTLE)
    opening = _next_game(hands)
    return Case(
        hands.events, moves, [], None, next_game_moves=opening, allowed_notices=["board_reset"]
    )


def _next_game(hands: Hands) -> list[str]:
    """The clock set for the next game (if there is one) and its first three moves."""
    if hands.with_clock:
        hands.running, hands.turn_started = "white", hands.t
        hands.clock_report()
    opening = ["e2e4", "e7e5", "g1f3"]
    for uci in opening:
        hands.think()
        hands.play(chess.Move.from_uci(uci), CLEAN)
        if hands.with_clock:
            hands.wait(0.3)
            hands.press()
    return opening


def handling_case(game: Game, case: str, ply: int, *, seed: int, with_clock: bool) -> Case:
    """The sensor log of ``game`` with ``case`` made at ``ply``, and what it must give."""
    hands = Hands(game.start, seed=seed, with_clock=with_clock)
    lawful = lawful_moves(game)
    expected: list[tuple[str, str]] = []
    for index, move in enumerate(game.moves[: len(lawful)]):
        hands.think()
        board = hands.board
        mover = "white" if board.turn == chess.WHITE else "black"
        if index == ply and (case in _RESULTS or case == "board_cleared_after_the_end"):
            result, white_to, black_to = _RESULTS.get(case, _RESULTS["result_white_wins"])
            _signal(hands, white_to, black_to)
            if case != "board_cleared_after_the_end":
                return Case(hands.events, lawful[:ply], [], result)
            _clear_and_set_up(hands)
            opening = _next_game(hands)
            return Case(hands.events, lawful[:ply], [], result, next_game_moves=opening)
        if index == ply and case.startswith("touch_"):
            hands.wait(1.2)  # well after the opponent's release: no brush of his hand
            for square in _touch_choice(board, move, case) or []:
                _touch(hands, square)
            expected.append(("touch_move", "4.3"))
        elif index == ply and case == "promotion_swapped":
            hands.play(move, {"promote_direct"} | (CLEAN - {"promote_via_pawn"}))
            _press_or_settle(hands, mover)
            promoted = hands.pieces[move.to_square]
            other = "N" if promoted.upper() != "N" else "Q"
            other = other if promoted.isupper() else other.lower()
            hands.lift(move.to_square)
            hands.step()
            hands.put(move.to_square, other)
            hands.wait(SETTLE)
            hands.lift(move.to_square)
            hands.step()
            hands.put(move.to_square, promoted)
            hands.wait(SETTLE)
            expected.append(("promotion_changed", "4.4"))
            continue
        elif index == ply and case == "wrong_colour_promotion":
            pawn = hands.lift(move.from_square)
            hands.step()
            if move.to_square in hands.pieces:
                hands.lift(move.to_square)
                hands.step()
            symbol = chess.piece_symbol(move.promotion or chess.QUEEN)
            wrong = symbol if pawn.isupper() else symbol.upper()  # the opponent's colour
            hands.put(move.to_square, wrong)
            _press_or_settle(hands, mover)
            _arbiter_sets_the_clock_back(hands, mover)
            hands.lift(move.to_square)
            hands.step()
            hands.put(move.to_square, wrong.swapcase())
            hands.board.push(move)
            if with_clock:
                hands.wait(0.3)
                hands.press()
            expected.append(("illegal_move", "7.4"))
            continue
        elif index == ply and case in (
            "illegal_castling_put_back",
            "illegal_castling_king_stuck",
            "castling_without_the_right_pressed",
        ):
            squares = (
                _castling_put_back(board)
                if case == "illegal_castling_put_back"
                else _castling_put_back_by(board, case)
            )
            assert squares is not None
            # the rook held a while: a slow hand, not a second irregularity
            hold = 1.0 if case == "castling_without_the_right_pressed" else 0.0
            expected += _illegal_castling(hands, board, move, squares, mover, hold)
        elif index == ply and case == "touch_both_colours_after_an_illegal_move":
            pair = _both_colours_choice(board, move)
            assert pair is not None
            own, theirs = pair
            hands.wait(1.2)  # well after the opponent's release
            victim = hands.lift(theirs)  # the opposing piece first
            hands.step()
            piece = hands.lift(own)
            hands.step()
            hands.put(theirs, piece)
            _press_or_settle(hands, mover)
            _arbiter_sets_the_clock_back(hands, mover)
            hands.lift(theirs)
            hands.step()
            hands.put(own, piece)
            hands.step()
            hands.put(theirs, victim)
            hands.wait(SETTLE)
            # 7.4a applies 4.3: both colours touched (4.3c); the capture is illegal, so
            # the first touched, the opposing piece, had to be captured
            expected += [("illegal_move", "7.4"), ("touch_move", "4.3")]
        elif index == ply and case == "lone_king_on_a_centre_square_taken_back":
            choice = _lone_king_choice(board)
            assert choice is not None
            king_square, target = choice
            king = hands.lift(king_square)
            hands.step()
            hands.put(target, king)
            hands.wait(1.5)  # less than the wait for the other king (3 s)
            hands.lift(target)
            hands.step()
            hands.put(king_square, king)
            hands.wait(SETTLE)
            expected.append(("displaced_pieces", "7.3"))
        elif index == ply and case == "set_up_after_a_resignation":
            return _set_up_again(hands, lawful[:ply])
        knocked = None
        if index == ply and case == "knock_after_the_move":
            knocked = _knock_choice(board, move, game.moves[ply + 1])
            assert knocked is not None
        hands.play(move, CLEAN)
        if knocked is not None:
            hands.wait(0.3)  # the mover's hand, withdrawing, knocks a piece over
            lying = hands.lift(knocked)
            if with_clock:
                hands.wait(0.2)
                hands.press()
            hands.wait(1.5)
            hands.put(knocked, lying)  # righted
            continue
        if with_clock:
            hands.wait(hands.rng.uniform(0.15, 0.6))
            hands.press()
    return Case(hands.events, lawful, expected)
