"""What the relay accepts from the broker: every message checked before it
touches a board.

The relay serves a round to the public and to lichess, so a message that is
malformed, oversized, forged for another board or simply from a broken
publisher must be dropped (and counted), never folded into a game: one bad
message may not break a board's record, another board or the PGN. The broker's
ACL decides who may write a board's topics; this decides what a message on
them may say.

Pure functions, no I/O: each ``check_*`` returns the payload's parts or raises
``Rejected`` with a short reason the relay counts and shows in ``/relay.json``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import chess

from daemon.game import events as _events
from daemon.game.record import PGN_RESULTS, PGN_TAG_NAME

#: Largest payloads, in bytes. An event is a few hundred bytes (an irregularity
#: with what to restore a few kilobytes); a state holds the whole game.
MAX_EVENT_BYTES = 16 * 1024
MAX_STATE_BYTES = 1024 * 1024
MAX_STATUS_BYTES = 1024
#: Half-moves in one game (a 600-move game is far beyond any played one).
MAX_PLIES = 1200
MAX_TEXT = 1000  # characters of any text field
MAX_ITEMS = 64  # entries of a list or object inside an event
MAX_DEPTH = 4
MAX_SEQ = 2**53  # what JSON numbers hold exactly

ORIGIN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SIDES = ("white", "black")

#: Event types the daemon emits (``daemon.game.events``); anything else is not ours.
EVENT_TYPES = frozenset(
    cls.type
    for cls in vars(_events).values()
    if isinstance(cls, type) and issubclass(cls, _events.DomainEvent) and cls.type != "event"
)


class Rejected(ValueError):
    """A message the relay will not apply; ``str()`` is the reason it counts."""


def _number(value: Any, what: str, *, low: float = -1e9, high: float = 1e9) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Rejected(f"{what} is not a number")
    if not math.isfinite(value) or not low <= value <= high:
        raise Rejected(f"{what} out of range")
    return float(value)


def _integer(value: Any, what: str, *, low: int = 0, high: int = MAX_SEQ) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Rejected(f"{what} is not a whole number in range")
    return value


def _text(value: Any, what: str, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise Rejected(f"{what} is not a text of at most {limit} characters")
    return value


def _fen(value: Any, what: str, chess960: bool = False) -> str:
    text = _text(value, what, 100)
    try:
        chess.Board(text, chess960=chess960)
    except ValueError:
        raise Rejected(f"{what} is not a valid FEN") from None
    return text


def _uci(value: Any, what: str) -> str:
    text = _text(value, what, 5)
    try:
        chess.Move.from_uci(text)
    except ValueError:
        raise Rejected(f"{what} is not a move") from None
    return text


def _clock(value: Any, what: str) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise Rejected(f"{what} is not an object")
    for side in SIDES:
        _number(value.get(side), f"{what}.{side}", low=-86400, high=30 * 86400)
    if value.get("running") not in (None, *SIDES):
        raise Rejected(f"{what}.running is not white, black or null")


def _plain(value: Any, what: str, depth: int = 0) -> None:
    """Any JSON value within the bounds: short texts, finite numbers, few items."""
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int | float):
        _number(value, what, low=-1e12, high=1e12)
    elif isinstance(value, str):
        _text(value, what)
    elif isinstance(value, list | dict):
        if depth >= MAX_DEPTH or len(value) > MAX_ITEMS:
            raise Rejected(f"{what} is too deep or too long")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(value, dict):
                _text(key, f"a key of {what}", 64)
            _plain(item, f"{what}.{key}", depth + 1)
    else:
        raise Rejected(f"{what} is not JSON")


def check_event(event: Any) -> dict[str, Any]:
    """One feed event as ``daemon.game.events`` makes it, or ``Rejected``."""
    if not isinstance(event, dict):
        raise Rejected("the event is not an object")
    kind = event.get("type")
    if kind not in EVENT_TYPES:
        raise Rejected("unknown event type")
    _plain(event, "event")
    if "t" in event:
        _number(event["t"], "event.t", low=-1e12, high=1e12)
    chess960 = bool(event.get("chess960"))
    if kind == "move":
        _integer(event.get("ply"), "move.ply", low=1, high=MAX_PLIES)
        _uci(event.get("uci"), "move.uci")
        _fen(event.get("fen"), "move.fen", chess960)
        _text(event.get("san", ""), "move.san", 16)
        if event.get("by") not in SIDES:
            raise Rejected("move.by is not white or black")
        _clock(event.get("clock"), "move.clock")
    elif kind in ("game_start", "takeback", "game_resumed", "position_restored"):
        if event.get("fen") is not None or kind == "game_resumed":
            _fen(event.get("fen"), f"{kind}.fen", chess960)
        if kind in ("takeback", "game_resumed"):
            _integer(event.get("ply"), f"{kind}.ply", low=0, high=MAX_PLIES)
    elif kind == "clock":
        _clock(event, "clock")
    elif kind == "game_end":
        if event.get("result") not in PGN_RESULTS:
            raise Rejected("game_end.result is not a PGN result")
    elif kind == "penalty":
        _clock(event.get("clock"), "penalty.clock")
    elif kind == "players":
        for key, limit in (("white", 100), ("black", 100), ("round", 20)):
            if event.get(key) is not None:
                _text(event[key], f"players.{key}", limit)
    return event


def _size(payload: bytes, limit: int, what: str) -> Any:
    if len(payload) > limit:
        raise Rejected(f"{what} larger than {limit} bytes")
    try:
        value = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        raise Rejected(f"{what} is not JSON") from None
    if not isinstance(value, dict):
        raise Rejected(f"{what} is not an object")
    return value


def _same_board(payload: dict[str, Any], board: str, what: str) -> None:
    named = payload.get("board")
    if named is not None and named != board:
        raise Rejected(f"{what} names another board than its topic")


def _origin(payload: dict[str, Any], what: str, *, required: bool) -> str:
    origin = payload.get("origin")
    if origin is None and not required:
        return ""
    if not isinstance(origin, str) or not ORIGIN.match(origin):
        raise Rejected(f"{what}.origin is missing or malformed")
    return origin


def check_envelope(payload: bytes, board: str) -> tuple[str, int, int | None, dict[str, Any]]:
    """An ``events`` message: ``(origin, seq, prev, event)``, or ``Rejected``."""
    envelope = _size(payload, MAX_EVENT_BYTES, "event message")
    _same_board(envelope, board, "the event")
    origin = _origin(envelope, "event", required=True)
    seq = _integer(envelope.get("seq"), "seq", low=1)
    prev = envelope.get("prev")
    if prev is not None:
        prev = _integer(prev, "prev")
        if prev >= seq:
            raise Rejected("prev is not before seq")
    return origin, seq, prev, check_event(envelope.get("event"))


def _headers(value: Any) -> None:
    if not isinstance(value, dict):
        raise Rejected("state.headers is not an object")
    for key in ("event", "site", "date", "round", "white", "black"):
        if value.get(key) is not None:
            _text(value[key], f"headers.{key}", 255)
    extra = value.get("extra") or {}
    if not isinstance(extra, dict) or len(extra) > 16:
        raise Rejected("headers.extra is not an object of at most 16 tags")
    for key, item in extra.items():
        if not isinstance(key, str) or not PGN_TAG_NAME.match(key):
            raise Rejected("headers.extra has an invalid PGN tag name")
        _text(item, f"headers.extra.{key}", 255)


def check_state(payload: bytes, board: str) -> dict[str, Any]:
    """A retained ``state`` message, its shape checked (``replays`` checks the
    moves themselves when the relay is about to load it), or ``Rejected``."""
    state = _size(payload, MAX_STATE_BYTES, "state")
    _same_board(state, board, "the state")
    _origin(state, "state", required=False)
    _integer(state.get("seq") or 0, "state.seq")
    _headers(state.get("headers") or {})
    chess960 = bool(state.get("chess960"))
    if state.get("start_fen") is not None:
        _fen(state["start_fen"], "state.start_fen", chess960)
    moves = state.get("moves") or []
    if not isinstance(moves, list) or len(moves) > MAX_PLIES:
        raise Rejected(f"state.moves is not a list of at most {MAX_PLIES} moves")
    for number, move in enumerate(moves, 1):
        if not isinstance(move, dict):
            raise Rejected("a move of the state is not an object")
        if _integer(move.get("ply"), "state move ply", low=1, high=MAX_PLIES) != number:
            raise Rejected("the state's moves are not numbered 1, 2, 3...")
        _uci(move.get("uci"), "state move uci")
        _text(move.get("fen"), "state move fen", 100)
        _text(move.get("san") or "", "state move san", 16)
        _clock(move.get("clock"), "state move clock")
    if state.get("clock") is not None:
        _clock(state["clock"], "state.clock")
    if state.get("result") not in (None, *PGN_RESULTS):
        raise Rejected("state.result is not a PGN result")
    if state.get("fen") is not None:
        _fen(state["fen"], "state.fen", chess960)
    if state.get("result_reason") is not None:
        _text(state["result_reason"], "state.result_reason", 64)
    for key in ("flag", "draw_claimable", "irregularity", "clock", "last_move"):
        if state.get(key) is not None and not isinstance(state[key], dict):
            raise Rejected(f"state.{key} is not an object")
    for key in ("irregularity", "draw_claimable", "flag", "status"):
        if state.get(key) is not None:
            _plain(state[key], f"state.{key}", 1)
    penalties = state.get("penalties") or []
    if not isinstance(penalties, list) or len(penalties) > MAX_ITEMS:
        raise Rejected("state.penalties is not a short list")
    _plain(penalties, "state.penalties", 1)
    return state


def replays(state: dict[str, Any]) -> None:
    """``Rejected`` unless the state's moves are legal, one after the other, from
    its start position (a forged or damaged game is not shown as one)."""
    chess960 = bool(state.get("chess960"))
    board = chess.Board(state.get("start_fen") or chess.STARTING_FEN, chess960=chess960)
    for move in state.get("moves") or []:
        parsed = chess.Move.from_uci(move["uci"])
        if not board.is_legal(parsed):
            raise Rejected(f"the state's move {move['ply']} is not legal")
        board.push(parsed)


def check_status(payload: bytes, board: str) -> dict[str, Any]:
    """A retained ``status`` message, or ``Rejected``."""
    status = _size(payload, MAX_STATUS_BYTES, "status")
    _same_board(status, board, "the status")
    _origin(status, "status", required=False)
    if not isinstance(status.get("online"), bool):
        raise Rejected("status.online is not true or false")
    if status.get("connected") not in (None, True, False):
        raise Rejected("status.connected is not true, false or null")
    if status.get("battery") is not None:
        _number(status["battery"], "status.battery", low=0, high=100)
    return status
