"""A blind player's own phone as his earphone (Appendix E.9): the phone's page speaks.

The daemon sends each phrase's *text* to the player's page (``/listen``) and the
phone's own speech engine (the browser's ``speechSynthesis``) says it. Chosen over
streaming the Pi's synthesis as audio:

- lag: a phrase is a few dozen bytes on the page's open event stream; the phone
  starts speaking at once, where streamed audio needs the Pi's synthesis first,
  then a buffer on the phone against Wi-Fi jitter (a hall's Wi-Fi loses 100-300 ms
  at times), then the decoder;
- offline: the phone's voices are installed on the phone (Android and iOS ship
  them), so nothing leaves the hall's network, and the page loads nothing else;
- load: a Pi Zero synthesises for its own earphones; forty phones' audio streams
  would be forty syntheses and forty streams, the text is nothing;
- the phone's screen reader (TalkBack, VoiceOver) and its volume keys stay the
  player's own.

What is lost: the daemon's voice and pronunciation lexicon (espeak-ng's phoneme
codes mean nothing to another engine; the plain respellings, "fünf" for "fuenf",
are kept), and the exact length of a phrase. So the page says when each phrase
has ended (``spoken``) and the schedule waits for that, as for an earphone's
player: moves first, answers in the gaps, nothing piled up in the phone's own
queue. A page that does not answer is waited for no longer than the phrase's
estimated length at a slow rate.

``PhoneLine`` is one player's line to his page(s) for one board; the web side
(``daemon.broadcast.phone``) attaches a page's stream to it. A ``PhoneAnnouncer``
speaks into it only while a page listens: with no phone there, nothing is said
(and nothing journalled), but the game is followed, so the first phrase a phone
hears is right.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from daemon.game.record import GameRecord
from daemon.speech.announcer import Announcer, OutcomeSink
from daemon.speech.engines import Delivery
from daemon.speech.phoneline import PhoneLine
from daemon.speech.schedule import quicker_rate, spoken_seconds
from daemon.speech.settings import SpeechSettings
from daemon.speech.vocabulary import Vocabulary

log = logging.getLogger("dgt_bridge.speech")

#: The words per minute a page's speech rate 1.0 stands for (the browsers' normal
#: speed is about that of espeak-ng at 150).
RATE_ONE = 150

#: A page is waited for at most this many times a phrase's estimated length, plus
#: ``SLACK`` seconds (a phone's voice may be slower than espeak-ng's estimate).
PATIENCE = 2.0
SLACK = 1.0


class PhoneEngine:
    """Speaks by sending the phrase's text to the player's page(s) and waiting for
    a page to have said it; cancelling tells the pages to stop at once."""

    name = "phone"

    def __init__(self, line: PhoneLine, settings: SpeechSettings, vocabulary: Vocabulary) -> None:
        self.line = line
        self.settings = settings
        self.lang = vocabulary.voice.split("+")[0] or "de"
        # only plain respellings ("fünf"): espeak-ng's phoneme codes are its own
        self.respell = {
            written: said for written, said in vocabulary.pronunciation.items() if "[[" not in said
        }

    async def start(self) -> None:
        return None

    def phone_text(self, written: str) -> str:
        """The written text with the vocabulary's plain respellings, whole words."""
        words = written.split(" ")
        return " ".join(self._respelled(word) for word in words)

    def _respelled(self, word: str) -> str:
        core = word.rstrip(".,:;")
        said = self.respell.get(core)
        return word if said is None else said + word[len(core) :]

    async def speak(self, written: str, spoken: str, budget: float | None = None) -> Delivery:
        rate = int(self.settings.rate)
        seconds = spoken_seconds(written, rate)
        quicker = quicker_rate(seconds, budget, rate, int(self.settings.max_rate))
        if quicker is not None:
            rate, seconds = quicker, spoken_seconds(written, quicker)
        if not self.line.listening:
            return Delivery(self.name, None, rate)
        phrase_id, done = self.line.say(self.phone_text(written), self.lang, rate / RATE_ONE)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(done), seconds * PATIENCE + SLACK)
        except asyncio.CancelledError:
            self.line.send({"type": "cancel", "id": phrase_id})
            raise
        finally:
            self.line.forget(phrase_id)
        return Delivery(self.name, seconds, rate)

    async def close(self) -> None:
        return None


class PhoneAnnouncer(Announcer):
    """The announcer of one player's phone page: it answers the questions asked on
    that page (``to: page``), and says nothing while no page listens."""

    on_page = True

    def __init__(self, line: PhoneLine, settings: SpeechSettings, **kwargs: Any) -> None:
        vocabulary = kwargs["vocabulary"]
        super().__init__(settings, PhoneEngine(line, settings, vocabulary), **kwargs)
        self.line = line

    def _heard(self) -> bool:
        """No phone there: the game is followed, nothing is composed or said."""
        return self.line.listening


def phone_settings(settings: SpeechSettings, side: str) -> SpeechSettings:
    """A phone page's settings: its player's earphone's (``speech.outputs``), else
    the section's, answering that player's questions."""
    for output in settings.per_output():
        if output.listener == side:
            return output
    return replace(settings, outputs=(), own_side=side, _listener=side)


def build_phone_announcers(
    settings: SpeechSettings,
    vocabulary: Vocabulary,
    lines: dict[str, PhoneLine],
    *,
    on_outcome: OutcomeSink | None = None,
    clock: Callable[[], float] = time.monotonic,
    record: GameRecord | None = None,
) -> list[PhoneAnnouncer]:
    """One announcer per player's phone line (``lines``: side -> line), reading the
    board's one game ``record`` as the earphones' do."""
    announcers = []
    for side, line in lines.items():
        own = phone_settings(settings, side)
        outcome = None if on_outcome is None else _labelled(on_outcome, side)
        announcers.append(
            PhoneAnnouncer(
                line, own, vocabulary=vocabulary, clock=clock, on_outcome=outcome, record=record
            )
        )
    return announcers


def _labelled(sink: OutcomeSink, side: str) -> OutcomeSink:
    """The journal's ``speech`` lines of a phone say so (``output: phone black``)."""

    def outcome(record: dict[str, Any]) -> None:
        sink({**record, "output": f"phone {side}"})

    return outcome
