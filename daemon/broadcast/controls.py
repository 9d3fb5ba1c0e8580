"""The arbiter's controls: checked requests, never decisions.

A POST from the arbiter's phone becomes a ``drivers.sensors.Request`` handed to
the daemon, which feeds it to the rules core like any sensor event: the core
stays the one place that decides (a "set position" the core refuses is refused
there, and the refusal comes back through the feed). Here we only check that a
request is well formed, so a typo gets a clear 400 instead of a silent nothing.
"""

from __future__ import annotations

import hmac
from typing import Any

import chess

from drivers.sensors import Request

#: Actions the arbiter may request, with what each needs.
ACTIONS = {
    "new_game": "start a new game (optional fen)",
    "set_position": "set the position (fen required)",
    "accept_position": "accept the position now on the board as restored",
    "penalty": "record a penalty (to: white|black, seconds, article)",
    "result": "declare a result (result: 1-0|0-1|1/2-1/2, optional reason)",
    "correct_last_move": "replace the last move (uci required)",
    "takeback": "take back the last move",
    "say": "ask for an announcement (what: last|clock|move_number|board|square|piece)",
}

SAY_WHAT = ("last", "clock", "move_number", "board", "square", "piece")
RESULTS = ("1-0", "0-1", "1/2-1/2")


class ControlError(ValueError):
    """A malformed control request; the message is shown to the arbiter."""


def token_ok(configured: str | None, offered: str | None) -> bool:
    """Constant-time comparison; no token configured means no controls at all."""
    if not configured or offered is None:
        return False
    return hmac.compare_digest(configured.encode(), offered.encode())


def _colour(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if value not in ("white", "black"):
        raise ControlError(f"{key!r} must be 'white' or 'black'")
    return str(value)


def _fen(args: dict[str, Any], *, required: bool) -> str | None:
    fen = args.get("fen")
    if fen is None and not required:
        return None
    if not isinstance(fen, str):
        raise ControlError("'fen' is required (a FEN string)")
    try:
        chess.Board(fen, chess960=bool(args.get("chess960")))
    except ValueError as exc:
        raise ControlError(f"'fen' is not a valid FEN: {exc}") from None
    return fen


def build_request(action: str, args: dict[str, Any], t: float) -> Request:
    """The sensor ``Request`` for an arbiter's POST, or ``ControlError``."""
    if action not in ACTIONS:
        raise ControlError(f"unknown action {action!r}; known: {', '.join(ACTIONS)}")
    if not isinstance(args, dict):
        raise ControlError("the body must be a JSON object")
    clean: dict[str, Any] = {}
    if action in ("new_game", "set_position"):
        fen = _fen(args, required=action == "set_position")
        if fen is not None:
            clean["fen"] = fen
        if args.get("chess960"):
            clean["chess960"] = True
    elif action == "penalty":
        clean["to"] = _colour(args, "to")
        seconds = args.get("seconds", 120)
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
            raise ControlError("'seconds' must be a positive number")
        clean["seconds"] = float(seconds)
        clean["article"] = str(args.get("article", "7.4b"))[:20]
    elif action == "result":
        if args.get("result") not in RESULTS:
            raise ControlError(f"'result' must be one of {', '.join(RESULTS)}")
        clean["result"] = args["result"]
        clean["reason"] = str(args.get("reason", "arbiter"))[:60]
    elif action == "correct_last_move":
        uci = args.get("uci")
        try:
            chess.Move.from_uci(str(uci))
        except ValueError:
            raise ControlError("'uci' must be a move like e2e4 or e7e8q") from None
        clean["uci"] = str(uci)
    elif action == "say":
        what = args.get("what")
        if what not in SAY_WHAT:
            raise ControlError(f"'what' must be one of {', '.join(SAY_WHAT)}")
        clean["what"] = what
        for key in ("square", "piece"):
            if key in args:
                clean[key] = str(args[key])[:8]
    return Request(t=t, action=action, args=clean)
