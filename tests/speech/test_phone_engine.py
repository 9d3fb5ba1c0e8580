"""The phone engine: a page that never reports, goes away, or is cut short."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from daemon.speech.phone import PhoneEngine
from daemon.speech.phoneline import PhoneLine
from daemon.speech.settings import SpeechSettings
from daemon.speech.vocabulary import load_vocabulary


def engine() -> tuple[PhoneEngine, PhoneLine, list[dict], Callable[[], None]]:
    line = PhoneLine("1", "black")
    sent: list[dict] = []
    detach = line.attach(sent.append)
    return PhoneEngine(line, SpeechSettings(engine="text"), load_vocabulary()), line, sent, detach


async def test_a_page_that_never_reports_is_waited_for_a_bounded_time() -> None:
    phone, _line, sent, _detach = engine()
    started = time.monotonic()
    delivery = await phone.speak("Dame", "Dame")
    waited = time.monotonic() - started
    assert sent[0]["text"] == "Dame" and sent[0]["lang"] == "de"
    assert 0.9 < waited < 2.0  # twice the phrase's estimate and 1 s, not forever
    assert delivery.engine == "phone"


async def test_a_page_that_leaves_or_reports_ends_the_wait_at_once() -> None:
    phone, line, sent, detach = engine()
    task = asyncio.create_task(phone.speak("Bauer Eva fuenf", "Bauer Eva fuenf"))
    await asyncio.sleep(0.05)
    assert sent[0]["text"] == "Bauer Eva fünf"  # the plain respelling, not espeak's codes
    assert line.spoken(sent[0]["id"]) is True
    await asyncio.wait_for(task, 0.2)

    task = asyncio.create_task(phone.speak("Turm Anna eins", "Turm Anna eins"))
    await asyncio.sleep(0.05)
    assert sent[-1]["text"] == "Turm Anna eins"  # "eins" has a phoneme code: left as written
    detach()  # the last page went away
    await asyncio.wait_for(task, 0.2)


async def test_a_cut_phrase_stops_the_page_and_fast_play_is_quicker() -> None:
    phone, _line, sent, _detach = engine()
    task = asyncio.create_task(phone.speak("Springer Felix drei", "", budget=0.3))
    await asyncio.sleep(0.05)
    assert sent[0]["rate"] > 1.0  # said quicker to fit the pace, as the earphone's
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert sent[-1] == {"type": "cancel", "id": sent[0]["id"]}


async def test_a_phone_line_without_a_page_composes_nothing_and_a_later_page_hears_the_next_move(
    monkeypatch,
) -> None:
    # A speaking board holds two phone lines from the start; with no phone open they
    # follow the game without composing a phrase (a replayed position each move, on
    # the way to the earphone's first sound), and the first phrase a page hears is right.
    from daemon.speech import announcer as announcer_module
    from daemon.speech.phone import PhoneAnnouncer
    from tests.speech.test_announcer import Game

    composed: list[int] = []
    compose = announcer_module.move_phrase

    def counted(record, ply, *args, **kwargs):
        composed.append(ply)
        return compose(record, ply, *args, **kwargs)

    monkeypatch.setattr(announcer_module, "move_phrase", counted)
    line = PhoneLine("1", "black")
    phone = PhoneAnnouncer(line, SpeechSettings(engine="text"), vocabulary=load_vocabulary())
    running = asyncio.create_task(phone.run())
    game = Game()
    phone.receive(game.start())
    try:
        for san in ("e4", "e5", "Nf3"):
            phone.receive(game.move(san))
        await asyncio.sleep(0.05)
        assert composed == []  # no page: nothing composed, nothing said

        sent: list[dict] = []
        line.attach(sent.append)
        phone.receive(game.move("Nc6"))
        for _ in range(100):
            if sent:
                break
            await asyncio.sleep(0.01)
        assert composed == [4]
        said = [m["text"] for m in sent if m["type"] == "say"]
        assert said == ["Springer Zäsar sechs"]  # the phone's respelling of "Cesar"
    finally:
        await phone.close()
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
