"""The outputs of a board's pipeline: the one ``Output`` protocol, and the small
outputs every board has (its feed lines, its log lines, the memory handed back
after a game).

Everything that hears what a board's rules core decided is an ``Output`` with one
method, ``receive``: the feed on stdout, the log, the announcer (earphone and phone
page), the page and MQTT (``daemon.boards.pageview``), the clock's display, the hand-in
files, the router of a two-board game and a demo's transcript. ``BoardPipeline``
calls that one method, in the order of its list (``daemon.boards.board`` builds the list).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, Protocol, TextIO

from daemon.game.events import DomainEvent
from daemon.game.formatting import describe
from daemon.lazy import logger

log = logging.getLogger("dgt-bridge")


class Output(Protocol):
    """One output of a board's pipeline (``BoardPipeline.outputs``).

    The contract:

    - ``receive`` gets every event of the board's feed, typed (``daemon.game.events``), in
      the order the rules core decided them, after the board's one game record has
      folded it and the journal has it (disk first: a lost move is the worst failure).
    - It returns at once: an output that speaks, shows or sends queues that work (the
      speech's schedule, the clock display's task, the page's wait for the card).
    - An output at an edge (the feed's lines, the page and MQTT) makes the event a
      dict or JSON itself (``to_dict``); the others read the typed fields.
    - It never raises into the pipeline: it reports its own failures (a failing
      stream is logged once and dropped; the announcer logs and goes on). If one
      raises all the same, the pipeline logs it and goes on: the outputs after it,
      and every later event, still reach everyone (``BoardPipeline.output``).
    """

    def receive(self, event: DomainEvent) -> None: ...


#: ``json.dumps(data, ensure_ascii=False)``'s encoder, made once: ``dumps`` with an
#: option builds a new one per call, a third of the time a feed line takes.
_FEED_ENCODER = json.JSONEncoder(ensure_ascii=False)


class FeedWriter:
    """The event feed as JSON lines on a stream (stdout, a file); a failing stream is
    reported once and dropped, the game goes on. ``fatal``: the feed is the command's
    whole output (``replay``): its failure is not logged but kept in ``failure``, for
    the command to end with."""

    def __init__(self, stream: TextIO, *, flush: bool = True, fatal: bool = False) -> None:
        self.stream: TextIO | None = stream
        self.flush = flush
        self.fatal = fatal
        self.failure: OSError | ValueError | None = None

    def receive(self, event: DomainEvent) -> None:
        self.write(event.to_dict())

    def write(self, data: dict[str, Any]) -> None:
        """One line of the feed as given (a board's lines carry its id: ``FeedLines``)."""
        if self.stream is None:
            return
        try:
            self.stream.write(_FEED_ENCODER.encode(data) + "\n")
            if self.flush:
                self.stream.flush()
        except (OSError, ValueError) as exc:
            self.failure = exc
            self.stream = None
            if not self.fatal:
                logger().error("event feed output failed: %s", exc)

    def raise_failure(self) -> None:
        """Raise what failed the stream, if anything (a fatal feed ends its command)."""
        if self.failure is not None:
            raise self.failure


class FeedLines:
    """One board's feed lines into a sink of dicts (the daemon's ``FeedWriter``, an
    embedding caller's ``on_event``): each event as the feed's JSON object, with a
    ``board`` field when the daemon names its boards (``board``; None: the single
    board of ``board:``, whose feed has none)."""

    def __init__(self, sink: Callable[[dict[str, Any]], None], board: str | None = None) -> None:
        self.sink = sink
        self.board = board

    def receive(self, event: DomainEvent) -> None:
        data = event.to_dict()
        self.sink({"board": self.board, **data} if self.board is not None else data)


class EventLog:
    """Each event in the daemon's log, in words (``daemon.game.formatting``); the clock's
    times only at debug level. ``prefix`` names the board ("" for a single board)."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix

    def receive(self, event: DomainEvent) -> None:
        level = logging.DEBUG if event.type == "clock" else logging.INFO
        if log.isEnabledFor(level):
            log.log(level, "%s%s", self.prefix, describe(event))


class MemoryAfterGame:
    """A game has ended or the next begun: once every output has had the event, the
    memory the last game needed goes back to the system (``daemon.service.memory``),
    so that a day of games on twenty boards does not hold more than the current
    games' state."""

    def receive(self, event: DomainEvent) -> None:
        if event.type not in ("game_end", "game_start"):
            return
        import asyncio  # here: a replay never needs the event loop

        from daemon.service.memory import release_freed_memory

        try:
            asyncio.get_running_loop().call_soon(release_freed_memory)
        except RuntimeError:  # no loop (a test feeding the pipeline by hand)
            release_freed_memory()
