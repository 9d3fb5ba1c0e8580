"""The requests the rules core answers without judging the board: a player's question
(a clock button or the web "say" control, Appendix E.2.9d) and the arbiter's names for
the game. Pure: each checks its arguments and returns the event, or raises
``ValueError`` with what was wrong (the core turns it into a ``bad_request`` notice).
"""

from __future__ import annotations

import chess

from daemon.events import InfoRequest, Players

#: What a player may ask for (Appendix E.2.9d), by a clock button or the web "say" control;
#: and "silence": the arbiter stops what is being said (the speech part does).
INFO_REQUESTS = ("last", "moves", "clock", "move_number", "board", "square", "piece", "silence")


def players(t: float, args: dict) -> Players:
    """The arbiter's names for the game (the console's "players"): passed on as they
    are, an empty name read as unknown ("?", as PGN writes it); not judged, only
    carried through the feed so that the journal and every display hold them."""
    if not args or any(key not in ("white", "black", "round") for key in args):
        raise ValueError("players needs white, black or round, and nothing else")
    if any(not isinstance(value, str) for value in args.values()):
        raise ValueError("players: names and round are text")
    named = {key: (value.strip() or "?") for key, value in args.items()}
    return Players(t, **named)


def info_request(t: float, args: dict) -> InfoRequest:
    """The web "say" control: the same question a clock button asks (E.2.9d), with
    who asks (``by``: his earphone answers) and where (``to``: "page", his phone).

    Checked here, so the answer never goes wrong on a square or piece that
    cannot be: a bad one is a ``bad_request`` notice, not a spoken muddle.
    """
    what = args.get("what")
    if what not in INFO_REQUESTS:
        raise ValueError(f"say needs args.what: one of {', '.join(INFO_REQUESTS)}")
    by = args.get("by")
    if by not in (None, "white", "black"):
        raise ValueError("say: args.by is 'white' or 'black', who asks")
    to = args.get("to") or ""
    if to not in ("", "page"):
        raise ValueError("say: args.to is 'page' (his phone's page) or left out")
    extra = {key: value for key, value in args.items() if key not in ("what", "by", "to")}
    if what == "square" or "square" in extra:
        square = str(extra.get("square", "")).lower()
        if square not in chess.SQUARE_NAMES:
            raise ValueError(f"say {what} needs args.square, a square such as e4")
        extra["square"] = square
    if what == "piece" or "piece" in extra:
        piece = extra.get("piece")
        if not (isinstance(piece, str) and len(piece) == 1 and piece in "KQRBNPkqrbnp"):
            raise ValueError(f"say {what} needs args.piece, a FEN letter such as N or p")
    return InfoRequest(t, what, extra, by=by, to=to)
