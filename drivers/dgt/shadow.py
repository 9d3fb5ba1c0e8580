"""The link's picture of the 64 squares, turned into sensor events (sans-I/O).

The board reports squares one by one. The link keeps a shadow of what it has
been told so that a confirming full dump can be compared with it: a dump equal
to the shadow says nothing new and is not reported; a different dump means a
field update was lost (or pieces moved while the link was away) and is
reported as a :class:`BoardDump` so the rules core can resynchronise.

Field updates pass through faithfully, one :class:`SquareChange` each, in the
board's order, including the odd orders real sensors produce (new square before
old, a capture as a code replacing a code, a slide through intermediate
squares). Interpreting them is the rules core's job.
"""

from __future__ import annotations

from drivers.dgt.protocol import (
    MAGIC_BY_CODE,
    PIECE_BY_CODE,
    BoardDumpMessage,
    FieldUpdate,
    square_name,
)
from drivers.sensors import BoardDump, MagicPiece, SensorEvent, SquareChange


class BoardShadow:
    """The last known 64 piece codes, and the events that changes to them mean."""

    def __init__(self) -> None:
        self.codes: tuple[int, ...] | None = None

    @property
    def known(self) -> bool:
        return self.codes is not None

    def forget(self) -> None:
        """Drop the picture (after a disconnect): the next dump is always reported."""
        self.codes = None

    def dump(self, t: float, message: BoardDumpMessage, force: bool = False) -> list[SensorEvent]:
        """A full dump arrived. Report it when forced, when nothing was known, or
        when it differs from the shadow; magic pieces on it are reported too."""
        changed = self.codes != message.codes
        self.codes = message.codes
        if not (changed or force):
            return []
        events: list[SensorEvent] = [BoardDump(t, message.placement)]
        events.extend(MagicPiece(t, square, meaning) for square, meaning in message.magic)
        return events

    def field_update(
        self, t: float, message: FieldUpdate, since: float | None = None
    ) -> list[SensorEvent]:
        """One square changed: report it, whatever the shadow thought was there
        (``since``: made after that time, a polled board's previous read)."""
        if self.codes is not None:
            codes = list(self.codes)
            codes[message.square] = message.code
            self.codes = tuple(codes)
        name = square_name(message.square)
        meaning = MAGIC_BY_CODE.get(message.code)
        if meaning is not None:
            return [MagicPiece(t, name, meaning)]
        return [SquareChange(t, name, PIECE_BY_CODE.get(message.code), since)]
