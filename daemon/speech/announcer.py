"""The announcer: the event feed in, speech out, never in the rules core's way.

``receive(event)`` is called by the daemon for every event of the feed (the
announcer is an output of the board's pipeline, ``daemon.boards.outputs.Output``). It only
reads the board's one ``GameRecord`` (the daemon's pipeline has folded the event
into it; an announcer used alone folds its own), builds the text (pure functions) and
offers it to the ``SpeechSchedule``: no I/O, no waiting, and no exception ever
escapes into the caller. ``run()`` is the one task that speaks, one phrase at a
time, as the schedule says (moves first and never cut, answers phrase by phrase,
composed when spoken). Every outcome (heard, dropped, cancelled) goes to
``on_outcome`` for the journal, so a complaint can be checked afterwards.

One announcer speaks into one output (an earphone). ``AnnouncerGroup`` holds one
per player when ``speech.outputs`` names them, and routes a player's questions to
his own earphone only.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TextIO

from daemon.game.events import (
    EVENT_TYPES,
    ClockUpdate,
    DomainEvent,
    InfoRequest,
    Irregularity,
    Move,
    Takeback,
    Touch,
    from_dict,
)
from daemon.game.record import GameRecord
from daemon.speech.answers import REQUESTS, answer_phrases, joined, move_phrase
from daemon.speech.engines import Delivery, Engine, SpeechFailure, build_engine
from daemon.speech.messages import event_speech
from daemon.speech.schedule import (
    GAVE_WAY,
    Announcement,
    Kind,
    Outcome,
    Phrase,
    SpeechSchedule,
)
from daemon.speech.settings import SpeechSettings, SynthesisSeat
from daemon.speech.speechfirst import FIRST_SOUND, Hold, SpeechFirst
from daemon.speech.vocabulary import Vocabulary, vocabulary_of

log = logging.getLogger("dgt_bridge.speech")

#: How each event type is queued (see ``daemon.speech.schedule``).
EVENT_KINDS: dict[str, Kind] = {
    "irregularity": "important",
    "game_end": "important",
    "flag": "important",
    "takeback": "important",
    "game_start": "important",
    "game_resumed": "important",
    "penalty": "important",
    "connection": "important",
    "position_restored": "info",
    "draw_claimable": "info",
    "touch": "info",  # E.9.e: stale once a move is made
}

OutcomeSink = Callable[[dict[str, Any]], None]

#: Irregularities that list what is wrong on the board: reported again while it stays
#: wrong (after a missed set-up, 17 lists of 24-39 squares took 6 minutes to say).
LISTS = frozenset({"displaced_pieces", "wrong_setup"})


class Announcer:
    """Speaks the event feed into one output; ``Announcer(settings, engine)``, then
    ``await run()``."""

    #: This output is a player's phone page (``daemon.speech.phone``): it answers the
    #: questions asked on that page, and the earphones those asked elsewhere.
    on_page = False

    def __init__(
        self,
        settings: SpeechSettings,
        engine: Engine,
        *,
        vocabulary: Vocabulary | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_outcome: OutcomeSink | None = None,
        record: GameRecord | None = None,
        speech_first: SpeechFirst | None = None,
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.vocabulary = vocabulary or vocabulary_of(settings)
        self.clock = clock
        self.on_outcome = on_outcome
        #: the game as the answers and move phrases read it: the daemon's board's one
        #: record (folded before the announcer hears an event), or, alone (a tool, a
        #: test), one the announcer folds itself
        self.record = record if record is not None else GameRecord()
        self._folds = record is None
        self.schedule = SpeechSchedule(
            settings.stale_after,
            max_interruptions=settings.max_interruptions,
            joiner=f"{self.vocabulary.words['list_separator']} ",
            max_rate=int(settings.max_rate),
        )
        self.spoken: list[Phrase] = []  # the last phrases heard (newest last)
        self.deliveries: list[tuple[Phrase, Delivery]] = []  # the same, how they were said
        self._ids = itertools.count(1)
        self._wake = asyncio.Event()
        #: the phrase being said and its task (``_start``'s or ``_begin``'s)
        self._current: tuple[Phrase, asyncio.Task[Any]] | None = None
        self._closing = False
        self._running = False  # run() is speaking (the engine has started)
        self._begun: asyncio.Task[Delivery | None] | None = None  # see _start_now
        self._idle = asyncio.Event()
        self._idle.set()
        self._clock_seen_at: float | None = None
        self._last_request: tuple[str, float] | None = None
        self._lists: dict[str, str] = {}  # kind -> the last list of it offered
        #: the daemon's gate for a move's other outputs (``daemon.speech.speechfirst``),
        #: and this announcer's holds on it: announcement id -> its hold
        self.speech_first = speech_first
        self._holds: dict[int, Hold] = {}

    # -- the feed side: never blocks, never raises --------------------------------

    def receive(self, event: DomainEvent | dict[str, Any]) -> None:
        """Take one event of the feed, typed as the daemon's outputs get it (a feed
        dict, as a journal stores it, is read back into its event first); called in
        the event loop's thread."""
        try:
            if isinstance(event, DomainEvent):
                self._take(event)
            elif event.get("type") in EVENT_TYPES:
                self._take(from_dict(event, lenient=True))
            elif self._folds:  # no event of the feed (a journal's own line): remembered
                self.record.apply(event)
        except Exception:  # the rules core must never see speech's problems
            kind = event.get("type") if isinstance(event, dict) else type(event).__name__
            log.exception("announcer: could not handle %r", kind)

    def _take(self, event: DomainEvent) -> None:
        match event:
            case InfoRequest(what="silence"):
                self.silence()
                return
            case InfoRequest(what=what, args=args, by=by, to=to):
                if (to == "page") != self.on_page:
                    return  # asked on his phone's page: that page answers, alone
                asker = by or self.settings.own_side or None
                if event.type in self.settings.announce and self.settings.hears_requests_of(asker):
                    self.ask(what, args, asker)
                return
        # The game record and the message texts read the feed's fields (the journal
        # gives them the same dicts when a game resumes).
        data = event.to_dict()
        if event.type in ("game_start", "move", "takeback"):
            self._lists.clear()  # the board was right again: a new list is news
        if self._folds:
            self.record.apply(data)
        match event:
            case ClockUpdate():
                self._clock_seen_at = self.clock()
            case Move(by=by):
                self.schedule.note_move(self.clock(), self._spoken_in(by))
                self.schedule.touched(str(by))
        if event.type not in self.settings.announce and not self._told(event):
            return
        if not self._heard():
            return  # nobody to say it to (a phone page not open): nothing composed
        if isinstance(event, Touch) and (not self.settings.tell_touches or self._own(data)):
            return  # E.9.e: the other player's touches, and only when asked for
        match event:
            case Move(by=by, ply=ply, speech=speech, correction=correction):
                if by not in self.settings.sides:
                    return
                ply = int(ply)  # a damaged journal line must not become a phrase
                phrase = move_phrase(
                    self.record,
                    ply,
                    self.vocabulary,
                    form=self.settings.form,
                    say_pawn=self.settings.say_pawn,
                    fallback=str(speech or ""),
                )
                if correction and self._was_said(ply):
                    phrase = self.vocabulary.message("move_correction", move=phrase)
                self._offer(Announcement(next(self._ids), "move", self.clock(), phrase, ply=ply))
                return
        text, phrases = event_speech(data, self.vocabulary, self.record.board())
        if not phrases:
            return
        takeback = event.ply if isinstance(event, Takeback) else None
        parts: tuple[str, ...] = ()
        fixes: frozenset[int] = frozenset()
        claims: frozenset[int] = frozenset()
        resume = ""
        supersedes = ""
        if isinstance(event, Irregularity):
            if event.kind in LISTS:
                # A list of what is wrong is said once; a newer one replaces what is
                # left of the older, and the same list again is not said.
                if self._lists.get(event.kind) == text:
                    self.schedule.outcomes.append(
                        Outcome("dropped", "important", text, self.clock(), "said already")
                    )
                    return
                self._lists[event.kind] = text
                supersedes = event.kind
            if len(phrases) > 1 and not self._own(data):
                parts = tuple(text for text, _ in phrases)
                fixes = frozenset(n for n, (_, only_fix) in enumerate(phrases) if only_fix)
                claim = self.vocabulary.message("claim_open")
                claims = frozenset(n for n, part in enumerate(parts) if part == claim)
                pieces = parts[0].split(":")
                title = pieces[0]
                if title.split()[-1:] and title.split()[-1] in self.vocabulary.colours.values():
                    title = ":".join(pieces[:2])  # "Weiß: Unmöglicher Zug", who and what
                title = title.rstrip(".")
                resume = self.vocabulary.message("answer_resumed", request=title)
        mover = data.get("by")
        claimant = {"white": "black", "black": "white"}.get(str(mover), "") if claims else ""
        self._offer(
            Announcement(
                next(self._ids),
                EVENT_KINDS.get(event.type, "info"),
                self.clock(),
                text,
                takeback_ply=takeback,
                parts=parts,
                fix_parts=fixes,
                resume_text=resume,
                claim_parts=claims,
                claimant=claimant,
                supersedes=supersedes,
            )
        )

    def _told(self, event: DomainEvent) -> bool:
        """E.9.e (``tell_touches``): touches and flags are said whatever ``announce``."""
        return bool(self.settings.tell_touches) and event.type in ("touch", "flag")

    def _own(self, event: dict[str, Any]) -> bool:
        """An irregularity of the player this output speaks to: said whole, before any
        later move. It is what he must put right on his own board now (the game
        cannot go on until he has), so it is never broken up; the opponent's, or
        one whose player is not known, gives way to a move at each sentence."""
        player = self.settings.listener or self.settings.own_side
        return bool(player) and event.get("by") == player

    def _spoken_in(self, mover: object) -> int | None:
        """How many half-moves away the next move that is said is, after ``mover``'s
        move: 1 when the side to move is announced, 2 when only the mover is (the
        player's own thinking time, in which answers fit), None when no move is."""
        sides = self.settings.sides if "move" in self.settings.announce else ()
        if mover not in ("white", "black"):
            return 1 if sides else None
        if ("black" if mover == "white" else "white") in sides:
            return 1
        return 2 if mover in sides else None

    def silence(self) -> None:
        """The arbiter's "silence": what is being said stops and nothing waiting is
        said (each counted as cancelled in the journal). A player who missed a
        move asks for it again ("last")."""
        now = self.clock()
        self.schedule._cancel(now, lambda item: True, "silenced by the arbiter")
        if self._current is not None:
            self._current[1].cancel()
        self._release(None)
        self._report()
        self._wake.set()

    def _was_said(self, ply: int) -> bool:
        """A correction is said as one only if the player heard (or hears) the move."""
        playing = self.schedule.playing
        return ply in (playing.plies if playing else ()) or any(
            ply in phrase.plies for phrase in self.spoken
        )

    def catch_up(self, events: list[dict[str, Any]]) -> None:
        """Fold earlier events (a resumed game's journal) without saying them, so
        "last move" and the next move's phrase know the game from its start (a
        record the daemon folds has them already)."""
        if not self._folds:
            return
        for event in events:
            self.record.apply(event)

    def ask(self, what: str, args: dict[str, Any] | None = None, by: str | None = None) -> str:
        """Queue the answer to a request and return its written text as of now.

        The spoken answer is composed phrase by phrase when it is said, so a clock
        answer gives the times of then. A second "last" within ``repeat_window``
        seconds asks for the last few moves (the button map in docs/speech.md).
        """
        now = self.clock()
        previous, self._last_request = self._last_request, (what, now)
        if (
            what == "last"
            and previous is not None
            and previous[0] in ("last", "moves")
            and now - previous[1] <= self.settings.repeat_window
        ):
            what = "moves"
            self._last_request = (what, now)

        def compose() -> list[tuple[str, ...]]:
            return answer_phrases(
                what,
                args,
                self.record,
                self.vocabulary,
                by=by,
                form=self.settings.form,
                say_pawn=self.settings.say_pawn,
                clock_now=self._clock_now(),
                recent=self.settings.repeat_moves,
                time_left=bool(self.settings.time_left),
            )

        request = what if what in REQUESTS else "unknown"
        name = self.vocabulary.requests.get(request, what)
        phrases = compose()
        item = Announcement(
            next(self._ids),
            "answer",
            now,
            joined(phrases),
            compose=compose,
            # A board reading's phrase names its colour again after a move: short
            # enough for blitz's gaps without "Weiter, Stellung:" before it.
            resume_text=""
            if what == "board"
            else self.vocabulary.message("answer_resumed", request=name),
            dropped_text=self.vocabulary.message("answer_dropped", request=name),
            patient=what == "board",
            supersedes="board" if what == "board" else "",
        )
        self._offer(item)
        return item.text

    def _clock_now(self) -> dict[str, float] | None:
        """Both clocks as they stand now: the running one has gone on since its report."""
        clock = self.record.clock
        if not clock or clock.get("white") is None or clock.get("black") is None:
            return None
        now = {"white": float(clock["white"]), "black": float(clock["black"])}
        running = clock.get("running")
        if running in now and self._clock_seen_at is not None:
            now[running] = max(0.0, now[running] - (self.clock() - self._clock_seen_at))
        return now

    def _heard(self) -> bool:
        """Whether what this announcer says can be heard now (an earphone always).
        Asked before a phrase is composed: a move's phrase is its position replayed,
        a fifth of a millisecond of a fast core, and a speaking board's two phone
        lines made two of them every move with no phone there, on the way to the
        earphone's first sound (issue 28)."""
        return True

    def _offer(self, item: Announcement) -> None:
        if not self._heard():
            return
        self.schedule.offer(item, item.created)
        gave_way = self._current is not None and self.schedule.give_way(self.clock())
        if gave_way:
            assert self._current is not None
            self._current[1].cancel()  # a reading's phrase beyond the gap: the move first
        if item.kind == "move" and (self._current is None or gave_way):
            self._hold(item)
        self._report()
        self._idle.clear()
        self._start_now()
        self._wake.set()

    def _hold(self, item: Announcement) -> None:
        """A move about to be said at once: the daemon's work that can wait (the page,
        MQTT) waits for its first sound (``daemon.speech.speechfirst``). Not for a phone
        page (its sound is the browser's), nor before the engine runs, nor for a move
        that waits behind a phrase being said (it waits by design; holding the page
        meanwhile would gain it nothing)."""
        if self.speech_first is None or self.on_page or not self._running or self._closing:
            return
        self._holds[item.id] = self.speech_first.hold()

    def _release(self, phrase: Phrase | None) -> None:
        """The holds of ``phrase``'s moves (None: every hold) are released: its first
        sound is out, or it is over."""
        if not self._holds:
            return
        ids = list(self._holds) if phrase is None else [item.id for item in phrase.items]
        for ident in ids:
            hold = self._holds.pop(ident, None)
            if hold is not None:
                hold.release()

    def _speaking(self, phrase: Phrase) -> None:
        """In the task that says ``phrase``: its player's first sample releases its
        holds (``speechfirst.first_sound``)."""
        FIRST_SOUND.set((lambda: self._release(phrase)) if self._holds else None)

    def _start_now(self) -> None:
        """If nothing is being said, a task is started in the turn of the event that
        brought the announcement; in its first step (the loop's next turn, so that
        every event of this turn is in: two moves decided together are said as one
        phrase) it chooses the phrase and sends it to the engine. ``run()``, woken a
        few turns later, would send it after the work the event left to the next turn
        (the journal's fsync and PGN rewrite, ``JournalSync``): issue 19, press ->
        first sound at a Pi's budget."""
        if self._current is not None or self._begun is not None:
            return
        if self._closing or not self._running:
            return
        self._begun = asyncio.create_task(self._begin())

    async def _begin(self) -> Delivery | None:
        """The next phrase chosen and said, as ``run()`` would (None: nothing to say)."""
        if self._current is not None or self._closing:
            return None
        phrase = self.schedule.next(self.clock())
        self._report()
        if phrase is None:
            return None
        task = asyncio.current_task()
        assert task is not None
        self._current = (phrase, task)
        spoken = self.vocabulary.pronounce(phrase.written)
        self._speaking(phrase)
        return await self.engine.speak(phrase.written, spoken, phrase.budget)

    def _report(self) -> None:
        for outcome in self.schedule.outcomes:
            expected = outcome.outcome in ("heard", "cancelled") or outcome.reason == GAVE_WAY
            level = logging.INFO if expected else logging.WARNING
            log.log(level, "speech %s: %r %s", outcome.outcome, outcome.text, outcome.reason)
            if self.on_outcome is not None:
                with contextlib.suppress(Exception):
                    self.on_outcome(outcome_record(outcome, self.settings.listener))
        self.schedule.outcomes.clear()

    # -- the speaking side ----------------------------------------------------------

    async def start(self) -> None:
        """Start the engine (pyttsx3's worker); what is offered meanwhile waits."""
        await self.engine.start()

    async def run(self) -> None:
        """Speak until ``close()``; one phrase at a time (the next may have been
        started by the event that brought it: ``_start_now``)."""
        self._running = True
        try:
            while not self._closing:
                if self._begun is not None:  # started by an event (``_start_now``)
                    begun = self._begun
                    while self._current is None and not begun.done():
                        await asyncio.sleep(0)  # its first step chooses the phrase
                    self._begun = None
                    if self._current is None:
                        continue  # it had nothing to say
                if self._current is None:
                    phrase = self.schedule.next(self.clock())
                    self._report()
                    if phrase is None:
                        wake_at = self.schedule.wake_at(self.clock())
                        if wake_at is None:
                            self._idle.set()
                        self._wake.clear()
                        timeout = None if wake_at is None else max(0.05, wake_at - self.clock())
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(self._wake.wait(), timeout)
                        continue
                    self._start(phrase)
                await self._finish()
        finally:
            self._running = False

    def _start(self, phrase: Phrase) -> None:
        spoken = self.vocabulary.pronounce(phrase.written)
        self._speaking(phrase)  # the task below starts with this context's copy
        task = asyncio.create_task(self.engine.speak(phrase.written, spoken, phrase.budget))
        FIRST_SOUND.set(None)
        self._current = (phrase, task)

    async def _finish(self) -> None:
        """Wait for the phrase being said, then note what became of it."""
        assert self._current is not None
        phrase, task = self._current
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # run() itself is being cancelled
            task.cancel()
            self.schedule.done(phrase, self.clock(), heard=False, reason="cut")
            self._report()
            raise
        finally:
            self._current = None
            self._release(phrase)
        if task.cancelled():
            self.schedule.done(phrase, self.clock(), heard=False, reason="cut")
        elif (exc := task.exception()) is not None:
            if isinstance(exc, SpeechFailure):
                log.error("speech: %r was not spoken: %s", phrase.written, exc)
            else:
                log.error("speech: %r failed", phrase.written, exc_info=exc)
            self.schedule.done(phrase, self.clock(), heard=False, reason=str(exc))
        else:
            self.schedule.done(phrase, self.clock())
            self.spoken.append(phrase)
            self.deliveries.append((phrase, task.result()))
            del self.spoken[:-50], self.deliveries[:-50]
        self._report()

    async def drain(self) -> None:
        """Wait until everything queued has been spoken (or dropped)."""
        while not (self.schedule.idle and self._current is None):
            self._idle.clear()
            await self._idle.wait()

    async def close(self) -> None:
        self._closing = True
        if self._current is not None:
            self._current[1].cancel()
        self._release(None)
        self._wake.set()
        with contextlib.suppress(Exception):
            await self.engine.close()


def outcome_record(outcome: Outcome, listener: str = "") -> dict[str, Any]:
    """A journal line for what became of an announcement (``type: speech``)."""
    record: dict[str, Any] = {
        "type": "speech",
        "outcome": outcome.outcome,
        "kind": outcome.kind,
        "text": outcome.text,
    }
    if outcome.plies:
        record["plies"] = list(outcome.plies)
    if outcome.reason:
        record["reason"] = outcome.reason
    if listener:
        record["output"] = listener
    return record


class AnnouncerGroup:
    """One announcer per output (per player's earphone), fed the same events."""

    def __init__(self, announcers: list[Announcer]) -> None:
        if not announcers:
            raise ValueError("at least one announcer")
        self.announcers = announcers

    @property
    def record(self) -> GameRecord:
        return self.announcers[0].record

    def receive(self, event: DomainEvent | dict[str, Any]) -> None:
        for announcer in self.announcers:
            announcer.receive(event)

    def catch_up(self, events: list[dict[str, Any]]) -> None:
        for announcer in self.announcers:
            announcer.catch_up(events)

    def ask(self, what: str, args: dict[str, Any] | None = None, by: str | None = None) -> str:
        """Asked on the web or the command line: said to the asker's earphone."""
        asker = by or self.announcers[0].settings.own_side or None
        texts = [
            a.ask(what, args, by)
            for a in self.announcers
            if a.settings.hears_requests_of(asker) and not a.on_page
        ]
        return texts[0] if texts else ""

    async def start(self) -> None:
        for announcer in self.announcers:
            await announcer.start()

    async def run(self) -> None:
        await asyncio.gather(*(announcer.run() for announcer in self.announcers))

    async def drain(self) -> None:
        await asyncio.gather(*(announcer.drain() for announcer in self.announcers))

    async def close(self) -> None:
        for announcer in self.announcers:
            await announcer.close()


def build_announcers(
    settings: SpeechSettings,
    vocabulary: Vocabulary,
    *,
    on_problem: Callable[[str], None] | None = None,
    text_stream: TextIO | None = None,
    on_outcome: OutcomeSink | None = None,
    clock: Callable[[], float] = time.monotonic,
    seat: SynthesisSeat | None = None,
    record: GameRecord | None = None,
    speech_first: SpeechFirst | None = None,
) -> Announcer | AnnouncerGroup:
    """One announcer per configured output (``speech.outputs``), or the one shared
    announcer when none is configured; engines not yet started (``await start()``).
    ``seat`` says who has the synthesis thread already (the hall's other boards);
    ``record``: the board's one game record, which every output reads;
    ``speech_first``: the daemon's gate that a move's phrase holds until its first
    sound (``daemon.speech.speechfirst``)."""
    announcers = []
    seat = seat or SynthesisSeat()
    for output in settings.per_output():
        output = replace(output, synthesis=seat.resolve(output.synthesis))
        engine = build_engine(
            output, output.voice or vocabulary.voice, on_problem=on_problem, text_stream=text_stream
        )
        announcers.append(
            Announcer(
                output,
                engine,
                vocabulary=vocabulary,
                clock=clock,
                on_outcome=on_outcome,
                record=record,
                speech_first=speech_first,
            )
        )
    return announcers[0] if len(announcers) == 1 else AnnouncerGroup(announcers)
