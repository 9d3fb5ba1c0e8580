"""Irregularities said while they still matter (issue 27): who and what first, then
the fix, then the consequence; a claim notice only while the claim is open (4.7);
a list of displaced pieces said once, an outdated one dropped."""

from __future__ import annotations

import asyncio

import pytest

from daemon.game.events import Irregularity
from daemon.speech.messages import event_phrases, event_text
from daemon.speech.vocabulary import load_vocabulary
from tests.speech.test_announcer import WAIT, Game, running, started  # noqa: F401

CLAIM = "Reklamation beim Schiedsrichter möglich"


def illegal(count: int, consequence: str) -> dict:
    return Irregularity(
        t=3.0, kind="illegal_move", article="7.4", by="white", squares=["g1", "e5"],
        restore=[{"square": "g1", "piece": "N"}, {"square": "e5", "piece": None}],
        count=count, consequence=consequence,
    ).to_dict()  # fmt: skip


def test_an_illegal_move_says_who_and_what_then_the_fix_then_the_two_minutes() -> None:
    de, en = load_vocabulary("appendix-e"), load_vocabulary("en")
    event = illegal(1, "the opponent gets two extra minutes (7.4b)")
    assert event_text(event, de) == (
        "Weiß: Unmöglicher Zug. Springer zurück auf Gustav eins."
        " Unmögliche Züge Weiß: 1. Schwarz erhält zwei Minuten"
    )
    assert event_text(event, en).startswith("White: illegal move. Knight back to Golf one.")
    assert event_text(event, en).endswith("Black gets two extra minutes")
    # Each its own phrase: a move waiting is said at a boundary, the fix before it.
    assert event_phrases(event, de)[0][0] == "Weiß: Unmöglicher Zug"


def test_the_illegal_move_that_loses_says_so() -> None:
    de = load_vocabulary("appendix-e")
    event = illegal(
        3, "third illegal move: the game is lost, unless ... (7.4b); the arbiter decides"
    )
    assert event_text(event, de).endswith("Weiß: Partie verloren, Entscheidung des Schiedsrichters")


def white_touched_the_knight_and_moved_the_pawn() -> dict:
    return Irregularity(
        t=1.2, kind="touch_move", article="4.3", by="white", squares=["g1"], count=1
    ).to_dict()


async def test_a_claim_notice_is_dropped_once_the_claimant_has_touched_a_piece(
    running,  # noqa: F811
) -> None:
    outcomes: list[dict] = []
    announcer, engine = running(on_outcome=outcomes.append)
    game = Game()
    announcer.receive(game.move("e4"))
    await started(engine, 1)  # "Bauer Eva vier" plays
    announcer.receive(white_touched_the_knight_and_moved_the_pawn())
    engine.release()
    await started(engine, 2)  # the touch-move message's first sentence plays
    announcer.receive(game.move("e5"))  # Black has touched a piece: 4.7, no claim now
    for _ in (3, 4):
        engine.release()
        await asyncio.sleep(0.05)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.heard[0] == "Bauer Eva vier"
    assert engine.heard[1].startswith("Berührt, geführt: Springer Gustav eins zuerst berührt")
    assert "Bauer Eva fuenf" in engine.heard
    assert not any(CLAIM in text for text in engine.heard), engine.heard
    dropped = [o for o in outcomes if o.get("outcome") == "dropped"]
    assert any(CLAIM in o["text"] and "4.7" in o["reason"] for o in dropped), outcomes


async def test_a_claim_notice_is_said_while_the_claim_is_open(running) -> None:  # noqa: F811
    announcer, engine = running()
    game = Game()
    announcer.receive(game.move("e4"))
    await started(engine, 1)
    announcer.receive(white_touched_the_knight_and_moved_the_pawn())
    for count in (2, 3, 4):  # the touch, the count, the claim
        engine.release()
        await started(engine, count)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.heard[-1] == CLAIM


def displaced(squares: list[str]) -> dict:
    return Irregularity(
        t=5.0, kind="displaced_pieces", article="7.3", by=None, squares=squares,
        restore=[{"square": s, "piece": "P"} for s in squares],
    ).to_dict()  # fmt: skip


@pytest.mark.parametrize("repeat", [False, True])
async def test_a_displaced_pieces_list_is_said_once_and_an_outdated_one_dropped(
    running,  # noqa: F811
    repeat: bool,
) -> None:
    outcomes: list[dict] = []
    announcer, engine = running(on_outcome=outcomes.append)
    game = Game()
    announcer.receive(game.move("e4"))
    await started(engine, 1)  # while the move plays, the board is reported twice
    announcer.receive(displaced(["a2", "b2", "c2", "d2", "f2", "g2", "h2"]))
    announcer.receive(displaced(["a2", "b2"]))  # the arbiter put five back meanwhile
    if repeat:
        announcer.receive(displaced(["a2", "b2"]))  # and again: nothing new is wrong
    for _ in range(2, 6):
        engine.release()
        await asyncio.sleep(0.05)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    lists = [text for text in engine.heard if "Figur verschoben" in text]
    assert lists == ["Figur verschoben: Bauer Weiß auf Anna zwei, Bauer Weiß auf Bella zwei"]
    assert not any("Cesar zwei" in text for text in engine.heard)
    reasons = [o.get("reason", "") for o in outcomes if o.get("outcome") == "dropped"]
    assert any("out of date" in r for r in reasons)
    assert any("said already" in r for r in reasons) == repeat
