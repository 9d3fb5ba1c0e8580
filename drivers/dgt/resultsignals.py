"""DGT's convention for a result signalled on the board with the two kings: one
table, read by the rules core (which ends the game on it) and by the display that
only recognises it for the arbiter (``daemon.game.resultsignal``).

At the end of a game the players put both kings in the centre: on d5 and e4 (the
light squares) White won, on e5 and d4 (the dark squares) Black won, side by side on
the fourth or the fifth rank a draw (picochess's ``drawresign_map``; docs in
``../shared``, dgt-protocol.md). A legal position never has the kings side by side,
so the signal is never taken for a move.
"""

from __future__ import annotations

#: The pair of centre squares the kings stand on -> the result it means.
RESULT_SIGNALS: dict[frozenset[str], str] = {
    frozenset({"d5", "e4"}): "1-0",
    frozenset({"e5", "d4"}): "0-1",
    frozenset({"d4", "e4"}): "1/2-1/2",
    frozenset({"d5", "e5"}): "1/2-1/2",
}
#: The four centre squares.
CENTRE_SQUARES = frozenset({"d4", "d5", "e4", "e5"})
