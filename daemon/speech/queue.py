"""Which announcement is spoken next: a pure queue policy on simulated time.

The blind player must hear the game as it stands, at once, and must not lose what
matters. So:

- a new move makes every earlier move announcement stale: queued ones are
  cancelled, a playing one is interrupted (the new move says where the game is);
  ``info`` announcements (position restored, draw claimable) go stale with it;
- a correction (a move replacing the move with the same ply) is a move too, and
  its text says it is a correction;
- a takeback cancels the announcements of the moves it took back;
- an answer to a request goes first, ahead of everything queued (not cutting
  what is playing);
- ``important`` announcements (irregularities, game end, flag fall, takeback,
  restart...) are never cancelled by a move and never expire;
- what waited longer than ``stale_after`` seconds without being started is
  dropped, except moves (superseded only by the next move) and important ones.

Nothing is dropped silently: every cancellation and expiry is returned, for the
announcer to log. No clock and no I/O here: ``now`` is an argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["move", "answer", "important", "info"]


@dataclass(frozen=True, slots=True)
class Announcement:
    id: int
    kind: Kind
    written: str  # the text with the official spellings (logs, the text engine)
    spoken: str  # the text for the voice, through the pronunciation lexicon
    created: float
    ply: int | None = None  # the half-move a move announcement is about
    takeback_ply: int | None = None  # a takeback: moves from this ply on are void


@dataclass(slots=True)
class Decision:
    """What ``offer`` changed: the announcer stops ``interrupt`` and logs the rest."""

    cancelled: list[Announcement] = field(default_factory=list)
    interrupt: Announcement | None = None


class SpeechQueue:
    """The queue and the one announcement playing; see the module docstring."""

    def __init__(self, stale_after: float = 30.0) -> None:
        self.stale_after = stale_after
        self.pending: list[Announcement] = []
        self.playing: Announcement | None = None
        self.expired: list[Announcement] = []  # dropped by ``next``; the caller drains it

    def offer(self, item: Announcement, now: float) -> Decision:
        decision = Decision()
        if item.kind == "move":
            self._cancel(decision, lambda old: old.kind in ("move", "info"))
        elif item.takeback_ply is not None:
            ply = item.takeback_ply
            self._cancel(decision, lambda old: old.kind == "move" and (old.ply or 0) >= ply)
        if item.kind == "answer":
            position = sum(1 for old in self.pending if old.kind == "answer")
            self.pending.insert(position, item)
        else:
            self.pending.append(item)
        return decision

    def _cancel(self, decision: Decision, stale) -> None:
        keep = []
        for old in self.pending:
            (decision.cancelled if stale(old) else keep).append(old)
        self.pending = keep
        if self.playing is not None and stale(self.playing):
            decision.interrupt = self.playing

    def next(self, now: float) -> Announcement | None:
        """Start the next announcement (dropping the expired ones) or None when idle."""
        while self.pending:
            item = self.pending.pop(0)
            if self._expired(item, now):
                self.expired.append(item)
                continue
            self.playing = item
            return item
        return None

    def _expired(self, item: Announcement, now: float) -> bool:
        if item.kind in ("move", "important"):
            return False
        return now - item.created > self.stale_after

    def finished(self, item: Announcement) -> None:
        """The announcement ended (spoken, failed or interrupted)."""
        if self.playing is not None and self.playing.id == item.id:
            self.playing = None

    @property
    def idle(self) -> bool:
        return self.playing is None and not self.pending
