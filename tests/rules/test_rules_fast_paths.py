"""The rules core's short cuts (issue 28) give what the long way gives.

A move's SAN is written from the position after it, and placements are compared by
their differing squares only; a move list, a PGN or an alarm would change if either
answered differently, so each is checked against the plain reading here.
"""

from __future__ import annotations

import random

import chess

from daemon.rules.placement import differing_squares, is_subset, key_from_board
from daemon.rules.tree import Node
from daemon.rules.words import san


def test_a_moves_san_and_legal_moves_are_python_chess_s_in_random_games() -> None:
    rng = random.Random(28)
    written = set()
    for _ in range(30):
        board = chess.Board(chess960=False)
        while not board.is_game_over() and board.ply() < 200:
            move = rng.choice(list(board.legal_moves))
            node = Node.root(board)
            assert set(node.legal_children().values()) == set(board.legal_moves)
            after = node.child(move)
            text = san(node.board, move, after.board, after.has_legal_move())
            assert text == board.san(move), board.fen()
            written.add(text[-1])
            board.push(move)
    assert {"+", "#"} <= written  # checks and mates were among them


def test_differing_squares_and_pieces_in_hand_read_as_square_by_square() -> None:
    rng = random.Random(29)
    board = chess.Board()
    letters = b"....PNBRQKpnbrqk"
    for _ in range(3000):
        a = bytearray(key_from_board(board))
        for _ in range(rng.randint(0, 6)):
            a[rng.randrange(64)] = rng.choice(letters)
        b = bytearray(a)
        for _ in range(rng.randint(0, 6)):
            b[rng.randrange(64)] = rng.choice(letters)
        first, second = bytes(a), bytes(b)
        assert differing_squares(first, second) == [s for s in range(64) if first[s] != second[s]]
        assert is_subset(first, second) == all(
            p in (ord("."), w) for p, w in zip(first, second, strict=True)
        )
