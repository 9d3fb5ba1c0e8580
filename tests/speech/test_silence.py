"""The arbiter's "silence": a ``say`` control the rules core passes on and the
announcer obeys by stopping what it says, and saying nothing that waited."""

from __future__ import annotations

import asyncio

from daemon.game.events import InfoRequest
from daemon.rules.core import RulesCore
from drivers.sensors import Request
from tests.speech.test_announcer import WAIT, Game, running, started  # noqa: F401


async def test_silence_stops_the_announcement_and_what_waits_and_speech_goes_on(running):  # noqa: F811
    outcomes: list[dict] = []
    announcer, engine = running(on_outcome=outcomes.append)
    game = Game()
    announcer.receive(game.move("e4"))
    await started(engine, 1)
    announcer.receive(game.move("c5"))  # waits while the first plays
    announcer.receive(InfoRequest(t=3.0, what="silence").to_dict())
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.cut == ["Bauer Eva vier"] and engine.heard == []
    assert len(engine.started) == 1, "what waited is not said"
    assert {o["outcome"] for o in outcomes} >= {"cancelled", "cut"}
    assert any(o.get("reason") == "silenced by the arbiter" for o in outcomes)

    announcer.receive(game.move("Nf3"))  # the next move is said as ever
    await started(engine, 2)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.heard == ["Springer Felix drei"]


def test_the_rules_core_passes_the_arbiter_s_silence_on_to_the_speech():
    events = RulesCore().judge(Request(t=1.0, action="say", args={"what": "silence"}))
    assert [(e.type, getattr(e, "what", None)) for e in events] == [("info_request", "silence")]
