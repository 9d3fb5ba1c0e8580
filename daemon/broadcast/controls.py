"""The arbiter's controls: checked requests, never decisions.

A POST from the arbiter's phone becomes a ``drivers.sensors.Request`` handed to
the daemon, which feeds it to the rules core like any sensor event: the core
stays the one place that decides (a "set position" the core refuses is refused
there, and the refusal comes back through the feed). Here we only check that a
request is well formed, against the schema below (each action's fields, their
types and ranges; an unknown field is refused, so a typo is never silently
ignored), and that it makes sense in the game as the display knows it, so a bad
request gets a clear 400 (or 409) naming the field instead of a silent nothing
or a NaN on every viewer's screen.

The schema is a table of small checks rather than a schema library: the bodies
are a handful of flat objects, and the checks need the chess knowledge
(FEN, UCI, squares) that only python-chess has.
"""

from __future__ import annotations

import hmac
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import chess

from daemon.broadcast.strictjson import NonFinite
from drivers.records import FrozenRecord
from drivers.sensors import Request

#: Actions the arbiter may request, with what each needs.
ACTIONS = {
    "new_game": "start a new game (optional fen, chess960)",
    "set_position": "set the position (fen required, optional chess960)",
    "accept_position": "accept the position now on the board as restored",
    "penalty": "record a time penalty (to: white|black, seconds 1..3600, article; "
    "after the game's end only with after_end: true)",
    "result": "declare a result (result: 1-0|0-1|1/2-1/2, optional reason)",
    "correct_last_move": "replace the last move (uci required)",
    "takeback": "take back the last move",
    "say": "ask for an announcement (what: last|moves|clock|move_number|board|square|piece; "
    "by: white|black, whose earphone answers; for board: order own|opponent|white|black, "
    "rank 1-8 or file a-h), or stop what is being said (what: silence)",
    "players": "set the players' names and the round shown and written in the PGN "
    "(white, black, round; each optional)",
    "reject_signal": "the result the kings signal on the board is no result: stop offering it",
    "check": "check the token (changes nothing; the arbiter's console logs in with it)",
    # the arbiter's corrections (daemon/rules/corrections.py); each takes preview: true
    "choose_line": "play one of the lines offered after moves were made out of reach "
    "(line: SAN, as offered; it must lead to the position on the board)",
    "enter_moves": "play moves from a scoresheet (san: SAN, such as 12. Nf3 Nc6)",
    "takeback_to": "take the game back to the position after a ply (ply: 0 is the start)",
    "correct_move": "replace the move of a ply and replay the later moves on it "
    "(ply, and san or uci)",
    "position_from_board": "start the game from the position the board shows "
    "(optional turn: white|black, castling: KQkq or -)",
    "add_game": "add a complete game (pgn: its PGN text)",
    # about the daemon's boards, not one game: no ?board=
    "pairings": "name every board's players and the round from a pairings file (file: the "
    "text of a FIDE TRF or a Swiss-Manager/Vega CSV pairing list; optional round, "
    "first_board; preview: true shows the boards and changes nothing)",
}

SAY_WHAT = ("last", "moves", "clock", "move_number", "board", "square", "piece", "silence")
RESULTS = ("1-0", "0-1", "1/2-1/2")
COLOURS = ("white", "black")

PAIRINGS_MAX_FILE = 200_000
"""The largest pairings file taken: a TRF of a 500-player open over 11 rounds is
some 110 KB (a player's line is 90 characters and 10 more a round)."""

PENALTY_MIN = 1.0
PENALTY_MAX = 3600.0
"""A time penalty is between one second and one hour (FIDE Laws 12.9)."""

ARTICLE = re.compile(r"(?:[1-9]|1[0-2]|[A-I])(?:\.\d{1,2}){0,3}[a-z]?")
"""An article of the FIDE Laws: chapters 1-12 or appendices A-I, then up to three
levels and an optional letter (``7.4b``, ``7.5.5``, ``12.9``, ``A.4.2``). Always
matched whole (``fullmatch``): ``$`` also matches before a final newline, and
``"7.4b\n"`` went into the PGN's penalty comment and the page."""
UCI = re.compile(r"[a-h][1-8][a-h][1-8][qrbn]?")
"""A move of the board as UCI: python-chess also reads ``0000`` (a null move) and
drops such as ``P@e4``, which are no move of a game on a DGT board."""
FEN = re.compile(r"[!-~]+(?: [!-~]+){0,5}")
"""A FEN's look: up to six fields of printable ASCII, one space between them.
python-chess splits on any whitespace, so a FEN with a newline, a tab or doubled
spaces was read as a good one and handed on to the core as it was sent."""


class ControlError(ValueError):
    """A malformed control request; the message is shown to the arbiter."""

    def __init__(self, message: str, field: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.field = field
        self.status = status


def token_ok(configured: str | None, offered: str | None) -> bool:
    """Constant-time comparison; no token configured means no controls at all."""
    if not configured or offered is None:
        return False
    return hmac.compare_digest(configured.encode(), offered.encode())


# -- the field checks: each returns the clean value or raises ControlError ------------


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, NonFinite) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _colour(name: str, value: Any) -> str:
    if value not in COLOURS:
        raise ControlError(f"{name!r} must be 'white' or 'black', got {_shown(value)}", name)
    return str(value)


def _seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ControlError(f"{name!r} must be a number of seconds, got {_shown(value)}", name)
    if not math.isfinite(value) or not PENALTY_MIN <= value <= PENALTY_MAX:
        raise ControlError(
            f"{name!r} must be between {PENALTY_MIN:g} and {PENALTY_MAX:g} seconds "
            f"(1 s to 1 hour), got {_shown(value)}",
            name,
        )
    return float(value)


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ControlError(f"{name!r} must be true or false, got {_shown(value)}", name)
    return value


def _text(limit: int) -> Callable[[str, Any], str]:
    def check(name: str, value: Any) -> str:
        if (
            not isinstance(value, str)
            or len(value) > limit
            or not value.isprintable()
            or value != value.strip()
        ):
            raise ControlError(
                f"{name!r} must be printable text of at most {limit} characters, "
                f"without spaces at either end, got {_shown(value)}",
                name,
            )
        return value

    return check


def _choice(options: tuple[str, ...]) -> Callable[[str, Any], str]:
    def check(name: str, value: Any) -> str:
        if value not in options:
            raise ControlError(
                f"{name!r} must be one of {', '.join(options)}, got {_shown(value)}", name
            )
        return str(value)

    return check


def _article(name: str, value: Any) -> str:
    if not isinstance(value, str) or not ARTICLE.fullmatch(value):
        raise ControlError(
            f"{name!r} must be an article of the FIDE Laws such as 7.4b or 12.9, "
            f"got {_shown(value)}",
            name,
        )
    return value


def _fen(name: str, value: Any) -> str:
    if not isinstance(value, str) or len(value) > 100 or not FEN.fullmatch(value):
        raise ControlError(
            f"{name!r} must be a FEN string (its fields one space apart, nothing "
            f"before or after), got {_shown(value)}",
            name,
        )
    return value  # read as a board, with chess960, by _check_fen


def _uci(name: str, value: Any) -> str:
    try:
        if not isinstance(value, str) or not UCI.fullmatch(value):
            raise ValueError
        chess.Move.from_uci(value)  # and not from a square to itself
    except ValueError:
        raise ControlError(
            f"{name!r} must be a move like e2e4 or e7e8q, got {_shown(value)}", name
        ) from None
    return value


def _square(name: str, value: Any) -> str:
    if not isinstance(value, str) or value not in chess.SQUARE_NAMES:
        raise ControlError(f"{name!r} must be a square such as e4, got {_shown(value)}", name)
    return value


def _rank(name: str, value: Any) -> str:
    if isinstance(value, bool) or str(value) not in tuple("12345678"):
        raise ControlError(f"{name!r} must be a rank, 1 to 8, got {_shown(value)}", name)
    return str(value)


def _file(name: str, value: Any) -> str:
    if not (isinstance(value, str) and len(value) == 1 and value in "abcdefgh"):
        raise ControlError(f"{name!r} must be a file, a to h, got {_shown(value)}", name)
    return value


def _piece(name: str, value: Any) -> str:
    if not (isinstance(value, str) and len(value) == 1 and value in "KQRBNPkqrbnp"):
        raise ControlError(
            f"{name!r} must be a FEN piece letter such as N or p, got {_shown(value)}", name
        )
    return value


def _moves(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 6000:
        raise ControlError(
            f"{name!r} must be moves in SAN such as '12. Nf3 Nc6', got {_shown(value)}", name
        )
    return value


def _ply(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2000:
        raise ControlError(
            f"{name!r} must be a ply, a whole number from 0, got {_shown(value)}", name
        )
    return value


def _castling(name: str, value: Any) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"-|[KQkqA-Ha-h]{1,4}", value):
        raise ControlError(
            f"{name!r} must be castling rights as FEN writes them (KQkq, Kq, -), "
            f"got {_shown(value)}",
            name,
        )
    return value


def _pgn(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 12_000:
        raise ControlError(
            f"{name!r} must be a game's PGN text of at most 12000 characters, got {_shown(value)}",
            name,
        )
    return value


def _pairings_file(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > PAIRINGS_MAX_FILE:
        raise ControlError(
            f"{name!r} must be the text of a pairings file (TRF or CSV) of at most "
            f"{PAIRINGS_MAX_FILE} characters, got {_shown(value)}",
            name,
        )
    return value


def _number(low: int, high: int, what: str) -> Callable[[str, Any], int]:
    def check(name: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ControlError(
                f"{name!r} must be {what}, a whole number from {low} to {high}, "
                f"got {_shown(value)}",
                name,
            )
        return value

    return check


@dataclass(eq=False, repr=False, slots=True)
class Field(FrozenRecord):
    check: Callable[[str, Any], Any]
    required: bool = False
    default: Any = None  # given to the core when the field is absent (None: left out)


SCHEMA: dict[str, dict[str, Field]] = {
    "new_game": {"fen": Field(_fen), "chess960": Field(_flag)},
    "set_position": {"fen": Field(_fen, required=True), "chess960": Field(_flag)},
    "accept_position": {},
    "penalty": {
        "to": Field(_colour, required=True),
        "seconds": Field(_seconds, default=120.0),
        "article": Field(_article, default="7.4b"),
        "after_end": Field(_flag),
    },
    "result": {
        "result": Field(_choice(RESULTS), required=True),
        "reason": Field(_text(60), default="arbiter"),
    },
    "correct_last_move": {"uci": Field(_uci, required=True)},
    "takeback": {},
    "say": {
        "what": Field(_choice(SAY_WHAT), required=True),
        "square": Field(_square),
        "piece": Field(_piece),
        "by": Field(_colour),
        "order": Field(_choice(("own", "opponent", "white", "black"))),
        "rank": Field(_rank),
        "file": Field(_file),
    },
    "players": {"white": Field(_text(100)), "black": Field(_text(100)), "round": Field(_text(20))},
    "reject_signal": {},
    "check": {},
    "choose_line": {"line": Field(_moves, required=True), "preview": Field(_flag)},
    "enter_moves": {"san": Field(_moves, required=True), "preview": Field(_flag)},
    "takeback_to": {"ply": Field(_ply, required=True), "preview": Field(_flag)},
    "correct_move": {
        "ply": Field(_ply, required=True),
        "san": Field(_moves),
        "uci": Field(_uci),
        "preview": Field(_flag),
    },
    "position_from_board": {
        "turn": Field(_colour),
        "castling": Field(_castling),
        "preview": Field(_flag),
    },
    "add_game": {"pgn": Field(_pgn, required=True), "preview": Field(_flag)},
    "pairings": {
        "file": Field(_pairings_file, required=True),
        "round": Field(_number(1, 99, "a round")),
        "first_board": Field(_number(1, 9999, "the board id of the file's board 1")),
        "preview": Field(_flag),
    },
}
"""Each action's fields; every other field is refused."""


def build_request(action: str, args: Any, t: float) -> Request:
    """The sensor ``Request`` for an arbiter's POST, or ``ControlError``."""
    if action not in SCHEMA:
        raise ControlError(f"unknown action {action!r}; known: {', '.join(ACTIONS)}")
    if not isinstance(args, dict):
        raise ControlError("the body must be a JSON object of arguments")
    fields = SCHEMA[action]
    for name in args:
        if name not in fields:
            known = ", ".join(fields) or "none"
            raise ControlError(
                f"{action}: unknown field {_shown(name)}; its fields: {known}", str(name)[:40]
            )
    clean: dict[str, Any] = {}
    for name, spec in fields.items():
        if name in args:
            value = spec.check(name, args[name])
            if value is False and spec.check is _flag:
                continue  # a false flag is the same as none
            clean[name] = value
        elif spec.required:
            raise ControlError(f"{action}: {name!r} is required", name)
        elif spec.default is not None:
            clean[name] = spec.default
    if "fen" in clean:
        _check_fen(clean["fen"], bool(clean.get("chess960")))
    if action == "correct_move" and ("san" in clean) == ("uci" in clean):
        raise ControlError("correct_move: give the new move as san or as uci (one of them)", "san")
    if action == "say":
        for needed in ("square", "piece"):
            if clean["what"] == needed and needed not in clean:
                raise ControlError(f"say {needed}: {needed!r} is required", needed)
    return Request(t=t, action=action, args=clean)


def _check_fen(fen: str, chess960: bool) -> None:
    try:
        chess.Board(fen, chess960=chess960)
    except ValueError as exc:
        raise ControlError(f"'fen' is not a valid FEN: {exc}", "fen") from None


def check_game_state(request: Request, *, ended: str | None, moves: int) -> None:
    """What the display knows of the game against the request: a penalty after
    the end must say so (``after_end: true``), and there is no last move to take
    back or correct before the first. ``ControlError`` with 409 otherwise."""
    if request.action == "penalty" and ended and not request.args.get("after_end"):
        raise ControlError(
            f'the game has ended ({ended}); send "after_end": true to record a '
            "penalty after the end",
            "after_end",
            409,
        )
    if request.action in ("takeback", "correct_last_move") and moves == 0:
        raise ControlError(f"{request.action}: no move has been played", None, 409)
