"""Events as text for people: one line per event, the same words everywhere.

The log, the demo's transcript and anything else that shows the feed to a person
use ``describe``, so a move, an irregularity and what to do about it read alike in
each. (The announcer speaks in the configured language through its vocabulary; the
live page draws from the same fields in the browser.)
"""

from __future__ import annotations

import json
from typing import Any

from daemon.game.events import (
    ClockUpdate,
    Connection,
    DomainEvent,
    GameEnd,
    GameResumed,
    GameStart,
    Irregularity,
    Move,
    Notice,
    PositionRestored,
    from_dict,
)


def describe(event: DomainEvent) -> str:
    """One readable line: ``1.    e4       Bauer Eva vier``, ``!! illegal_move (7.4)
    by white, count 1: put N on g1, clear g3``, ``game over: 1-0 (checkmate)``."""
    match event:
        case Move(ply=ply, san=san, speech=speech, by=by, correction=correction):
            number = (ply + 1) // 2
            prefix = f"{number}." if by == "white" else f"{number}..."
            # The written text keeps the official spellings (Appendix E); the voice
            # gets the pronunciation, the screen the words as the Laws write them.
            text = f"{prefix:<6}{san:<8} {speech}"
            return text + ("  (correction)" if correction else "")
        case Irregularity():
            return _irregularity(event)
        case PositionRestored():
            return "ok position restored"
        case GameStart(fen=fen, flipped=flipped):
            return f"game start {fen}" + (" (board turned)" if flipped else "")
        case GameEnd(result=result, reason=reason):
            return f"game over: {result} ({reason})"
        case GameResumed(ply=ply):
            return f"game resumed at move {(ply + 2) // 2}"
        case Notice(code=code, message=message):
            return f"notice ({code}): {message}"
        case Connection(state="lost", detail=detail, found=False):
            return detail or "no board found, still looking"
        case Connection(state=state, detail=detail):
            text = "board connected" if state == "connected" else "board connection lost"
            return text + (f": {detail}" if detail else "")
        case ClockUpdate(white=white, black=black, running=running):
            return f"clock white {white:g} black {black:g}" + (
                f", {running}'s running" if running else ""
            )
    details = {k: v for k, v in event.to_dict().items() if k not in ("t", "type")}
    return f"{event.type} {json.dumps(details, ensure_ascii=False)}"


def _irregularity(event: Irregularity) -> str:
    text = f"!! {event.kind} ({event.article})"
    if event.by:
        text += f" by {event.by}"
    if event.count:
        text += f", count {event.count}"
    restore = ", ".join(
        f"put {r['piece']} on {r['square']}" if r.get("piece") else f"clear {r['square']}"
        for r in event.restore
    )
    if restore:
        return f"{text}: {restore}"
    if event.squares:
        return f"{text} on {' '.join(event.squares)}"
    return text


def describe_event(event: dict[str, Any]) -> str:
    """``describe`` of a feed dict (a journal line, what ``Daemon(on_event=...)`` gets)."""
    try:
        return describe(from_dict(event))
    except (TypeError, ValueError):  # not one of ours: shown as it came
        return json.dumps(event, ensure_ascii=False)
