"""The rules core's short cuts (issue 28) give what the long way gives.

A move's SAN is written from the position after it, and placements are compared by
their differing squares only; a move list, a PGN or an alarm would change if either
answered differently, so each is checked against the plain reading here.
"""

from __future__ import annotations

import random
import re

import chess

from daemon.rules.placement import differing_squares, is_subset, key_from_board
from daemon.rules.tree import Node
from daemon.rules.words import describe_move, san


def _plain_words(board: chess.Board, move: chess.Move) -> str:
    """The fallback's words read off python-chess's board, as it read them before."""
    text = board.san(move)
    body = text.rstrip("+#")
    if body.startswith("O-O"):
        words = ["castles queenside" if body.startswith("O-O-O") else "castles kingside"]
    else:
        piece = chess.piece_symbol(board.piece_type_at(move.from_square) or chess.PAWN).upper()
        words = [
            {"K": "king", "Q": "queen", "R": "rook", "B": "bishop", "N": "knight"}.get(
                piece, "pawn"
            ),
            chess.square_name(move.from_square),
            "takes" if board.is_capture(move) else "to",
            chess.square_name(move.to_square),
        ]
        if board.is_en_passant(move):
            words.append("en passant")
        if move.promotion:
            words.append("promotes to " + chess.piece_name(move.promotion))
    if text.endswith("#"):
        words.append("checkmate")
    elif text.endswith("+"):
        words.append("check")
    return " ".join(words)


def test_a_moves_san_and_legal_moves_are_python_chess_s_in_random_games() -> None:
    rng = random.Random(28)
    written = set()
    for game in range(30):
        board = (
            chess.Board.from_chess960_pos(rng.randrange(960)) if game % 5 == 0 else chess.Board()
        )
        while not board.is_game_over() and board.ply() < 200:
            move = rng.choice(list(board.legal_moves))
            node = Node.root(board)
            assert set(node.legal_children().values()) == set(board.legal_moves)
            after = node.child(move)
            expected = board.san(move)
            text = san(node.board, move, after.board, after.has_legal_move())
            assert text == expected, board.fen()
            # read off the placement, with the check known: the core's way
            assert (
                san(
                    node.board,
                    move,
                    key=node.key,
                    check=after.is_check(),
                    after_has_legal_move=after.has_legal_move(),
                )
                == expected
            ), board.fen()
            assert describe_move(board, move, expected) == _plain_words(board, move)
            written.add(expected[-1])
            if re.fullmatch(r"[NBRQK][a-h1-8]{1,2}x?[a-h][1-8][+#]?", expected):
                written.add("told apart")  # "Nbd2", "R1e2": two pieces could go there
            if "=" in expected:
                written.add("promotion")
            if expected.startswith("O-O"):
                written.add("castling")
            board.push(move)
    assert {"+", "#", "told apart", "promotion", "castling"} <= written


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
