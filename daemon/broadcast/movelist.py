"""A board's moves as the page and MQTT's retained state show them, made once a move.

Each event a board's viewers are sent (a move, a clock press) carries the board's
whole page state (``/events?state=1``: the page never folds events itself), and a
board's retained MQTT state is the same text. Its moves were made into dicts, given
their figurines and written as JSON afresh at every such event, for every move of
the game: the page state was 6 % of the Pi 4 hall's event loop (``benchmarks.pihall
--profile``, issue 28), growing with each game's length.

:class:`ShownMoves` makes each move's dict and JSON once, when the move first
appears, and keeps them while the record holds the same move object: a record
makes a new object for a move that changed (``daemon.game.record.GameRecord``), so
a take-back or a correction cuts the list back to the first move that differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from daemon.broadcast.strictjson import dumps
from daemon.game.record import RecordedMove

_FIGURINES = str.maketrans({"K": "♔", "Q": "♕", "R": "♖", "B": "♗", "N": "♘"})


def figurine(san: str) -> str:
    """SAN with figurines for the pieces (``Nf3`` -> ``♘f3``), as printed
    scoresheets and demonstration boards show it; promotions too (``e8=♕``)."""
    return san.translate(_FIGURINES)


class ShownMoves:
    """One board's moves as shown (``update``'s dicts) and as JSON (``json``), kept
    in step with its record's move list. The dicts are shared by every state made
    from them: read them, never change them."""

    __slots__ = ("_dicts", "_moves", "_texts")

    def __init__(self) -> None:
        self._moves: list[RecordedMove] = []
        self._dicts: list[dict[str, Any]] = []
        self._texts: list[str] = []

    def update(self, moves: Sequence[RecordedMove]) -> list[dict[str, Any]]:
        """The shown moves of ``moves`` (a new list, its dicts shared): those
        already made kept, the rest made."""
        kept = 0
        common = min(len(moves), len(self._moves))
        while kept < common and moves[kept] is self._moves[kept]:
            kept += 1
        del self._moves[kept:], self._dicts[kept:], self._texts[kept:]
        for move in moves[kept:]:
            shown = move.to_dict()  # as the record's state has it, with its figurine SAN
            shown["figurine"] = figurine(move.san)
            self._moves.append(move)
            self._dicts.append(shown)
            self._texts.append(dumps(shown))
        return list(self._dicts)

    def json_of(self, shown: list[dict[str, Any]]) -> str | None:
        """``dumps(shown)`` from each move's own text, when ``shown`` is what
        ``update`` last gave (the same dicts); None otherwise."""
        dicts = self._dicts
        if len(shown) != len(dicts) or any(a is not b for a, b in zip(shown, dicts, strict=True)):
            return None
        return "[" + ",".join(self._texts) + "]"
