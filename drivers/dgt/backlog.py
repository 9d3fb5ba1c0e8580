"""What a board says while the link starts up, kept for after its first picture.

The link reports nothing until the board has answered its start-up: the version,
the full dump, and, when the board shows another position than the one last known
(a daemon restarted in mid-game, a cable out), its EEPROM log. The players do not
wait for that. A pawn set down on c4 between the dump and the end of start-up was
a field update the link threw away, and the rules core never saw the move: the next
confirming dump showed it with the opponent's reply, two moves in one picture, and a
daemon restarted in mid-round stood on displaced pieces (``benchmarks.restart_moments``
at 5 s, issue 28). The board's messages come in the order it made them, so what
came after the dump is kept here in that order:

- field updates before the log's arrival are in the log too: they belong to the
  picture the log ends on (``logged_picture``), which the start-up reports;
- clock reports, and everything after the log, are handed back in order
  (``after_picture``) once the picture is reported, as if read then.
"""

from __future__ import annotations

from drivers.dgt.protocol import BoardDumpMessage, Bwtime, EeMoves, FieldUpdate, Message

#: the messages a start-up keeps: the board's changes, the clock's, the log
KEPT = (FieldUpdate, Bwtime, EeMoves)


class StartupBacklog:
    """The board's messages from its start-up dump on, until the link reports it."""

    def __init__(self) -> None:
        self._messages: list[Message] = []

    def keep(self, message: Message) -> bool:
        """Whether ``message`` is kept for later (it is then not handled now). A dump
        starts the backlog afresh: what came before it is in it."""
        if isinstance(message, BoardDumpMessage):
            self._messages.clear()
            return False
        if isinstance(message, KEPT):
            self._messages.append(message)
            return True
        return False

    def _log_at(self) -> int | None:
        """Where the log arrived in the backlog (None: it did not, or was not asked)."""
        return next((i for i, m in enumerate(self._messages) if isinstance(m, EeMoves)), None)

    def logged_picture(self, dump: tuple[int, ...]) -> tuple[int, ...]:
        """The 64 codes the board showed when it sent its log: the dump and the field
        updates before the log (the log holds them); without a log, the dump."""
        codes = list(dump)
        for message in self._messages[: self._log_at() or 0]:
            if isinstance(message, FieldUpdate):
                codes[message.square] = message.code
        return tuple(codes)

    def after_picture(self) -> list[Message]:
        """What to handle once the picture is reported, in the board's order: the clock
        reports before the log, and everything after it (all of it without a log)."""
        at = self._log_at()
        if at is None:
            return list(self._messages)
        clocks = [m for m in self._messages[:at] if isinstance(m, Bwtime)]
        return clocks + self._messages[at + 1 :]
