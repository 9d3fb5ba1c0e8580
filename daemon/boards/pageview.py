"""What the page and MQTT show of a board's one game record: the game as of the
last event on the card.

The board's pipeline folds every event into its one ``GameRecord`` at once: the
speech and the feed have a move at once. The page and MQTT are shown an event only
once it is on the card (``Journal.when_durable``, issue 28), so a move a viewer or
the relay saw survives a power cut; until then they must not read it from the
record either (a ``/state.json`` asked meanwhile, the state MQTT retains).

So before the record folds an event that the page has not been shown yet, the
view keeps a ``GameRecord.snapshot`` of it as it stands: the page reads the
snapshot until that event is on the card, then the next one or the record
itself. A snapshot shares the record's fields and replay (a few microseconds an
event), so the page reads the same game, never a second fold of it that could
drift. Without a disk writer an event is shown as it is folded, and the page reads
the record itself.

Showing can also wait for a move's first sound (``later``: the daemon's
``daemon.speech.speechfirst`` gate, at most a quarter of a second): on a Pi's slow
core the page's fan-out and MQTT would otherwise take turns with the blind player's
phrase. The same snapshots keep what the page reads in step with what it was shown.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from daemon.game.events import DomainEvent
from daemon.game.record import GameHeaders, GameRecord
from drivers.records import Record


@dataclass(eq=False, repr=False, slots=True)
class _Waiting(Record):
    """An event folded but not yet on the card; ``view``: the record as it stood
    after it, once a later event was folded (None: the record itself still)."""

    seq: int
    data: dict[str, Any]
    view: GameRecord | None = None


class PageView:
    """One board's record as the page and MQTT may read it (``current``), and the
    output of the board's pipeline that shows them each event.

    ``before_fold`` is called by the pipeline before the record folds an event;
    ``receive`` gets it after (an ``Output``), and makes the feed's dict of it, the
    one the page and MQTT are shown: ``show`` gets it once it may be shown
    (``current`` is then the record to read with it). ``durable(callback)`` calls
    back once every event so far is on the card (None: no disk writer, shown at
    once). ``later(work)`` runs the showing now or once a move's first sound is out
    (None: now). ``arbiter_deciding``: the event is the arbiter's (a web control with
    the token), marked ``arbiter`` for the MQTT edge to sign
    (``daemon.broadcast.arbitersig``)."""

    def __init__(
        self,
        record: GameRecord,
        show: Callable[[dict[str, Any]], None],
        durable: Callable[[Callable[[], None]], None] | None = None,
        *,
        arbiter_deciding: Callable[[], bool] | None = None,
        later: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        self.record = record
        self._show = show
        self._durable = durable
        self._later = later
        #: an event may be shown after the record has folded later ones
        self._deferred = durable is not None or later is not None
        self._arbiter_deciding = arbiter_deciding
        self._waiting: deque[_Waiting] = deque()
        self._seq = 0
        #: what the page reads while the record is ahead of what it was shown (None:
        #: the record itself)
        self._shown: GameRecord | None = None

    def current(self) -> GameRecord:
        """The game as the page may show it now."""
        return self._shown if self._shown is not None else self.record

    def before_fold(self) -> None:
        """The record is about to change: keep what the page reads, and what the
        event waiting last must be shown with."""
        if not self._deferred:
            return
        if self._waiting:
            last = self._waiting[-1]
            if last.view is None:
                last.view = self.record.snapshot()
        elif self._shown is None:
            self._shown = self.record.snapshot()

    def receive(self, event: DomainEvent) -> None:
        """The record has folded ``event``: shown now, or once it is on the card."""
        data = event.to_dict()
        if self._arbiter_deciding is not None and self._arbiter_deciding():
            data["arbiter"] = True
        if not self._deferred:
            self._show(data)
            return
        self._seq += 1
        seq = self._seq
        self._waiting.append(_Waiting(seq, data))

        def show() -> None:
            self._show_up_to(seq)

        def on_card() -> None:  # then after the first sound, if it waits for one
            if self._later is None:
                show()
            else:
                self._later(show)

        if self._durable is None:
            on_card()
        else:
            self._durable(on_card)

    def _show_up_to(self, seq: int) -> None:
        while self._waiting and self._waiting[0].seq <= seq:
            waiting = self._waiting.popleft()
            self._shown = waiting.view  # None: nothing folded since, the record is it
            self._show(waiting.data)

    def name_games(self, headers: GameHeaders) -> None:
        """The page names the games with its own headers (its event, the board's
        tag), the names the feed gave in force over them."""
        self.record.named_by(headers)
        for view in [self._shown] + [w.view for w in self._waiting]:
            if view is not None:
                view.headers = self.record.headers
