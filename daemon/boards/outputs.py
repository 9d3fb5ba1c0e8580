"""The outputs of a board's pipeline: the one ``Output`` protocol, and the small
outputs every board has (its feed lines, its log lines, and its word to the
daemon's ``MemoryBetweenGames``, which hands the games' memory back once none is
under way).

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


class MemoryBetweenGames:
    """The memory the games that ended needed goes back to the system
    (``daemon.service.memory``: a full collection, then glibc's ``malloc_trim``), once
    for the whole daemon and only while no board's game is under way.

    The release is no small thing: the collection walks every object made since the
    start, every board's game and every viewer, 7-15 ms of a desktop core in a
    26-board hall, 60-160 ms at a Pi 4's budget, more on a Zero. Made at each board's
    game end and start, as it was, a hall stopped reading every other board for that
    long each time a game ended, and 26 times in a row at a round's start (the
    slowest presses of a Pi 4 hall were its first moves: ``benchmarks.pihall``,
    issue 28). So a board's output (``for_board``) only says that a game was left
    (its end, or a new game begun on a board whose game had moves) and when a board's
    game gets under way (its first move); the release runs when the last game under
    way is left: after each game on a single board, at the round's end in a hall.
    A hall that is never between games (boards starting new games all evening) still
    releases, at the first game left once ``longest_wait`` seconds have passed since
    the release became due, by the events' own times (a board resumed on a clock of
    its own may bring that sooner or later: one collection early, or none before
    the hall is between games).

    ``release`` and ``call_soon`` are the daemon's (``release_freed_memory`` and the
    running loop's, or at once without a loop: a replay); a test passes its own."""

    def __init__(
        self,
        release: Callable[[], object] | None = None,
        call_soon: Callable[[Callable[[], object]], object] | None = None,
        longest_wait: float = 600.0,
    ) -> None:
        self._release = release
        self._call_soon = call_soon
        self.longest_wait = longest_wait
        self._under_way: set[str] = set()  # boards whose game has a move
        self._due_since: float | None = None  # a game was left (a board's time then)
        self._scheduled = False

    def for_board(self, board_id: str) -> Output:
        """The output that tells this about ``board_id``'s games."""
        return _GamesOfBoard(self, board_id)

    def heard(self, board_id: str, event: DomainEvent) -> None:
        kind = event.type
        if kind == "move":
            self._under_way.add(board_id)
            return
        if kind not in ("game_end", "game_start"):
            return
        left = kind == "game_end" or board_id in self._under_way
        self._under_way.discard(board_id)
        if not left:
            return  # a game begun on a board that had none under way: nothing freed
        if self._due_since is None:
            self._due_since = event.t
        if not self._under_way or event.t - self._due_since >= self.longest_wait:
            self._schedule()

    def _schedule(self) -> None:
        if self._scheduled:
            return  # the games left in the same turn of the loop: one release
        self._scheduled = True
        call_soon = self._call_soon
        if call_soon is None:
            import asyncio  # here: a replay never needs the event loop

            try:
                call_soon = asyncio.get_running_loop().call_soon
            except RuntimeError:  # no loop (a replay, a test feeding the pipeline)
                self._run()
                return
        call_soon(self._run)

    def _run(self) -> None:
        self._scheduled = False
        self._due_since = None
        if self._release is not None:
            self._release()
            return
        from daemon.service.memory import release_freed_memory

        release_freed_memory()


class _GamesOfBoard:
    """One board's games, told to the daemon's ``MemoryBetweenGames``."""

    def __init__(self, games: MemoryBetweenGames, board_id: str) -> None:
        self.games, self.board_id = games, board_id

    def receive(self, event: DomainEvent) -> None:
        self.games.heard(self.board_id, event)
