"""The rules core's own board after a move and king-safety answers are python-chess's.

``daemon.rules.boards`` builds each node's board without python-chess's ``copy`` and
``push``, and answers "is it legal", "is it check", "is there a legal move" from one
reading of the king's position (issue 28). A move list, a FEN or a game's end would
come out differently if any field or answer differed, so each is compared here with
python-chess's own for every legal move (not only the one played) of real games,
Chess960 games among them, and of random games, which reach promotions,
underpromotions, en passant, castling and captured rooks far more often.
"""

from __future__ import annotations

import random

import chess

from daemon.rules.boards import BOARD_FIELDS, KingGuard, board_after, insufficient_material
from daemon.rules.placement import castling_squares, child_key, half_moves, key_from_board
from daemon.rules.tree import Node


def _fields(board: chess.Board) -> dict:
    """Every field of a board, the undo records read as their fields."""
    fields = dict(vars(board))
    fields["_stack"] = [vars(state) for state in board._stack]
    return fields


def _key_by_square(board: chess.Board) -> bytes:
    """A board's placement key the long way: python-chess's piece on each square."""
    squares = bytearray(b"." * 64)
    for square, piece in board.piece_map().items():
        squares[square] = ord(piece.symbol())
    return bytes(squares)


def _half_moves_the_long_way(board: chess.Board, key: bytes) -> dict[bytes, str]:
    """The king alone on its castling square, a pawn alone on the last rank, read
    from every legal move."""
    shapes = {}
    for move in board.legal_moves:
        squares = bytearray(key)
        if board.is_castling(move):
            king_from, king_to, _, _ = castling_squares(board, move)
            if king_from != king_to:
                squares[king_to], squares[king_from] = squares[king_from], ord(".")
                shapes[bytes(squares)] = "incomplete_castling"
        elif move.promotion == chess.QUEEN:
            squares[move.to_square], squares[move.from_square] = key[move.from_square], ord(".")
            shapes[bytes(squares)] = "incomplete_promotion"
    return shapes


def _same_as_python_chess(board: chess.Board) -> None:
    key = key_from_board(board)
    guard = KingGuard(board, key)
    assert key == _key_by_square(board)
    assert guard.any_legal_move(board) == any(board.generate_legal_moves()), board.fen()
    assert bool(guard.checkers) == board.is_check(), board.fen()
    for move in board.generate_pseudo_legal_moves():
        assert guard.keeps_king_safe(board, move) == (not board.is_into_check(move)), move
    guard.pinned(board)  # again, with the pinned pieces known
    assert guard.any_legal_move(board) == any(board.generate_legal_moves()), board.fen()
    node = Node.root(board)
    assert list(node.legal_moves()) == list(board.legal_moves)
    assert half_moves(node) == _half_moves_the_long_way(board, key)
    for move in board.legal_moves:
        expected = board.copy(stack=False)
        expected.push(move)
        made = board_after(board, key, move)
        assert _fields(made) == _fields(expected), (board.fen(), move.uci())
        assert made.fen() == expected.fen()
        # the board made goes back as python-chess's
        assert made.pop() == expected.pop() and _fields(made) == _fields(expected)


def test_a_board_after_each_legal_move_of_real_games_is_python_chess_s(real_games) -> None:
    assert set(vars(chess.Board())) == BOARD_FIELDS  # a new python-chess field: look again
    played = 0
    for game in real_games[::100] + [g for g in real_games if g.start.chess960]:
        board = game.start.copy()
        for ply, move in enumerate(game.moves):
            if ply % 3 == 0:  # a third of the positions, and every move played
                _same_as_python_chess(board)
            board = board_after(board, key_from_board(board), move)
            played += 1
    assert played > 1_000


def test_a_nodes_fen_is_python_chess_s_along_real_games(real_games) -> None:
    """Each move's FEN is made from the rows its parent made (the rows the move left
    alone): the same text as python-chess's ``fen`` after every move."""
    for game in real_games[::10] + [g for g in real_games if g.start.chess960]:
        board = game.start.copy()
        node = Node.root(board)
        assert node.fen() == board.fen()
        for move in game.moves:
            board.push(move)
            node = node.child(move)
            assert node.fen() == board.fen(), move.uci()
            assert insufficient_material(node.board) == board.is_insufficient_material()


def test_a_board_after_each_legal_move_of_random_games_is_python_chess_s() -> None:
    rng = random.Random(29)  # five games that castle, take en passant and underpromote
    kinds = set()
    for game in range(5):
        chess960 = game % 3 == 0
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
        while not board.is_game_over() and board.ply() < 160:
            _same_as_python_chess(board)
            move = rng.choice(list(board.legal_moves))
            if board.is_en_passant(move):
                kinds.add("en passant")
            if board.is_castling(move):
                kinds.add("castling")
            if move.promotion:
                kinds.add("promotion" if move.promotion == chess.QUEEN else "underpromotion")
            board.push(move)
    assert kinds == {"en passant", "castling", "promotion", "underpromotion"}


def test_king_safety_is_python_chess_s_in_positions_set_up_by_hand() -> None:
    for fen in (
        "4k3/8/8/8/8/8/8/4K2R w K - 0 1",  # castling out of nothing
        "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",  # en passant
        "8/8/8/K2pP2r/8/8/8/4k3 w - d6 0 1",  # en passant exposing the king on its rank
        "7k/5b2/8/3pP3/8/1K6/8/8 w - d6 0 1",  # ... on the victim's diagonal
        "4k3/8/8/8/8/8/8/8 w - - 0 1",  # no white king: python-chess's own generation
        "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
        "3qk3/8/8/8/8/8/3P4/3K4 w - - 0 1",  # a pinned pawn may still push
        "4k3/8/8/8/4r3/8/8/4K3 w - - 0 1",  # in check
        "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",  # stalemate
        "7k/5Q2/1p4K1/1P6/8/8/8/8 b - - 0 1",  # stalemate, the pawn blocked
        "k7/1nK5/1P6/3B4/8/8/8/8 b - - 0 1",  # stalemate, the knight pinned
    ):
        _same_as_python_chess(chess.Board(fen))


def test_a_placement_matches_the_move_the_long_way_finds() -> None:
    """Every placement one of the mover's pieces makes, set down on any other square
    (a pawn also as any other piece), gives the move the long way finds (the first
    legal move, in python-chess's order, that leaves it) or none, as do the moves'
    placements with a square changed at random (castling's king alone, en passant's
    victim still there, two pieces in the hand)."""
    rng = random.Random(2029)
    letters = b".PNBRQKpnbrqk"
    positions = 0
    for game in range(8):
        chess960 = game % 3 == 0
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
        while not board.is_game_over() and board.ply() < 100:
            if board.ply() % 9 == game % 9:
                positions += 1
                node = Node.root(board)
                expected: dict[bytes, chess.Move] = {}
                for move in board.legal_moves:
                    expected.setdefault(child_key(node.key, board, move), move)
                keys = set(expected)
                for _ in range(40):
                    shown = bytearray(rng.choice(sorted(expected)))
                    shown[rng.randrange(64)] = rng.choice(letters)
                    keys.add(bytes(shown))
                for frm in chess.scan_forward(board.occupied_co[board.turn]):
                    piece = node.key[frm]
                    kinds = b"NBRQ" if piece == ord("P") else b"nbrq" if piece == ord("p") else b""
                    for to in range(64):
                        for letter in (piece, *kinds):
                            shown = bytearray(node.key)
                            shown[frm], shown[to] = ord("."), letter
                            keys.add(bytes(shown))
                for key in keys:
                    assert node.match(key) == expected.get(key), (board.fen(), key)
            board.push(rng.choice(list(board.legal_moves)))
    assert positions > 40
