"""Appendix E.9.e as an option (``speech.tell_touches``): the blind player is told
when the other player touched one of his own pieces (a touch that may bind him,
4.3a) and when a flag falls. Through the rules core's events into the announcer,
as the daemon wires them (``compose.build_core``)."""

from __future__ import annotations

import asyncio

import chess

from daemon.compose import build_core
from daemon.config import load_text
from daemon.game.events import FlagFall
from daemon.speech.announcer import Announcer
from daemon.speech.settings import SpeechSettings
from daemon.speech.vocabulary import load_vocabulary
from drivers.sensors import BoardDump, SquareChange
from tests.speech.recorder import Recorder


def core_events(tell: bool, steps: list[tuple[str, str | None]]) -> list:
    """The core's events for the start position and then each square change."""
    text = "clock:\n  device: none\nspeech:\n  engine: text\n"
    if tell:
        text += "  tell_touches: true\n"
    core = build_core(load_text(text, "test.yaml", environ={}))
    events = list(core.judge(BoardDump(0.0, chess.Board().board_fen())))
    events += core.tick(2.0)
    t = 2.0
    for square, piece in steps:
        t += 0.4
        events += core.judge(SquareChange(t, square, piece))
        t += 2.0
        events += core.tick(t)
    return events


# White lifts his knight and puts it back (bound to move it: 4.3a), lifts his rook
# (it cannot move: binds nobody) and Black's pawn (not his own), then plays e4;
# Black lifts his d-pawn and puts it back.
STEPS = [
    ("g1", None), ("g1", "N"),
    ("a1", None), ("a1", "R"),
    ("e7", None), ("e7", "p"),
    ("e2", None), ("e4", "P"),
    ("d7", None), ("d7", "p"),
]  # fmt: skip


def test_the_core_reports_a_touch_of_his_own_movable_piece_put_back() -> None:
    touches = [e for e in core_events(True, STEPS) if e.type == "touch"]
    assert [(e.by, e.square, e.piece) for e in touches] == [
        ("white", "g1", "N"),
        ("black", "d7", "p"),
    ]
    assert [e for e in core_events(False, STEPS) if e.type == "touch"] == []  # the option


async def said(settings: SpeechSettings, events: list) -> list[str]:
    engine = Recorder()
    announcer = Announcer(settings, engine, vocabulary=load_vocabulary())
    runner = asyncio.create_task(announcer.run())
    await announcer.start()
    for event in events:
        announcer.receive(event)
        await asyncio.sleep(0)
        await asyncio.wait_for(announcer.drain(), 5)
    await announcer.close()
    runner.cancel()
    return engine.heard


async def test_the_blind_player_hears_the_other_players_touches_and_the_flag() -> None:
    flag = FlagFall(40.0, "white")
    events = [*core_events(True, STEPS), flag]
    black = SpeechSettings(engine="text", own_side="black", tell_touches=True,
                           announce=("move",))  # fmt: skip
    heard = await said(black, events)
    assert "Weiß: Springer Gustav eins berührt" in heard
    assert not [h for h in heard if "Schwarz: Bauer David sieben" in h]  # his own
    assert "Zeit abgelaufen: Weiß" in heard  # whatever announce says
    assert heard.index("Weiß: Springer Gustav eins berührt") < heard.index("Bauer Eva vier")

    white = SpeechSettings(engine="text", own_side="white", tell_touches=True)
    heard = await said(white, events)
    assert "Schwarz: Bauer David sieben berührt" in heard
    assert not [h for h in heard if "Springer Gustav eins berührt" in h]

    off = SpeechSettings(engine="text", own_side="black", announce=("move",))
    heard = await said(off, events)
    assert not [h for h in heard if "berührt" in h or "Zeit" in h]
