"""Events as text for people: the log line, the demo's transcript.

One place turns a feed event into words, so the log, the demo and anything else that
shows events to a person say the same thing the same way.
"""

from __future__ import annotations

import json
from typing import Any


def describe_event(event: dict[str, Any]) -> str:
    """One readable line for the log (the journal has the JSON)."""
    kind = event.get("type")
    if kind == "move":
        number = (int(event["ply"]) + 1) // 2
        dots = "." if event.get("by") == "white" else "..."
        fix = " (correction)" if event.get("correction") else ""
        return f"move {number}{dots} {event.get('san')}: {event.get('speech')}{fix}"
    if kind == "irregularity":
        squares = " ".join(event.get("squares") or [])
        by = f" by {event['by']}" if event.get("by") else ""
        count = f" #{event['count']}" if event.get("count") else ""
        return f"IRREGULARITY {event.get('kind')}{by}{count} ({event.get('article')}) {squares}"
    if kind == "game_start":
        return f"game start {event.get('fen')}" + (
            " (board turned)" if event.get("flipped") else ""
        )
    if kind == "game_end":
        return f"game end {event.get('result')} ({event.get('reason')})"
    if kind == "game_resumed":
        return f"game resumed at move {(int(event.get('ply', 0)) + 2) // 2}"
    if kind == "notice":
        return f"NOTICE {event.get('code')}: {event.get('message')}"
    if kind == "clock":
        return f"clock white {event.get('white')} black {event.get('black')}"
    details = {k: v for k, v in event.items() if k not in ("t", "type")}
    return f"{kind} {json.dumps(details, ensure_ascii=False)}"
