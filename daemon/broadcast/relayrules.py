"""What the relay believes of one board's game: only what the rules allow.

``relaycheck`` checks a message's shape; this keeps each board's game as
python-chess holds it and takes an event only if it may follow what the relay
already shows (issue 24): a move legal in that game whose FEN follows, clocks
that move within the time control and the time elapsed, a result that is final
once given, a start position that is the standard one or a Chess960 one. A
state is rebuilt from its moves by python-chess and every field is retyped
(``canonical_state``), so what reaches a page is only what the relay made.

Pure, no I/O: ``Rejected`` says why, and the relay counts it.
"""

from __future__ import annotations

import math
from typing import Any

import chess

from daemon.broadcast.controls import ARTICLE
from daemon.broadcast.relaycheck import SIDES, Rejected
from daemon.game.record import PGN_RESULTS

#: No clock of a board shows more (a classical game with every period added and
#: penalties stays far below it).
MAX_CLOCK = 10 * 3600.0
#: What a side's clock may gain per move it completes (an increment or delay).
INCREMENT = 120.0
#: What a side's clock may gain at a time control's next period (every 20 moves).
PERIOD = 3600.0
#: How far a clock may run ahead of the time elapsed between two reports.
SLACK = 30.0
#: The longest penalty the arbiter's controls allow.
MAX_PENALTY = 3600.0
#: How many half-moves below the furthest the game reached a board's own
#: takeback or correction may go without the arbiter (a relay without the hall's
#: key): a player's move and the reply. Deeper, it is held like a restart.
MAX_TAKEBACK = 2
#: The extra PGN tags a board may set; SetUp, FEN and Variant are the relay's
#: own (from the start position it holds), never a board's.
EXTRA_TAGS = frozenset(
    {
        "Board", "WhiteElo", "BlackElo", "WhiteTitle", "BlackTitle", "WhiteFideId",
        "BlackFideId", "WhiteTeam", "BlackTeam", "TimeControl", "Annotator", "Time",
        "Termination", "Mode", "EventDate", "Section", "Stage",
    }
)  # fmt: skip


class HeldForArbiter(Rejected):
    """A new game over a finished one that no arbiter signed (or, from a board the
    relay cannot authenticate, one that loses more than ``MAX_TAKEBACK`` half-moves
    of the game: a new game over one with more moves, a deep takeback): kept aside
    by the relay (``Relay.restarts``), not shown, until the arbiter shows it.
    ``held`` is that game."""

    def __init__(self, reason: str, held: GameRules) -> None:
        super().__init__(reason)
        self.held = held


#: Why a restart is held, as ``/relay.json`` counts it.
HELD_OVER_FINISHED = "a new game over a finished one, not the arbiter's: held for the arbiter"
HELD_OVER_UNFINISHED = (
    f"a new game over one of more than {MAX_TAKEBACK} half-moves, unauthenticated "
    "(no hall key): held for the arbiter"
)
HELD_TAKEBACK = (
    f"a takeback of more than {MAX_TAKEBACK} half-moves, unauthenticated (no hall key): "
    "held for the arbiter"
)


def _placement(fen: str) -> str:
    """Placement, side to move and castling: what a FEN must agree on (the
    en-passant field and the counters are written differently by some tools)."""
    return " ".join(str(fen).split()[:3])


def start_board(fen: str | None, chess960: bool) -> chess.Board:
    """The board of a game's start, or ``Rejected``: the standard position, or
    with ``chess960`` one of the 960."""
    try:
        board = chess.Board(fen or chess.STARTING_FEN, chess960=chess960)
    except ValueError:
        raise Rejected("the start position is not a valid FEN") from None
    if board.fen() == chess.STARTING_FEN:
        return board
    if chess960 and board.chess960_pos() is not None:
        return board
    raise Rejected("the start position is neither the standard one nor a Chess960 one")


def _seconds(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise Rejected(f"{what} is not a number")
    if not 0 <= value <= MAX_CLOCK:
        raise Rejected(f"{what} is beyond what a clock shows")
    return float(value)


class GameRules:
    """One board's game as the relay holds it (python-chess), with its result and
    each side's clock and what it may still gain."""

    def __init__(self, start_fen: str | None = None, chess960: bool = False) -> None:
        self.board = start_board(start_fen, chess960)
        self.chess960 = chess960
        self.result: str | None = None
        self.clock: dict[str, float] | None = None  # white, black
        self.clock_t: float | None = None
        # Each side's first move's increment in advance: the daemon reports a
        # press's clock (the increment added) just before the move it completes,
        # so without it the real first press of each side was dropped.
        self.credit = {"white": INCREMENT, "black": INCREMENT}
        #: the most half-moves the game has had: a board's own takeback goes at most
        #: ``MAX_TAKEBACK`` below it (``take``'s ``trusted``)
        self.peak = 0

    def copy(self) -> GameRules:
        """The same game, apart (a takeback held for the arbiter)."""
        other = GameRules.__new__(GameRules)
        other.__dict__.update(self.__dict__)
        other.board = self.board.copy()
        other.clock = dict(self.clock) if self.clock is not None else None
        other.credit = dict(self.credit)
        return other

    # -- clocks -------------------------------------------------------------------

    def _check_clock(self, white: Any, black: Any, t: Any) -> dict[str, float]:
        new = {"white": _seconds(white, "clock.white"), "black": _seconds(black, "clock.black")}
        if self.clock is None or not self.board.move_stack:
            # Before the first move the clock is being set (the last game's times,
            # the clock's default, then the time control): any time is the start.
            return new
        elapsed = None
        if isinstance(t, int | float) and self.clock_t is not None and t >= self.clock_t:
            elapsed = float(t) - self.clock_t
        for side in SIDES:
            gained = new[side] - self.clock[side]
            if gained > self.credit[side] + 1.0:
                raise Rejected(f"the {side} clock gains more than the time control allows")
            if elapsed is not None and -gained > elapsed + SLACK:
                raise Rejected(f"the {side} clock runs faster than the time elapsed")
        return new

    def _take_clock(self, new: dict[str, float], t: Any) -> None:
        if self.clock is not None and self.board.move_stack:  # not while being set
            for side in SIDES:
                self.credit[side] = max(0.0, self.credit[side] - (new[side] - self.clock[side]))
        self.clock = new
        if isinstance(t, int | float):
            self.clock_t = float(t)

    def _pair(self, value: Any, t: Any) -> dict[str, float] | None:
        if not isinstance(value, dict):
            return None
        return self._check_clock(value.get("white"), value.get("black"), t)

    # -- events -------------------------------------------------------------------

    def take(self, event: dict[str, Any], *, signed: bool = False, trusted: bool = False) -> None:
        """Apply ``event`` to the game held, or ``Rejected`` (nothing changed).

        ``signed``: the arbiter's (its board's key, or the deprecated arbiter key).
        Only the arbiter changes a result once given, and only the arbiter starts a
        game over a finished one: a board's own restart (the pieces set up again
        after the game, or a login replaying the game to another result) is
        ``HeldForArbiter``. ``trusted``: signed with its board's key (``boardkeys``),
        so the board's own daemon sent it. Untrusted (a relay without the hall's
        key: any holder of the board's login), what loses more than ``MAX_TAKEBACK``
        half-moves below the furthest the game reached (a new game over a game of
        more, a deep takeback or correction) is held for the arbiter too."""
        kind = event.get("type")
        t = event.get("t")
        if kind == "game_start":
            chess960 = bool(event.get("chess960"))
            new = GameRules(start_board(event.get("fen"), chess960).fen(), chess960)
            why = None if signed else self.held_why(new, trusted=trusted)
            if why is not None:
                raise HeldForArbiter(why, new)
            # a new game: the same object made afresh, as the relay holds it by reference
            self.__init__(new.board.fen(), chess960)  # type: ignore[misc]
        elif kind in ("move", "takeback") and not (signed or trusted) and self._too_deep(event):
            held = self.copy()
            held.take(event, trusted=True)
            raise HeldForArbiter(HELD_TAKEBACK, held)
        elif kind == "move":
            self._move(event, t)
            if event.get("correction") and (signed or trusted):
                self.peak = len(self.board.move_stack)  # the arbiter's: the game as it is
        elif kind == "takeback":
            self._takeback(event)
            if signed or trusted:
                self.peak = len(self.board.move_stack)
        elif kind in ("game_resumed", "position_restored", "boards_agree"):
            fen = event.get("fen")
            if fen and _placement(fen) != _placement(self.board.fen()):
                raise Rejected(f"{kind} names another position than the game's")
            if kind == "game_resumed" and event.get("ply") != len(self.board.move_stack):
                raise Rejected("game_resumed names another ply than the game's")
        elif kind == "clock":
            self._take_clock(self._check_clock(event.get("white"), event.get("black"), t), t)
        elif kind == "game_end":
            result = event.get("result")
            if result not in PGN_RESULTS or result == "*":
                raise Rejected("game_end.result is not a result")
            if self.result is not None and result != self.result and not signed:
                raise Rejected("the result is final once given (the arbiter's console changes it)")
            if not isinstance(event.get("reason", ""), str | None):
                raise Rejected("game_end.reason is not a text")
            self.result = result
        elif kind == "penalty":
            self._penalty(event, t)
        elif kind == "flag":
            if event.get("side") not in (None, *SIDES):
                raise Rejected("flag.side is not white, black or null")
            for key in ("both", "draw"):
                if not isinstance(event.get(key, False), bool):
                    raise Rejected(f"flag.{key} is not true or false")
        elif kind == "draw_claimable":
            if event.get("reason") not in ("threefold_repetition", "fifty_moves"):
                raise Rejected("draw_claimable.reason is unknown")
        elif kind == "irregularity":
            _irregularity(event)

    def held_why(self, new: GameRules, *, trusted: bool) -> str | None:
        """Why the game ``new`` (a board's new game, or the game its state holds) is
        held for the arbiter rather than shown over this one; None: it is shown.
        ``Rejected`` for this finished game with another result. The one rule of a
        restart, for a game's start (``take``) and a board's whole state (``Relay``).

        Over a finished game only the arbiter starts another (a board's own restart
        is held, so is a game not begun: nothing tells it from the next game), and
        the same game keeps its result. Untrusted (a relay without the hall's key),
        a game that is not this one as a board's own play makes it (``kept_by``:
        more than ``MAX_TAKEBACK`` half-moves lost) is held too."""
        if self.result is not None:
            begun = bool(new.board.move_stack) or new.result is not None
            if not begun or not self.same_game(new):
                return HELD_OVER_FINISHED
            if new.result != self.result:
                raise Rejected("the result is final once given (the arbiter's console changes it)")
            return None
        if not trusted and not self.kept_by(new):
            return HELD_OVER_UNFINISHED
        return None

    def _deep(self, kept: int) -> bool:
        """Whether a game keeping only its first ``kept`` half-moves loses more than
        ``MAX_TAKEBACK`` below the furthest it reached: what a board's own
        takebacks never do, a restart does."""
        return kept < self.peak - MAX_TAKEBACK

    def _too_deep(self, event: dict[str, Any]) -> bool:
        """A takeback, or a correction, that is ``_deep`` (and one the game would
        take otherwise)."""
        ply = event.get("ply")
        if event.get("type") == "move" and not event.get("correction"):
            return False
        if not isinstance(ply, int) or not 1 <= ply <= len(self.board.move_stack):
            return False
        return self.result is None and self._deep(ply - 1)

    def _move(self, event: dict[str, Any], t: Any) -> None:
        if self.result is not None:
            raise Rejected("a move after the game's result")
        ply = event.get("ply")
        board = self.board.copy()
        if event.get("correction") and isinstance(ply, int) and 1 <= ply <= len(board.move_stack):
            while len(board.move_stack) >= ply:
                board.pop()
        if ply != len(board.move_stack) + 1:
            raise Rejected("the move's ply does not follow the game")
        try:
            move = chess.Move.from_uci(str(event.get("uci")))
        except ValueError:
            raise Rejected("the move is not a move") from None
        if not board.is_legal(move):
            raise Rejected("the move is not legal in the game")
        side = "white" if board.turn == chess.WHITE else "black"
        if event.get("by") != side:
            raise Rejected("the move is not by the side to move")
        board.push(move)
        if _placement(str(event.get("fen"))) != _placement(board.fen()):
            raise Rejected("the move's FEN does not follow")
        clock = self._pair(event.get("clock"), t)
        self.board = board
        self.peak = max(self.peak, len(board.move_stack))
        # the moves this side has made, this one included (White's 1st is ply 1)
        moves_by_side = (len(board.move_stack) + (1 if side == "white" else 0)) // 2
        self.credit[side] += INCREMENT + (PERIOD if moves_by_side % 20 == 0 else 0.0)
        if clock is not None:
            self._take_clock(clock, t)

    def _takeback(self, event: dict[str, Any]) -> None:
        if self.result is not None:
            raise Rejected("a takeback after the game's result")
        ply = event.get("ply")
        if not isinstance(ply, int) or not 1 <= ply <= len(self.board.move_stack) + 1:
            raise Rejected("the takeback's ply is not a move of the game")
        board = self.board.copy()
        while len(board.move_stack) >= ply:
            board.pop()
        fen = event.get("fen")
        if fen and _placement(fen) != _placement(board.fen()):
            raise Rejected("the takeback's FEN does not follow")
        self.board = board
        self.clock = None  # the arbiter may set the clocks back: a new baseline

    def _penalty(self, event: dict[str, Any], t: Any) -> None:
        to, seconds = event.get("to"), event.get("seconds")
        if to not in SIDES:
            raise Rejected("penalty.to is not white or black")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise Rejected("penalty.seconds is not a number")
        if not 0 < seconds <= MAX_PENALTY:
            raise Rejected("penalty.seconds is out of range")
        article = event.get("article")
        if article is not None and not (isinstance(article, str) and ARTICLE.fullmatch(article)):
            raise Rejected("penalty.article is not an article of the Laws (such as 7.4b)")
        self.credit[to] += float(seconds)
        clock = self._pair(event.get("clock"), t)
        if clock is not None:
            self._take_clock(clock, t)

    # -- a whole state --------------------------------------------------------------

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> GameRules:
        """The game of a (shape-checked) state, each move replayed; ``Rejected``
        when a move is illegal or its FEN does not follow."""
        rules = cls(state.get("start_fen"), bool(state.get("chess960")))
        for move in state.get("moves") or []:
            side = "white" if rules.board.turn == chess.WHITE else "black"
            rules._move({"type": "move", **move, "by": move.get("by") or side,
                         "clock": None}, None)  # fmt: skip
        result = state.get("result")
        if result not in (None, "*"):
            rules.result = str(result)
        clock = state.get("clock")
        if isinstance(clock, dict):
            rules._take_clock(rules._check_clock(clock.get("white"), clock.get("black"), None),
                              None)  # fmt: skip
        return rules

    def same_game(self, other: GameRules) -> bool:
        return self.board.move_stack == other.board.move_stack and (
            self.board.root().fen() == other.board.root().fen()
        )

    def kept_by(self, other: GameRules) -> bool:
        """Whether ``other`` (a board's state) is this game as a board's own play
        makes it: from the same start (unless this one has no moves yet), at most
        ``MAX_TAKEBACK`` half-moves below the furthest it reached, then any moves.
        Otherwise it is a new game, or a deep takeback: the arbiter's."""
        kept = min(self.peak - MAX_TAKEBACK, len(self.board.move_stack))
        if kept <= 0:
            return True  # a new game loses no more than a board's own takebacks
        return self.board.root().fen() == other.board.root().fen() and (
            other.board.move_stack[:kept] == self.board.move_stack[:kept]
        )


def _irregularity(event: dict[str, Any]) -> None:
    for key in ("kind", "article", "detail"):
        if not isinstance(event.get(key, ""), str):
            raise Rejected(f"irregularity.{key} is not a text")
    article = event.get("article")
    if article and not ARTICLE.fullmatch(article):
        raise Rejected("irregularity.article is not an article of the Laws (such as 7.4)")
    if event.get("by") not in (None, *SIDES):
        raise Rejected("irregularity.by is not white, black or null")
    squares = event.get("squares") or []
    if not isinstance(squares, list) or not all(s in chess.SQUARE_NAMES for s in squares):
        raise Rejected("irregularity.squares are not squares")
    for item in event.get("restore") or []:
        if not isinstance(item, dict) or item.get("square") not in chess.SQUARE_NAMES:
            raise Rejected("irregularity.restore is not a list of squares")
        if item.get("piece") is not None and (
            not isinstance(item["piece"], str)
            or item["piece"] not in "PNBRQKpnbrqk"
            or len(item["piece"]) != 1
        ):
            raise Rejected("irregularity.restore has an unknown piece")


def _text_or_none(value: Any, limit: int = 255) -> str | None:
    return value[:limit] if isinstance(value, str) else None


def _number_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def canonical_state(state: dict[str, Any], rules: GameRules) -> tuple[dict[str, Any], list[str]]:
    """The state the relay loads: rebuilt from the game ``rules`` replayed, every
    field retyped, extra tags from ``EXTRA_TAGS`` only. Returns it with the tags
    left out (counted by the relay)."""
    headers = dict(state.get("headers") or {})
    extra = headers.get("extra") or {}
    left_out = sorted(str(key) for key in extra if key not in EXTRA_TAGS)
    headers["extra"] = {k: v for k, v in extra.items() if k in EXTRA_TAGS}
    board = rules.board.root()
    moves = []
    for number, (given, move) in enumerate(zip(state.get("moves") or [], rules.board.move_stack,
                                               strict=True), 1):  # fmt: skip
        side = "white" if board.turn == chess.WHITE else "black"
        san = board.san(move)
        board.push(move)
        clock = given.get("clock")
        moves.append({
            "ply": number, "uci": move.uci(), "san": san, "fen": board.fen(), "by": side,
            "t": _number_or_none(given.get("t")) or 0.0,
            "clock": {s: float(clock[s]) for s in SIDES} if isinstance(clock, dict) else None,
        })  # fmt: skip
    clock = None
    if rules.clock is not None:
        given = state.get("clock") or {}
        running = given.get("running")
        clock = {**rules.clock, "running": running if running in SIDES else None,
                 "t": _number_or_none(given.get("t"))}  # fmt: skip
    irregularity = state.get("irregularity")
    if irregularity is not None:
        _irregularity(irregularity if isinstance(irregularity, dict) else {"by": 0})
    flag = state.get("flag")
    if flag is not None:
        if not isinstance(flag, dict):
            raise Rejected("state.flag is not an object")
        GameRules().take({"type": "flag", **flag})
        flag = {"side": flag.get("side"), "both": bool(flag.get("both")),
                "draw": bool(flag.get("draw")), "t": _number_or_none(flag.get("t"))}  # fmt: skip
    claim = state.get("draw_claimable")
    if claim is not None:
        if not isinstance(claim, dict):
            raise Rejected("state.draw_claimable is not an object")
        GameRules().take({"type": "draw_claimable", **claim})
        ply = claim.get("ply")
        claim = {"reason": claim["reason"], "ply": ply if isinstance(ply, int) else None}
    penalties = []
    for penalty in state.get("penalties") or []:
        if not isinstance(penalty, dict):
            raise Rejected("a penalty of the state is not an object")
        GameRules().take({"type": "penalty", **penalty, "clock": None})
        penalties.append({
            "to": penalty["to"], "seconds": float(penalty["seconds"]),
            "article": penalty.get("article") or "",
            "t": _number_or_none(penalty.get("t")) or 0.0,
        })  # fmt: skip
    given_status = state.get("status")
    status: dict[str, Any] = given_status if isinstance(given_status, dict) else {}
    canonical = {
        "origin": state.get("origin"),
        "seq": state.get("seq") or 0,
        "headers": headers,
        "start_fen": rules.board.root().fen(),
        "chess960": rules.chess960,
        "flipped": state.get("flipped") is True,
        "moves": moves,
        "clock": clock,
        "irregularity": irregularity,
        "result": rules.result,
        "result_reason": _text_or_none(state.get("result_reason"), 64) if rules.result else None,
        "draw_claimable": claim,
        "flag": flag,
        "penalties": penalties,
        "rejected_signal": _number_or_none(state.get("rejected_signal")),
        "connection": _text_or_none(state.get("connection"), 16),
        "recovery_lines": [],
        "t": _number_or_none(state.get("t")),
        "status": {
            "connected": status.get("connected") if isinstance(status.get("connected"), bool)
            else None,
            "battery": _number_or_none(status.get("battery")),
        },
    }  # fmt: skip
    return canonical, left_out
