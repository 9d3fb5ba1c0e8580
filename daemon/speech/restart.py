"""The moves a restart may have cut from a blind player's ear.

The daemon speaks a move after its journal has it (disk first), and journals what
became of the phrase once it is over (``type: speech``, ``outcome: heard``). A daemon
killed in between (a crash, the OOM killer, a power cut with a UPS's last seconds)
comes back with the move in the game and its phrase unheard: the player never learns
his opponent's last move, the worst failure a speaking board has. So a resumed game
says, after "game resumed", the moves of its line after the last one each of the
board's earphones was heard saying; a phrase heard whose ``heard`` line the kill lost
is said again, which costs a repeat and nothing else.
"""

from __future__ import annotations

from typing import Any

#: At most this many moves are said again: the phrase that was being said and the one
#: that waited for it. A longer tail was not cut by the restart but left unsaid on
#: purpose before it (the schedule drops a move stale by the time it could be said).
MOST_SAID_AGAIN = 2


def unheard_moves(
    events: list[dict[str, Any]], board: str | None = None, most: int = MOST_SAID_AGAIN
) -> list[dict[str, Any]]:
    """The ``move`` events of a resumed game's journal (``events``, from its
    ``game_start``) whose phrases none of the board's earphones is known to have
    heard, after the last one that each did; ``board``: whose earphones (None: the
    game's own board; a board bound to the game, Appendix E.1, journals its own with
    its id). Nothing when no earphone was heard saying anything in this game (no
    speech, or it never started): there is nothing it could have cut."""
    line: dict[int, dict[str, Any]] = {}
    last_heard: dict[str, int] = {}  # an earphone (its output) -> the last ply it said
    for event in events:
        kind = event.get("type")
        if kind == "move" and isinstance(event.get("ply"), int):
            ply = event["ply"]
            line = {p: e for p, e in line.items() if p < ply}
            line[ply] = event
        elif kind == "takeback" and isinstance(event.get("ply"), int):
            line = {p: e for p, e in line.items() if p < event["ply"]}
        elif kind == "speech" and event.get("outcome") == "heard" and event.get("board") == board:
            output = str(event.get("output") or "")
            plies = [p for p in event.get("plies") or [] if isinstance(p, int)]
            last_heard[output] = max([last_heard.get(output, 0), *plies])
    if not last_heard:
        return []
    since = min(last_heard.values())
    return [line[p] for p in sorted(line) if p > since][-most:]
