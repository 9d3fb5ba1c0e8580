"""A result signalled with the kings means the same to the rules core (which ends
the game on it) and to the display (which offers it to the arbiter)."""

from __future__ import annotations

import itertools

import chess
import pytest

from daemon.game.resultsignal import signalled_result
from daemon.rules.placement import key_from_board, result_signal

CENTRE = ("d4", "d5", "e4", "e5")
#: What a player sees in the rules: light squares White won, dark Black, a rank a draw.
EXPECTED = {
    frozenset({"d5", "e4"}): "1-0",
    frozenset({"d4", "e5"}): "0-1",
    frozenset({"d4", "e4"}): "1/2-1/2",
    frozenset({"d5", "e5"}): "1/2-1/2",
}


def _kings_on(white: str, black: str) -> tuple[bytes, bytes]:
    """The position before (a bare endgame) and the board with both kings put there."""
    before = chess.Board("8/8/8/8/8/8/8/K6k w - - 0 60")
    after = before.copy()
    after.remove_piece_at(chess.A1)
    after.remove_piece_at(chess.H1)
    after.set_piece_at(chess.parse_square(white), chess.Piece(chess.KING, chess.WHITE))
    after.set_piece_at(chess.parse_square(black), chess.Piece(chess.KING, chess.BLACK))
    return key_from_board(before), key_from_board(after)


@pytest.mark.parametrize("white,black", list(itertools.permutations(CENTRE, 2)))
def test_the_core_and_the_display_read_the_kings_alike(white: str, black: str) -> None:
    before, after = _kings_on(white, black)
    irregularity = {
        "kind": "displaced_pieces",
        "t": 1.0,
        "restore": [
            {"square": "a1", "piece": "K"},
            {"square": "h1", "piece": "k"},
            {"square": white, "piece": None},
            {"square": black, "piece": None},
        ],
    }
    expected = EXPECTED.get(frozenset({white, black}))
    shown = signalled_result(irregularity)
    assert result_signal(before, after) == expected
    assert (shown or {}).get("result") == expected
