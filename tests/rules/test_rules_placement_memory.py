"""The FEN rows the core remembers stay bounded over a long tournament (issue 19)."""

from __future__ import annotations

import random

import chess

from daemon.rules import placement
from daemon.rules.placement import key_from_placement, placement_from_key


def test_the_remembered_rows_stay_bounded_and_every_placement_is_still_right() -> None:
    rng = random.Random(19)
    pieces = "PNBRQKpnbrqk"
    for _ in range(3 * placement.ROWS_KEPT // 8):  # ~3x as many new rows as are kept
        board = chess.Board(None)
        for square in rng.sample(chess.SQUARES, 20):
            board.set_piece_at(square, chess.Piece.from_symbol(rng.choice(pieces)))
        fen = board.board_fen()
        assert placement_from_key(key_from_placement(fen)) == fen
        assert len(placement._ROWS) <= placement.ROWS_KEPT
    start = chess.Board().board_fen()
    assert placement_from_key(key_from_placement(start)) == start
