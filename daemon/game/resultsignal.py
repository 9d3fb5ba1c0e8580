"""A result signalled on the board: both kings put on the centre squares.

DGT's convention (``drivers.dgt.resultsignals``, the one table): at the end of a
game the players put both kings in the centre squares. The rules core sees an impossible
position (displaced pieces, 7.3) and says what to restore; lichess broadcasts
have been known to take such a position for a move. With ``rules.result_on_board``
on (the default) the rules core itself ends the game on the signal, and this
module never sees it. With it off, the core sees displaced pieces, and the display
only *recognises* the signal, so that the arbiter's console can offer it for
confirmation: the result is then set only when the arbiter confirms it (a
``result`` control), never by the signal itself.

Recognised from the open irregularity alone (pure, no board access): the two
kings are to go back to their squares, and exactly two centre squares, empty in
the game, are to be cleared, forming one of the three pairs. A king put on a
centre square that held a piece cannot be told from that piece merely lifted,
so it is not recognised (the arbiter sets the result by hand).
"""

from __future__ import annotations

from typing import Any

from drivers.dgt.resultsignals import CENTRE_SQUARES as CENTRE
from drivers.dgt.resultsignals import RESULT_SIGNALS as SIGNALS


def signalled_result(irregularity: dict[str, Any] | None) -> dict[str, Any] | None:
    """``{"result", "squares", "t"}`` when the open irregularity is the kings'
    signal, else None."""
    if not irregularity or irregularity.get("kind") != "displaced_pieces":
        return None
    restore = irregularity.get("restore") or []
    if not isinstance(restore, list) or len(restore) != 4:
        return None
    kings, cleared = set(), set()
    for item in restore:
        if not isinstance(item, dict):
            return None
        square, piece = item.get("square"), item.get("piece")
        if piece in ("K", "k"):
            kings.add(piece)
        elif piece is None and square in CENTRE:
            cleared.add(square)
        else:
            return None
    result = SIGNALS.get(frozenset(cleared)) if kings == {"K", "k"} else None
    if result is None:
        return None
    return {"result": result, "squares": sorted(cleared), "t": irregularity.get("t")}
