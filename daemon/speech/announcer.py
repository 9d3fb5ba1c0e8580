"""The announcer: the event feed in, speech out, never in the rules core's way.

``handle(event)`` is called by the daemon for every event-feed dict. It only
folds the event into its own ``GameRecord``, builds the text (pure functions) and
offers it to the ``SpeechQueue``: no I/O, no waiting, and no exception ever
escapes into the caller. ``run()`` is the one task that speaks, one announcement
at a time; a new move interrupts a stale one by cancelling the engine call, which
kills the player at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable
from typing import Any, TextIO

from daemon.gamerecord import GameRecord
from daemon.speech.answers import answer, move_phrase
from daemon.speech.engines import Engine, SpeechFailure, build_engine
from daemon.speech.messages import event_text
from daemon.speech.queue import Announcement, Kind, SpeechQueue
from daemon.speech.settings import SpeechSettings
from daemon.speech.vocabulary import Vocabulary, load_vocabulary

log = logging.getLogger("dgt_bridge.speech")

#: How each event type is queued (see ``daemon.speech.queue``).
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
}


class Announcer:
    """Speaks the event feed; ``Announcer(settings, engine)``, then ``await run()``."""

    def __init__(
        self,
        settings: SpeechSettings,
        engine: Engine,
        *,
        vocabulary: Vocabulary | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.vocabulary = vocabulary or load_vocabulary(settings.vocabulary)
        self.clock = clock
        self.record = GameRecord()
        self.queue = SpeechQueue(settings.stale_after)
        self.spoken: list[Announcement] = []  # the last few heard (newest last)
        self._ids = itertools.count(1)
        self._wake = asyncio.Event()
        self._current: tuple[Announcement, asyncio.Task[None]] | None = None
        self._closing = False
        self._idle = asyncio.Event()
        self._idle.set()

    # -- the feed side: never blocks, never raises --------------------------------

    def handle(self, event: dict[str, Any]) -> None:
        """Take one event-feed dict (called in the event loop's thread)."""
        try:
            self._handle(event)
        except Exception:  # the rules core must never see speech's problems
            kind = event.get("type") if isinstance(event, dict) else type(event).__name__
            log.exception("announcer: could not handle %r", kind)

    def _handle(self, event: dict[str, Any]) -> None:
        if not isinstance(event, dict):
            raise TypeError(f"an event-feed dict, not {type(event).__name__}")
        kind = str(event.get("type") or "")
        if kind == "info_request":
            if kind in self.settings.announce:
                by = event.get("by") or self.settings.own_side or None
                self.ask(str(event.get("what") or ""), event.get("args"), by)
            return
        self.record.apply(event)
        if kind not in self.settings.announce:
            return
        if kind == "move":
            if event.get("by") not in self.settings.sides:
                return
            ply = int(event["ply"])
            phrase = move_phrase(
                self.record,
                ply,
                self.vocabulary,
                form=self.settings.form,
                say_pawn=self.settings.say_pawn,
                fallback=str(event.get("speech") or ""),
            )
            if event.get("correction"):
                phrase = self.vocabulary.message("move_correction", move=phrase)
            self._offer("move", phrase, ply=ply)
            return
        text = event_text(event, self.vocabulary, self.record.board())
        if not text:
            return
        takeback = int(event["ply"]) if kind == "takeback" and "ply" in event else None
        self._offer(EVENT_KINDS.get(kind, "info"), text, takeback_ply=takeback)

    def catch_up(self, events: list[dict[str, Any]]) -> None:
        """Fold earlier events (a resumed game's journal) without saying them, so
        "last move" and the next move's phrase know the game from its start."""
        for event in events:
            self.record.apply(event)

    def ask(self, what: str, args: dict[str, Any] | None = None, by: str | None = None) -> str:
        """Answer a request now (first in the queue) and return the written answer."""
        text = answer(
            what,
            args,
            self.record,
            self.vocabulary,
            by=by,
            form=self.settings.form,
            say_pawn=self.settings.say_pawn,
        )
        self._offer("answer", text)
        return text

    def _offer(
        self, kind: Kind, written: str, *, ply: int | None = None, takeback_ply: int | None = None
    ) -> None:
        item = Announcement(
            id=next(self._ids),
            kind=kind,
            written=written,
            spoken=self.vocabulary.pronounce(written),
            created=self.clock(),
            ply=ply,
            takeback_ply=takeback_ply,
        )
        decision = self.queue.offer(item, item.created)
        for old in decision.cancelled:
            log.info("speech: %r cancelled, superseded by %r", old.written, written)
        if decision.interrupt is not None and self._current is not None:
            playing, task = self._current
            if playing.id == decision.interrupt.id:
                log.info("speech: %r interrupted by %r", playing.written, written)
                task.cancel()
        self._idle.clear()
        self._wake.set()

    # -- the speaking side ----------------------------------------------------------

    async def run(self) -> None:
        """Speak until ``close()``; one announcement at a time."""
        while not self._closing:
            item = self.queue.next(self.clock())
            for old in self.queue.expired:
                log.warning("speech: %r dropped, out of date", old.written)
            self.queue.expired.clear()
            if item is None:
                self._idle.set()
                self._wake.clear()
                await self._wake.wait()
                continue
            await self._speak(item)

    async def _speak(self, item: Announcement) -> None:
        task = asyncio.create_task(self.engine.speak(item.written, item.spoken))
        self._current = (item, task)
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # run() itself is being cancelled
            task.cancel()
            raise
        finally:
            self._current = None
            self.queue.finished(item)
        if task.cancelled():
            return
        exc = task.exception()
        if isinstance(exc, SpeechFailure):
            log.error("speech: %r was not spoken: %s", item.written, exc)
        elif exc is not None:
            log.error("speech: %r failed", item.written, exc_info=exc)
        else:
            self.spoken.append(item)
            del self.spoken[:-50]

    async def drain(self) -> None:
        """Wait until everything queued has been spoken (or dropped)."""
        while not (self.queue.idle and self._current is None):
            self._idle.clear()
            await self._idle.wait()

    async def close(self) -> None:
        self._closing = True
        if self._current is not None:
            self._current[1].cancel()
        self._wake.set()
        with contextlib.suppress(Exception):
            await self.engine.close()


async def make_announcer(
    settings: SpeechSettings,
    *,
    on_problem: Callable[[str], None] | None = None,
    text_stream: TextIO | None = None,
) -> Announcer:
    """The announcer with the configured engine chain, started (the worker is up).

    ``on_problem`` hears each engine failure once (e.g. to show it on the live page);
    ``text_stream`` is where the text engine prints (default stdout: pass stderr
    when stdout carries the JSON event feed). A bad vocabulary raises
    ``VocabularyError`` here, at start-up, with the file and the key.
    """
    vocabulary = load_vocabulary(settings.vocabulary)
    engine = build_engine(
        settings,
        settings.voice or vocabulary.voice,
        on_problem=on_problem,
        text_stream=text_stream,
    )
    await engine.start()
    return Announcer(settings, engine, vocabulary=vocabulary)
