"""One board of the daemon: its journal, pipeline, outputs, link, clock display,
speech, resume and close.

``daemon.app.Daemon`` holds a list of these (``board:`` is a list of one, ``boards:``
a list of many) and what they share: the event loop, the live page, the notifier,
the buses of boards in DGT bus mode and the pairs of boards bound to one game. A
``Board`` is the same object whichever list it came from, so a board of a hall is
read, decided, journalled, spoken and shown exactly as the single board is.

What a board does, in the order the daemon asks for it:

1. ``resume()``: an unfinished game in its journal directory continues (the rules
   core waits for the board to agree); the board's one game record holds it from
   its start, for the speech and the page that start later, and its events are
   ``known`` to the page's history.
2. its link: a USB/serial board gets a ``BoardLink`` of its own (``attach_link``),
   told the resumed position so that moves made while the daemon was down come back
   from the board's EEPROM log; a board on a chain gets its place on the bus's
   ``BusLink`` (``attach_bus``), told the resumed position the same way, so the moves
   made meanwhile come back from the board itself (what it kept for the next poll,
   or its log since the start; issue 29).
3. READY (the daemon's), then the speech (``make_announcer``) and the page; what the
   board says meanwhile waits in this board's two backlogs, handed over in order.
4. ``close()``.

Its pipeline's outputs (``daemon.boards.outputs.Output``), in order: the feed's lines, the
log, the player's speech (``PlayerSpeech``), the page and MQTT (``PageView``), the
clock's display once the link is made, the memory handed back after a game, the
hand-in files, and an embedding caller's lines and outputs.

A board bound to another's game (``same_game_as``, Appendix E.1) has a link, a
connection state and maybe speech, but no pipeline or journal of its own: ``game``
is the board whose pipeline reads both, and its player hears that game.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon import compose
from daemon.boards.outputs import EventLog, FeedLines, FeedWriter, MemoryBetweenGames, Output
from daemon.boards.pageview import PageView
from daemon.boards.pipeline import BoardPipeline, Scheduler
from daemon.clock.display import ClockDisplay
from daemon.config import BoardEntry, BoardSettings, Settings
from daemon.game.events import DomainEvent, Irregularity, from_dict
from daemon.game.record import GameRecord
from daemon.speech.phoneline import PhoneLine
from daemon.speech.restart import unheard_moves
from daemon.storage.journal import Journal, find_unfinished
from drivers.sensors import ConnectionChange, SensorEvent

if TYPE_CHECKING:
    from daemon.boards.twoboards import TwoBoardGame
    from daemon.speech.speechfirst import SpeechFirst
    from daemon.speech.vocabulary import Vocabulary
    from daemon.storage.diskwriter import DiskWriter
    from daemon.storage.handin import HandIn

log = logging.getLogger("dgt-bridge")


def board_settings(settings: Settings, entry: BoardEntry) -> Settings:
    """One board's settings: the file's sections with this board's port, orientation,
    players and its own clock and speech keys."""
    game = settings.game
    return replace(
        settings,
        board=BoardSettings(port=entry.port or "auto", orientation=entry.orientation),
        clock=entry.clock if entry.clock is not None else settings.clock,
        speech=entry.speech if entry.speech is not None else settings.speech,
        game=replace(
            game,
            white=entry.white if entry.white not in ("", "?") else game.white,
            black=entry.black if entry.black not in ("", "?") else game.black,
        ),
        boards=[],
    )


def journal_history(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A resumed game's journal, for the page: its moves, not an earlier restart's
    ``game_resumed`` (published again it reads as a second resume, at the old ply,
    just before this restart's own), nor what the speech heard (the journal's own
    lines, never feed events)."""
    return [event for event in events if event.get("type") not in ("game_resumed", "speech")]


class Board:
    """One board. ``named``: the daemon names its boards (``boards:``), so its feed
    lines carry a ``board`` field and its log lines say which board; the single board
    of ``board:`` writes the feed as it always has.

    ``hub`` is read when needed (the page starts after READY); ``on_connection``
    hears this board's link state (the daemon's status); ``on_event`` gets each feed
    line as a dict (an embedding caller); ``outputs`` are more outputs of this
    board's game, after its own (a demo's transcript)."""

    def __init__(
        self,
        entry: BoardEntry,
        settings: Settings,
        *,
        journal_dir: Path,
        scheduler: Scheduler,
        vocabulary: Vocabulary,
        named: bool,
        hub: Callable[[], Any],
        on_connection: Callable[[Board, ConnectionChange], None],
        feed: FeedWriter | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        outputs: list[Output] | None = None,
        speech_starting: bool = False,
        page_starting: bool = False,
        disk_writer: DiskWriter | None = None,
        handin: HandIn | None = None,
        speech_first: SpeechFirst | None = None,
        memory: MemoryBetweenGames | None = None,
    ) -> None:
        self.entry = entry
        #: the daemon's gate: a move's page and MQTT wait for its first sound
        self.speech_first = speech_first
        self.id = entry.id
        self.settings = board_settings(settings, entry)
        self.journal_dir = journal_dir
        self.scheduler = scheduler
        self.named = named
        self.game: Board = self  # a bound board: the board whose pipeline reads it
        self.pair: TwoBoardGame | None = None
        self.link: Any = None  # a BoardLink, or the BusLink this board is on
        self.bus_address: int | None = None
        self.clock_display: ClockDisplay | None = None
        #: this board's player hearing his game (an output of the game's pipeline)
        self.speech = PlayerSpeech(self.id, lambda: self.game.pair, speech_starting)
        self.speech_running = False  # the announcer's engines have started
        self.connected: bool | None = None
        self.detail = "not yet read"
        self.known: list[dict[str, Any]] = []  # a resumed game's events, for speech and page
        #: the journal's events of the game resumed at the start (``resume``), as found
        #: before the restart added any; a bound board reads its game's board's
        self.resumed_events: list[dict[str, Any]] = []
        self._hub = hub
        #: what the board said while the page was starting; None once it is up or is
        #: not to be
        self._page_backlog: list[dict[str, Any]] | None = [] if page_starting else None
        self.journal: Journal | None = None
        self.pipeline: BoardPipeline | None = None
        #: each player's line to his phone page (``/listen``), a game's board only
        self.phones: dict[str, PhoneLine] = {}
        self.page: PageView | None = None  # what the page and MQTT read of the record
        self.record: GameRecord | None = None  # a bound board reads its game's
        if entry.same_game_as:
            return  # read through its game's pipeline (``bind``)
        headers = compose.build_headers(self.settings, entry.id)
        #: the board's game, held once: the journal, speech, page and MQTT read it
        self.record = GameRecord(replace(headers))
        self.journal = Journal(
            journal_dir,
            headers=headers,
            fsync=self.settings.storage.fsync,
            pgn_every=self.settings.storage.pgn_every,
            writer=disk_writer,
            record=self.record,
        )
        # The page and MQTT show an event once it is on the card (with a disk writer:
        # ``Journal.when_durable``), so a move a viewer or the relay has seen survives
        # a power cut, and once a move's first sound is out (``speech_first``), so a
        # Pi's slow core makes the phrase first; the speech and the feed have it at once.
        self.page = PageView(
            self.record,
            self._show,
            self.journal.when_durable if disk_writer else None,
            arbiter_deciding=self._arbiter_deciding,
            later=speech_first.later if speech_first is not None else None,
        )
        self.phones = {side: PhoneLine(self.id, side) for side in ("white", "black")}
        parts = compose.build_board_parts(self.settings, vocabulary)
        named_as = entry.id if named else None
        own: list[Output] = []
        if feed is not None:
            own.append(FeedLines(feed.write, named_as))
        own += [EventLog(self.prefix), self.speech, self.page]
        if memory is not None:  # the daemon's one, for all its boards
            own.append(memory.for_board(self.id))
        if handin is not None:
            own.append(handin.for_board(self.id, self.journal))
        if on_event is not None:
            own.append(FeedLines(on_event, named_as))
        self.pipeline = BoardPipeline(
            entry.id,
            parts,
            scheduler,
            journal=self.journal,
            outputs=own + list(outputs or []),
            on_connection=lambda event: on_connection(self, event),
            record=self.record,
            speech_first=speech_first,
        )
        self.pipeline.before_fold = self.page.before_fold

    def __repr__(self) -> str:
        return f"Board({self.id!r}, connected={self.connected})"

    # -- resume ---------------------------------------------------------------------------

    def resume(self) -> None:
        """Continue the unfinished game of this board's journal directory, if any."""
        if self.pipeline is None or self.journal is None:
            return
        point = find_unfinished(self.journal_dir)
        if point is not None:
            # a LoopScheduler's: the Scheduler protocol has no offset (a replay's clock)
            self.scheduler.offset = point.last_t + 0.001  # type: ignore[attr-defined]
            self.journal.reopen(point)
            log.info(
                "%sresuming the game in %s at move %d: waiting for the board to agree",
                self.prefix,
                point.path,
                point.ply,
            )
            self.pipeline.resume(point)
            self.resumed_events = point.game_events

    def keep_known(self) -> None:
        """The game's events so far (a resumed game's), for the page's history once
        it is up; what comes later waits in its backlog."""
        game = self.game.journal
        self.known = list(game.game_events) if game is not None else []

    # -- the link ---------------------------------------------------------------------------

    def attach_link(self, submit: Callable[[SensorEvent], None], on_battery: Any) -> Any:
        """A USB/serial board's own link (not yet running): it hears the resumed
        position (the EEPROM log's moves come back), a held alarm asks it at once, and
        it reports a Bluetooth board's battery."""
        interpreter = self._interpreter()
        self.link = compose.build_link(
            self.settings,
            submit,
            port=self.entry.port,
            clock_interpreter=interpreter,
            time_source=self.scheduler.now,
        )
        if self.pipeline is not None:
            self.link.expect_placements(self.pipeline.resumed_placements())
            self.pipeline.probe_board = self.link.probe
        self.link.on_battery = on_battery
        if self.pipeline is not None and self.pipeline.clock_writer is not None:
            self.clock_display = ClockDisplay(
                self.pipeline.clock_writer,
                interpreter,
                lambda: self.link,
                self.scheduler.now,
                sides=self.pipeline.clock_sides,
                later=self.speech_first.later if self.speech_first is not None else None,
            )
            assert self.page is not None  # a board with a pipeline has its page
            outputs = self.pipeline.outputs
            outputs.insert(outputs.index(self.page) + 1, self.clock_display)
        return self.link

    def attach_bus(self, bus: Any, submit: Callable[[SensorEvent], None]) -> None:
        """This board's place on a chain's ``BusLink`` (the bus runs once for all its
        boards): as a single board's link, it hears the resumed position (the moves
        made meanwhile come back from the board) and a held alarm polls it at once."""
        from drivers.dgt.buscodec import bus_address

        self.bus_address = bus_address(self.entry.bus_serial)
        bus.add_board(
            self.bus_address,
            submit,
            self._interpreter(),
            time_source=self.scheduler.now,
            time_rate=getattr(self.scheduler, "time_scale", 1.0),  # the demo's game time
        )
        if self.pipeline is not None:
            bus.expect_placements(self.bus_address, self.pipeline.resumed_placements())
            self.pipeline.probe_board = partial(bus.probe, self.bus_address)
        self.link = bus

    def _interpreter(self) -> Any:
        """The clock interpreter the board's link reads with: its pipeline's (the one
        a resume tells), or for a bound board one of its own."""
        if self.pipeline is not None:
            return self.pipeline.clock_interpreter
        return compose.build_clock_interpreter(self.settings)

    @property
    def penalty_clock(self) -> str:
        """Why a penalty's time goes on this board's clock by hand (the console says
        so under its penalty buttons and with the penalty's answer); empty when the
        daemon sets the clock itself (a DGT clock through a single board,
        ``daemon.clock.penalty``: the answer says whether it could)."""
        if self.entry.bus_port:
            return "this board is on a DGT bus chain: bus mode cannot set the clock"
        device = self.settings.clock.device
        if device == "usb":
            return "a USB clock is only read: the daemon cannot set its times"
        if device != "dgt":
            return "the daemon reads no clock on this board (clock.device: none)"
        return ""

    def penalty_answer(self) -> Any:
        """The penalty just taken, as put on the clock: an awaitable of the
        console's words (``PenaltyOutcome.to_answer``), or None when this board's
        clock is not set by the daemon (``penalty_clock`` says why)."""
        display = self.clock_display
        if display is None or display.penalty is None:
            return None
        return _answer_of(display.penalty)

    @property
    def battery(self) -> float | None:
        """The link's last battery report (a Bluetooth board), for the page."""
        battery = getattr(self.link, "battery", None)
        return getattr(battery, "percent", None)

    # -- outputs ------------------------------------------------------------------------------

    @property
    def prefix(self) -> str:
        """How a log line names this board ("" for the single board of ``board:``)."""
        return f"board {self.id}: " if self.named else ""

    @property
    def announcer(self) -> Any:
        """daemon.speech's Announcer of this board's player, made after READY."""
        return self.speech.announcer

    @announcer.setter
    def announcer(self, announcer: Any) -> None:
        self.speech.announcer = announcer

    def hears_game_of(self, game: Board) -> None:
        """This board is bound to ``game``'s (Appendix E.1): its player hears that
        game, his speech an output of its pipeline right after its own player's."""
        assert game.pipeline is not None
        self.game = game
        self.scheduler = game.scheduler
        outputs = game.pipeline.outputs
        outputs.insert(outputs.index(game.speech) + 1, self.speech)

    def _arbiter_deciding(self) -> bool:
        """The event being shown is the arbiter's (a web control with the token): the
        MQTT edge signs it for the relay (``daemon.broadcast.arbitersig``)."""
        return self.pipeline is not None and self.pipeline.arbiter_deciding

    def _show(self, data: dict[str, Any]) -> None:
        # Until this board is handed to the page, what it decides waits for its game's
        # history there, even when the page is up: the boards are handed over one by
        # one and read in between, and a resumed board's move shown before its game
        # went to viewers ahead of it (a hall's viewers short after a restart).
        if self._page_backlog is not None:
            self._page_backlog.append(data)
            return
        hub = self._hub()
        if hub is not None:  # the HTTP and MQTT edge: the feed's dicts
            hub.publish(self.id, data)

    # -- after READY: speech and page ----------------------------------------------------------

    def make_announcer(
        self,
        vocabulary: Vocabulary,
        text: Any,
        seat: Any,
        on_problem: Callable[[str], None],
    ) -> Any:
        """This board's announcer (after READY), caught up with the game so far and
        handed what was said meanwhile; None when it cannot be made."""
        announcer = compose.build_announcer(
            self.settings,
            vocabulary,
            on_problem,
            text,
            self._speech_outcome,
            seat=seat,
            phones=self.phones,
            record=self.game.record,  # the game's one record, as far as it is folded
            speech_first=self.speech_first,
        )
        own = None if self.game is self else self.id  # a bound board's lines name it
        unheard = unheard_moves(self.game.resumed_events, own)
        # lenient: a damaged line is still handed on, and the announcer logs what it
        # cannot say (a restart never fails on it)
        self.speech.unheard = [from_dict(line, lenient=True) for line in unheard]
        self.speech.start(announcer)
        return announcer

    def no_speech(self) -> None:
        """The speech is not to be: nothing waits for it."""
        self.speech.start(None)

    def _speech_outcome(self, record: dict[str, Any]) -> None:
        """What was heard, cut or dropped goes into the game's journal (not the feed),
        so a player's complaint can be checked afterwards; ``board`` names whose
        earphone it was when two boards share the game."""
        game = self.game
        if game.journal is None:
            return
        line: dict[str, Any] = {"t": round(game.scheduler.now(), 6), **record}
        if game is not self:
            line["board"] = self.id
        game.journal.append(line)

    def hand_to_page(self, hub: Any) -> None:
        """The page is up: it reads this board's record (named with the page's own
        headers), and hears the game's known events and what it missed, in order."""
        events, self._page_backlog = self._page_backlog or [], None
        page = getattr(hub, "hub", hub)  # a Broadcaster's hub, or a Hub itself
        if hasattr(page, "note_clock") and self.pipeline is not None:
            page.note_clock(self.id, self.penalty_clock)
        if hub is not None and self.page is not None:
            self.page.name_games(hub.attach(self.id, self.page.current))
            for event in journal_history(self.known) + events:
                hub.publish(self.id, event)

    # -- close -----------------------------------------------------------------------------------

    def close_board(self) -> None:
        """Stop deciding and showing: timers, the clock display, its own link (a bus
        is closed by the daemon, once for all its boards)."""
        if self.pipeline is not None:
            self.pipeline.close()
        if self.clock_display is not None:
            self.clock_display.close()
        if self.link is not None and not self.entry.bus_port:
            self.link.close()

    def close_journal(self) -> None:
        if self.journal is not None:
            self.journal.close()


async def _answer_of(task: Any) -> dict[str, str]:
    """A penalty's setting of the clock, awaited, as the console's words."""
    return (await asyncio.shield(task)).to_answer()


class PlayerSpeech:
    """One board's player hearing his game: an output of the game's pipeline (his own
    board's, or the one his board is bound to). The announcer is made after READY;
    what the game says meanwhile waits here (``starting``) and is handed to it in
    order. In a two-board game (``pair``) each player hears the fixes for his own
    board only."""

    def __init__(
        self, board_id: str, pair: Callable[[], TwoBoardGame | None], starting: bool
    ) -> None:
        self.board_id = board_id
        self._pair = pair
        self.announcer: Any = None
        self._backlog: list[DomainEvent] | None = [] if starting else None
        #: the moves a restart may have cut from the player's ear
        #: (``daemon.speech.restart``): said again right after "game resumed"
        self.unheard: list[DomainEvent] = []

    def receive(self, event: DomainEvent) -> None:
        pair = self._pair()
        if (
            pair is not None
            and isinstance(event, Irregularity)
            and event.kind == "boards_diverged"
            and event.by != pair.owner_of(self.board_id)
        ):
            return
        if self.announcer is not None:
            self._give(self.announcer, event)
        elif self._backlog is not None:
            self._backlog.append(event)  # the speech is starting

    def start(self, announcer: Any) -> None:
        """The speech is up (``announcer``; None: it is not to be): what waited is
        said first, in order, before any later event."""
        backlog, self._backlog = self._backlog or [], None
        if announcer is None:
            return
        for event in backlog:
            self._give(announcer, event)
        self.announcer = announcer

    def _give(self, announcer: Any, event: DomainEvent) -> None:
        announcer.receive(event)
        if event.type == "game_resumed" and self.unheard:
            unheard, self.unheard = self.unheard, []
            for move in unheard:
                announcer.receive(move)
