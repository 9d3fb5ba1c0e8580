"""The game as displays need it: a pure fold of event-feed dicts.

Every output (the live page, the live PGN, MQTT, the journal, the speech's
"last move" / "clock" answers) needs the same picture of the game: the start
position, the moves as they stand now, the clocks, an open irregularity, the
result. Folding the feed in one place keeps them from disagreeing.

``GameRecord.apply`` takes the ``to_dict()`` objects of ``daemon.game.events`` (or
the same dicts read back from a journal or a socket). It never raises on an
event it does not know or on a malformed one: a display must keep showing the
game even when the feed grows new event types. No I/O, no clock: the times are
the events' own ``t``.

Rules of the fold:

- ``game_start`` begins a new game from its ``fen`` (moves, result, open
  irregularity and draw claims are cleared; the headers stay).
- ``move`` with ply *n* becomes the *n*-th half-move; a later move with the same
  ply (a correction) replaces it and drops every later one. A following move
  also closes an open irregularity (the game went on, so it was put right).
- ``takeback`` with ply *n* removes the move with that ply and every later one.
- ``irregularity`` opens; ``position_restored`` closes it. One ``accepted`` by the
  arbiter (``accept_position``) that differs from the record's position makes its
  ``fen`` the game's start from here (``start_ply``: its ply), and the moves before
  it a line kept in ``earlier`` (the PGN's first comment): no PGN reader replays a
  game whose pieces changed without a move.
- ``clock`` is the latest clock; each move keeps the clock at its completion
  (the move's own ``clock``, or failing that the latest clock seen). A move
  decided before its press (on the settle time, the clock counted as stopped; a
  mate) takes the clock of that press, when the next clock report hands the run
  to the opponent.
- ``game_end`` sets the result; a later ``game_start`` clears it.
- ``moves_recovered`` ``ambiguous``: its ``candidates`` are offered to the arbiter
  (``recovery_lines``) until a move, a takeback, a new game or the position restored.
- a ``move`` with ``correction`` and no ``clock`` (the arbiter's ``correct_move``
  replays the later moves) keeps the clock of the move it replaces at that ply.
- a ``move`` ``entered`` by the arbiter (``enter_moves``, ``choose_line``,
  ``add_game``) has its own ``clock`` or none: never the latest clock, which is the
  time the arbiter typed it, not the time it was played.
- ``game_resumed`` after a daemon restart: if the record does not hold those
  moves (a display that joined late), the resumed position becomes the start.

In the daemon each board's game is held once: the board's pipeline folds every
event into its one record, and the journal (its PGN), the announcer, the page and
MQTT read that record (``daemon.boards.pageview``: the page and MQTT read it as of the
last event on the card, a ``snapshot``). A display of boards heard from elsewhere (a
relay) folds its own.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as _dt
import logging
import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import chess

from daemon.game.resultsignal import signalled_result
from drivers.records import Record

log = logging.getLogger(__name__)

#: Headers of the Seven Tag Roster, in the order PGN requires.
SEVEN_TAG_ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result")

_HEADER_FIELDS = ("event", "site", "date", "round", "white", "black")

#: Result strings PGN knows; anything else is shown as an unfinished game.
PGN_RESULTS = frozenset({"1-0", "0-1", "1/2-1/2", "*"})

#: A tag name as the PGN standard (8.1.1) allows it: letters, digits, underscore
#: (and the few signs python-chess and lichess read), starting with a letter or digit.
PGN_TAG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_+#=:-]{0,63}$")

#: The PGN standard caps a string token at 255 characters.
PGN_STRING_LIMIT = 255

#: Unicode categories that have no place in a tag value: control characters
#: (newline, NUL, ESC...), format characters (bidi overrides, zero-width) and
#: line/paragraph separators. Each becomes a space, so a name can never break
#: out of its tag or make a reader see something else than it says.
_UNPRINTABLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def clean_tag_value(value: object) -> str:
    """A header value with nothing a PGN reader could mistake: every control or
    invisible formatting character replaced by a space, runs of blanks folded,
    trimmed to PGN's 255 characters. (Quotes and backslashes stay: they are
    escaped when written, see ``pgn_tag``.)"""
    text = str(value)
    if not text.isprintable():  # printable: no character of _UNPRINTABLE (the usual case,
        # and a hall's PGNs make some hundred tags a second: each character's category was
        # a tenth of the lichess push's cost)
        text = "".join(" " if unicodedata.category(ch) in _UNPRINTABLE else ch for ch in text)
    text = " ".join(text.split())[:PGN_STRING_LIMIT]
    while len(text) + text.count("\\") + text.count('"') > PGN_STRING_LIMIT:
        text = text[:-1]
    return text


def pgn_tag(name: str, value: object) -> str:
    """One tag pair line, ``[Name "value"]``, the value escaped as the PGN standard
    (8.1.1) says: a backslash as two, a quote as backslash-quote."""
    text = clean_tag_value(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'[{name} "{text}"]'


@dataclass(eq=False, repr=False, slots=True)
class RecordedMove(Record):
    """One half-move as it stands in the game now."""

    ply: int
    uci: str
    san: str
    fen: str  # after the move
    by: str  # "white" / "black"
    t: float
    clock: dict[str, float] | None = None  # both clocks at completion, when known

    def to_dict(self) -> dict[str, Any]:
        return {
            "ply": self.ply,
            "uci": self.uci,
            "san": self.san,
            "fen": self.fen,
            "by": self.by,
            "t": self.t,
            "clock": dict(self.clock) if self.clock else None,
        }


@dataclass(eq=False, repr=False, slots=True)
class GameHeaders(Record):
    """The PGN headers that come from the configuration, not from the board."""

    event: str = "?"
    site: str = "?"
    date: str = ""  # "YYYY.MM.DD"; empty: the unknown date "????.??.??"
    round: str = "?"
    white: str = "?"
    black: str = "?"
    extra: dict[str, str] = field(default_factory=dict)  # e.g. {"Board": "3"}

    def to_dict(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "site": self.site,
            "date": self.date,
            "round": self.round,
            "white": self.white,
            "black": self.black,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> GameHeaders:
        """The headers back from ``to_dict`` (a state heard from elsewhere)."""
        return cls(
            **{k: str(raw[k]) for k in _HEADER_FIELDS if raw.get(k) is not None},
            extra={str(k): str(v) for k, v in (raw.get("extra") or {}).items()},
        )


def format_clock(seconds: float) -> str:
    """``h:mm:ss`` as lichess and ChessBase read ``[%clk]``; whole seconds shown
    as a clock shows them (1:29:59.6 left reads 1:29:59)."""
    total = max(0, math.floor(seconds + 1e-6))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _opponent(colour: str) -> str | None:
    """The other player of ``colour`` (``white`` / ``black``); None for anything else."""
    return {"white": "black", "black": "white"}.get(colour)


def _clock_pair(value: Any) -> dict[str, float] | None:
    """``{"white": s, "black": s}`` from a dict carrying them, else None."""
    if not isinstance(value, dict):
        return None
    white, black = _as_float(value.get("white")), _as_float(value.get("black"))
    if white is None or black is None:
        return None
    return {"white": white, "black": black}


class GameRecord:
    """One board's game, kept up to date by ``apply``-ing the event feed."""

    def __init__(
        self, headers: GameHeaders | None = None, *, start_fen: str = chess.STARTING_FEN
    ) -> None:
        self.headers = headers or GameHeaders()
        self.start_fen = start_fen
        self.start_ply = 0  # the ply of start_fen (a position accepted in mid-game)
        #: the moves before each position the arbiter accepted, as SAN lines
        self.earlier: list[str] = []
        self.chess960 = False
        self.flipped = False
        self.moves: list[RecordedMove] = []
        self.clock: dict[str, Any] | None = None  # {"white", "black", "running", "t"}
        self.irregularity: dict[str, Any] | None = None
        self.result: str | None = None
        self.result_reason: str | None = None
        self.draw_claimable: dict[str, Any] | None = None
        self.flag: dict[str, Any] | None = None
        self.penalties: list[dict[str, Any]] = []
        #: the ``t`` of a signalled result the arbiter rejected (it is not offered again)
        self.rejected_signal: float | None = None
        self.connection: str | None = None  # "connected" / "lost", from the feed
        self.started_at: float | None = None
        self.last_t: float | None = None
        self._position_fen: str | None = None  # a fen the feed stated for "now"
        #: lines of moves that lead to the board's position, for the arbiter to pick
        self.recovery_lines: list[str] = []
        #: the clocks of moves a correction replaced, by ply (a replayed move keeps its own)
        self._superseded: dict[int, dict[str, float] | None] = {}
        #: the ply of the last move when it was decided before its press (``_clock``)
        self._press_owed: int | None = None
        #: the names the feed's ``players`` events gave, in force (for a display that
        #: names the games with headers of its own: ``named_by``)
        self.named: dict[str, Any] = {}
        #: the position as last made (``_made_position``), with its FEN and check
        #: square: a clock report, most of a hall's events, made the FEN again each
        #: time (issue 28)
        self._position: _Position | None = None
        self._replayed: _Replay | None = None  # the moves pushed so far, and their PGN
        #: a snapshot's: the live record's replay and how many of its moves it holds
        #: (its moves and penalties)
        self._frozen: tuple[_Replay, int, int] | None = None
        self._live: GameRecord | None = None  # a snapshot's: the record it was taken of

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> GameRecord:
        """The record back from its ``state()`` (a retained MQTT state, a display
        joining late); the inverse of ``state`` for everything it carries."""
        headers = GameHeaders.from_dict(state.get("headers") or {})
        record = cls(headers, start_fen=str(state.get("start_fen") or chess.STARTING_FEN))
        record.chess960 = bool(state.get("chess960"))
        record.flipped = bool(state.get("flipped"))
        start_ply = state.get("start_ply")
        record.start_ply = start_ply if isinstance(start_ply, int) and start_ply > 0 else 0
        record.earlier = [str(line) for line in state.get("earlier") or []]
        for move in state.get("moves") or []:
            record.moves.append(
                RecordedMove(
                    ply=int(move["ply"]),
                    uci=str(move["uci"]),
                    san=str(move.get("san") or move["uci"]),
                    fen=str(move["fen"]),
                    by=str(move.get("by") or ""),
                    t=float(move.get("t") or 0.0),
                    clock=_clock_pair(move.get("clock")),
                )
            )
        record.clock = dict(state["clock"]) if state.get("clock") else None
        record.irregularity = copy.deepcopy(state.get("irregularity"))
        record.result = state.get("result")
        record.result_reason = state.get("result_reason")
        record.draw_claimable = state.get("draw_claimable")
        record.flag = state.get("flag")
        record.penalties = copy.deepcopy(state.get("penalties") or [])
        record.rejected_signal = _as_float(state.get("rejected_signal"))
        record.connection = state.get("connection")
        record.recovery_lines = [str(line) for line in state.get("recovery_lines") or []]
        record.last_t = _as_float(state.get("t"))
        return record

    def snapshot(self) -> GameRecord:
        """The game as it stands now, kept while this record folds on: what the page
        shows until the events after it are on the card (``daemon.boards.pageview``).

        Cheap, taken at every event: the fields are shared, not copied (the fold
        rebinds them, it never changes one in place, except the lists copied here),
        and the snapshot reads the moves' board and PGN from this record's replay
        as it stood (``_Replay.checkpoints``), never replaying the game. A snapshot is
        read, never folded; rejecting its signalled result rejects the record's."""
        self.position()  # the position's cache, shared: the snapshot's board() is a copy
        replay = self._replay()
        snap = copy.copy(self)
        snap.moves = list(self.moves)
        snap.penalties = list(self.penalties)
        snap.earlier = list(self.earlier)
        snap._frozen = self._frozen or (replay, len(replay.moves), len(self.penalties))
        snap._replayed = None  # its own, should it ever need one (``_replay``)
        snap._live = self._live or self
        return snap

    # -- the fold -------------------------------------------------------------

    def apply(self, event: dict[str, Any]) -> None:
        """Fold one event-feed dict in; unknown or malformed events change nothing."""
        if not isinstance(event, dict) or self._live is not None:
            return  # a snapshot is never folded
        handler = _HANDLERS.get(str(event.get("type")))
        if handler is None:
            return
        t = _as_float(event.get("t"))
        try:
            handler(self, event, t if t is not None else (self.last_t or 0.0))
        except (KeyError, TypeError, ValueError):
            return  # a malformed event: keep the game as it was
        if t is not None:
            self.last_t = t

    def _game_start(self, event: dict[str, Any], t: float) -> None:
        fen = str(event.get("fen") or chess.STARTING_FEN)
        chess.Board(fen, chess960=bool(event.get("chess960")))  # validates
        self.start_fen = fen
        self.start_ply = 0
        self.earlier = []
        self.chess960 = bool(event.get("chess960", False))
        self.flipped = bool(event.get("flipped", False))
        self.moves = []
        self.irregularity = None
        self.result = None
        self.result_reason = None
        self.draw_claimable = None
        self.flag = None
        self.penalties = []
        self.started_at = t
        self._position_fen = None
        self.recovery_lines = []
        self._superseded = {}

    def _move(self, event: dict[str, Any], t: float) -> None:
        ply = int(event["ply"])
        if ply < 1:
            raise ValueError("ply starts at 1")
        clock = _clock_pair(event.get("clock"))
        if event.get("correction"):
            self._superseded.update({m.ply: m.clock for m in self.moves if m.ply >= ply})
            if clock is None:
                clock = self._superseded.get(ply)
        else:
            self._superseded = {}
        if not event.get("entered"):  # a move typed in has the clock known at it, or none
            clock = clock or _clock_pair(self.clock)
        move = RecordedMove(
            ply=ply,
            uci=str(event["uci"]),
            san=str(event.get("san") or event["uci"]),
            fen=str(event["fen"]),
            by=str(event.get("by") or ""),
            t=t,
            clock=clock,
        )
        self.moves = [m for m in self.moves if m.ply < ply]
        self.moves.append(move)
        running = self.clock.get("running") if self.clock else None
        played = not event.get("correction") and not event.get("entered")  # at the board
        self._press_owed = ply if played and running != _opponent(move.by) else None
        self.irregularity = None
        self.draw_claimable = None
        self._position_fen = None
        self.recovery_lines = []
        if clock and self.clock is not None:
            self.clock = {**self.clock, **clock}

    def _takeback(self, event: dict[str, Any], t: float) -> None:
        ply = int(event["ply"])
        self.moves = [m for m in self.moves if m.ply < ply]
        self.draw_claimable = None
        fen = event.get("fen")
        self._position_fen = str(fen) if fen else None
        self.recovery_lines = []

    def _irregularity(self, event: dict[str, Any], t: float) -> None:
        self.irregularity = {k: copy.deepcopy(v) for k, v in event.items() if k != "type"}

    def _position_restored(self, event: dict[str, Any], t: float) -> None:
        if event.get("accepted"):
            self._accept(str(event["fen"]))
        self.irregularity = None
        self.recovery_lines = []  # the board is back where the record is: nothing to pick

    def _accept(self, fen: str) -> None:
        """The arbiter took the board as it stands: from here the game starts at
        ``fen`` (at the ply it had), the moves before it kept as a line."""
        accepted = chess.Board(fen, chess960=self.chess960)  # validates
        now = self.board()
        if (accepted.board_fen(), accepted.turn) == (now.board_fen(), now.turn):
            return  # the board shows the game's own position: nothing changes
        replayed = self.replayed_board()
        if replayed.move_stack:
            root = replayed.root()
            line = root.variation_san(replayed.move_stack)
            self.earlier.append(f"{line} (ply {self.ply})")
        self.start_ply = self.ply
        self.start_fen = fen
        self.moves = []
        self._position_fen = None
        self._superseded = {}

    def _clock(self, event: dict[str, Any], t: float) -> None:
        pair = _clock_pair(event)
        if pair is None:
            raise ValueError("clock event without both times")
        running = event.get("running")
        self.clock = {**pair, "running": running if running in ("white", "black") else None, "t": t}
        self._take_owed_press(pair, running)

    def _take_owed_press(self, pair: dict[str, float], running: Any) -> None:
        """The mover's press after his move was decided without it: the move's clock
        becomes the clock at that press, the increment added.

        With the clock counted as stopped (its sides not yet learnt at a game's first
        move, a clock unplugged) a move is decided on the settle time, and its press
        comes after it; a mate is decided before its press too. The move's own clock
        was the one before the press, so White's first ``[%clk]`` lacked the increment
        whenever he pressed later than the settle time (seen in the hall demo: 1:30:00
        for a clock that showed 1:30:27 after his press)."""
        owed = self._press_owed
        if owed is None or not self.moves or self.moves[-1].ply != owed:
            return
        last = self.moves[-1]
        if running != _opponent(last.by):
            return
        self._press_owed = None
        self.moves = [*self.moves[:-1], dataclasses.replace(last, clock=dict(pair))]

    def _game_end(self, event: dict[str, Any], t: float) -> None:
        self.result = str(event["result"])
        self.result_reason = str(event.get("reason") or "") or None

    def _draw_claimable(self, event: dict[str, Any], t: float) -> None:
        self.draw_claimable = {"reason": event.get("reason"), "ply": event.get("ply")}

    def _flag(self, event: dict[str, Any], t: float) -> None:
        self.flag = {
            "side": event.get("side"),
            "both": bool(event.get("both")),
            "draw": bool(event.get("draw")),
            "t": t,
        }

    def _penalty(self, event: dict[str, Any], t: float) -> None:
        self.penalties.append({k: v for k, v in event.items() if k != "type"})
        pair = _clock_pair(event.get("clock"))
        if pair is not None:
            running = self.clock.get("running") if self.clock else None
            self.clock = {**pair, "running": running, "t": t}

    def _players(self, event: dict[str, Any], t: float) -> None:
        """New names or round from the arbiter: a new headers value (never changed
        in place, so a record folded from the same defaults is not touched too)."""
        named = players_named(event)
        if not named:
            raise ValueError("players without a name")
        self.headers = dataclasses.replace(self.headers, **named)
        self.named = {**self.named, **named}

    def named_by(self, headers: GameHeaders) -> None:
        """Name the games with ``headers`` (a display's own: the page's event, board
        tag...), the names the feed gave in force over them."""
        self.headers = dataclasses.replace(headers, **self.named)

    def _moves_recovered(self, event: dict[str, Any], t: float) -> None:
        """Several lines lead to what the board shows: offer them to the arbiter."""
        if event.get("how") == "ambiguous":
            self.recovery_lines = [str(line) for line in event.get("candidates") or []]
        else:
            self.recovery_lines = []

    def _connection(self, event: dict[str, Any], t: float) -> None:
        self.connection = str(event["state"])

    def _game_resumed(self, event: dict[str, Any], t: float) -> None:
        ply, fen = int(event["ply"]), str(event["fen"])
        if self.start_ply + len(self.moves) == ply and self.ply == ply:
            return  # we hold exactly those moves already
        chess.Board(fen)  # validates
        self.start_fen = fen
        self.start_ply = ply
        self.moves = []
        self._position_fen = None

    # -- views ----------------------------------------------------------------

    @property
    def result_signal(self) -> dict[str, Any] | None:
        """A result the kings signal on the board, waiting for the arbiter (see
        ``daemon.game.resultsignal``); None once a result is set or the
        arbiter rejected this signal."""
        if self.result:
            return None
        signal = signalled_result(self.irregularity)
        if signal is None or signal["t"] == self.rejected_signal:
            return None
        return signal

    def reject_signal(self) -> bool:
        """The arbiter says the kings' position is no result: stop offering it."""
        signal = self.result_signal
        if signal is None:
            return False
        self.rejected_signal = signal["t"]
        if self._live is not None:  # a snapshot: the game itself no longer offers it
            self._live.rejected_signal = signal["t"]
        return True

    @property
    def last_move(self) -> RecordedMove | None:
        return self.moves[-1] if self.moves else None

    @property
    def ply(self) -> int:
        """The number of the last half-move played (0 before the first; the ply of
        the start position when the record starts in mid-game)."""
        return self.moves[-1].ply if self.moves else self.start_ply

    def board(self) -> chess.Board:
        """The current position with its move stack, for SAN, SVG and PGN.

        Replays the moves from the start; should a move not replay (a feed that
        skipped something), the position the feed last stated wins, without the
        move stack, so a display is never wrong about the board. The replay is
        kept: a move played pushes that move only (a relay folds a clock tick per
        board per second; a game's every move used to replay it from the start).
        """
        made = self._made_position()
        return self._kept_board() if made.replayed else made.board.copy()

    def _kept_board(self) -> chess.Board:
        """The kept replay's board with its move stack, as this record's moves stand.
        A snapshot's is the live record's replay taken back to the moves it holds: a
        snapshot never replays the game for it."""
        if self._frozen is None:
            return self._replay().board.copy()
        replay, fed, _ = self._frozen
        board = replay.board.copy()
        for _ in range(len(board.move_stack) - fed):  # the moves pushed since
            board.pop()
        return board

    def position(self) -> chess.Board:
        """``board()``'s position without its move stack, not a copy: to read (the
        page's state and picture at every event), never to push or pop. Made once a
        position: a copy with the stack copies every move of the game (108 µs at ply
        60 here, growing with the game), and the page read the board three times an
        event (issue 28)."""
        return self._made_position().board

    def _made_position(self) -> _Position:
        """The position for the record's moves and stated FEN, made when they change."""
        key: tuple[Any, ...] = (self.start_fen, self.chess960, self._position_fen, len(self.moves))
        key += (self.moves[-1].uci, self.moves[-1].fen) if self.moves else ()
        made = self._position
        if made is None or made.key != key:
            replayed = self._replay().board
            fen = replayed.fen()
            stated = self._stated_fen()
            if stated is not None and fen.split(" ", 1)[0] != stated.split(" ", 1)[0]:
                board = chess.Board(stated, chess960=self.chess960)
                fen, is_replay = board.fen(), False
            else:
                board, is_replay = replayed.copy(stack=False), True
            made = self._position = _Position(key, board, fen, _check_square(board), is_replay)
        return made

    def replayed_board(self) -> chess.Board:
        """The recorded moves pushed from the start position, up to the first that is
        not legal there, with their move stack: ``board()`` without the position a
        feed stated (a copy of the kept replay)."""
        return self._replay().board.copy()

    def replayed_after(self, count: int) -> chess.Board | None:
        """The position after the first ``count`` moves of the kept replay (None when
        fewer replayed), with only the move stack it took back: copying a long game's
        whole stack was most of a move's phrase, made at each move a blind player
        hears (``daemon.speech.answers.board_before_ply``)."""
        kept = self._replay().board
        back = len(kept.move_stack) - count
        if back < 0:
            return None
        board = kept.copy(stack=back)
        for _ in range(back):
            board.pop()
        return board

    def _stated_fen(self) -> str | None:
        if self._position_fen:
            return self._position_fen
        if self.moves:
            return self.moves[-1].fen
        return None

    def _replay(self) -> _Replay:
        """The recorded moves pushed from the start position, up to the first that is
        not legal there (a damaged journal must not end the display), with their
        movetext. Brought up to date by pushing the moves added since the last call;
        replayed from the start only when the moves before them changed (a takeback,
        a correction, another game)."""
        if self._frozen is not None:
            replay, fed, given = self._frozen
            # a snapshot, the record not moved on since
            if len(replay.moves) == fed and len(replay.penalties) == given:
                return replay
        replayed = self._replayed
        if replayed is None or not replayed.holds_start_of(self):
            replayed = self._replayed = _Replay(
                self.start_fen, self.chess960, self.penalties, self.earlier
            )
        replayed.extend(self.moves)
        return replayed

    def clock_at(self, ply: int) -> dict[str, float] | None:
        """Both clocks when the half-move ``ply`` was completed, when known."""
        for move in self.moves:
            if move.ply == ply:
                return dict(move.clock) if move.clock else None
        return None

    def pgn_headers(self, names: GameHeaders | None = None) -> dict[str, str]:
        """The tags of ``pgn`` (with ``names`` instead of the record's own headers,
        for a reader with its own rules, e.g. lichess's)."""
        own = names or self.headers
        headers = {
            "Event": own.event or "?",
            "Site": own.site or "?",
            "Date": own.date or "????.??.??",
            "Round": own.round or "?",
            "White": own.white or "?",
            "Black": own.black or "?",
            "Result": self.result if self.result in PGN_RESULTS else "*",
        }
        if self.start_fen != chess.STARTING_FEN or self.chess960:
            headers["SetUp"] = "1"
            headers["FEN"] = self.start_fen
        if self.chess960:
            headers["Variant"] = "Chess960"
        for key, value in own.extra.items():
            if not PGN_TAG_NAME.match(str(key)):
                log.warning("PGN: dropped a header with an invalid tag name %r", key)
                continue
            headers.setdefault(str(key), str(value))
        return {key: clean_tag_value(value) for key, value in headers.items()}

    def pgn(self, names: GameHeaders | None = None) -> str:
        """The game so far as PGN (Seven Tag Roster first, ``[%clk]`` per move).

        The tags are written here, escaped (``pgn_tag``): python-chess writes a
        value as given, so a name with a quote and a newline could end its tag
        and add a forged one (a ``[Result "1-0"]`` mid-game).
        """
        headers = self.pgn_headers(names)
        if self._frozen is not None:  # a snapshot: the replay's text as it stood then
            replay, upto, given = self._frozen
            movetext = replay.movetext(headers["Result"], upto, given)
        else:
            movetext = self._replay().movetext(headers["Result"])
        tags = "\n".join(pgn_tag(key, value) for key, value in headers.items())
        return f"{tags}\n\n{movetext}\n"

    def pgn_key(self) -> tuple[Any, ...]:
        """What ``pgn`` is made of, to tell whether it changed without making it (a
        clock report, the most frequent event, changes none of it): the headers, the
        start, the result, the moves (each a new object when it changes) and the
        penalties. The one rule of "the PGN changed" for the hub's kept PGN
        (``Hub.board_pgn``: ``/game.pgn``, MQTT's retained PGN) and the lichess push;
        keep it in step with ``pgn_headers`` and ``_Replay``."""
        headers = self.headers
        return (
            headers.event, headers.site, headers.date, headers.round, headers.white,
            headers.black, tuple(headers.extra.items()), self.start_fen, self.chess960,
            self.result, list(self.moves), len(self.penalties),
        )  # fmt: skip

    def state(self, *, with_moves: bool = True) -> dict[str, Any]:
        """The JSON-ready picture for ``/state.json`` and retained MQTT state;
        ``with_moves=False``: an empty move list, for a caller that keeps its own
        (``daemon.broadcast.movelist``)."""
        made = self._made_position()
        board, fen, check_square = made.board, made.fen, made.check
        last = self.last_move
        return {
            "headers": self.headers.to_dict(),
            "start_fen": self.start_fen,
            "start_ply": self.start_ply,
            "earlier": list(self.earlier),
            "fen": fen,
            "turn": "white" if board.turn == chess.WHITE else "black",
            "ply": self.ply,
            "flipped": self.flipped,
            "chess960": self.chess960,
            "moves": [m.to_dict() for m in self.moves] if with_moves else [],
            "last_move": last.to_dict() if last else None,
            "check": check_square,
            "clock": dict(self.clock) if self.clock else None,
            "irregularity": copy.deepcopy(self.irregularity),
            "result": self.result,
            "result_reason": self.result_reason,
            "draw_claimable": dict(self.draw_claimable) if self.draw_claimable else None,
            "flag": dict(self.flag) if self.flag else None,
            "penalties": copy.deepcopy(self.penalties),
            "result_signal": self.result_signal,
            "rejected_signal": self.rejected_signal,
            "connection": self.connection,
            "recovery_lines": list(self.recovery_lines),
            "t": self.last_t,
        }


class _Position(NamedTuple):
    """A record's position as ``_made_position`` made it for ``key`` (the moves and
    the FEN stated): the board without its move stack, its FEN, the king's square
    when in check, and whether it is the kept replay's (``board()`` then copies the
    replay, with its stack) or the position the feed stated (a replay that disagrees
    with it)."""

    key: tuple[Any, ...]
    board: chess.Board
    fen: str
    check: str | None
    replayed: bool


def _check_square(board: chess.Board) -> str | None:
    """The square of the king in check on ``board`` (None: not in check)."""
    king = board.king(board.turn) if board.is_check() else None
    return chess.square_name(king) if king is not None else None


class _Replay:
    """A game's moves pushed on a board and written out by python-chess's own PGN
    exporter, one move at a time: a move added costs that move's SAN, not the whole
    game's again (rebuilding the PGN from the start after every move was a third of
    a 12-board hall's CPU on a Pi's budget, issue 19). The movetext is what
    ``Game.accept(StringExporter(...))`` writes for the same moves, line breaks
    included: the exporter is fed the same calls in the same order."""

    def __init__(
        self,
        start_fen: str,
        chess960: bool,
        penalties: list[dict[str, Any]] | None = None,
        earlier: list[str] | None = None,
    ) -> None:
        self.start_fen = start_fen
        self.chess960 = chess960
        # the record's penalties (its own list, which grows): each becomes a comment
        # where it was given, after the last move before it (its ``t``)
        self.penalties = penalties if penalties is not None else []
        self._penalties_said = 0
        self.board = chess.Board(start_fen, chess960=chess960)
        self.moves: list[RecordedMove] = []  # the recorded moves fed, legal or not
        self.stopped = False  # a move did not replay: nothing after it is pushed
        # Here, not at the top: chess.pgn brings chess.engine, chess.svg and xml.etree,
        # 5% of the start-up's CPU before READY (issue 19); the daemon imports it in a
        # thread after READY (daemon.compose.import_after_ready)
        from chess.pgn import StringExporter

        self._exporter = StringExporter(headers=False, variations=False, comments=True)
        self._exporter.begin_game()
        self._exporter.end_headers()
        self.earlier = list(earlier or [])
        for line in self.earlier:  # the moves before a position the arbiter accepted
            self._exporter.visit_comment(
                f"The arbiter accepted the position on the board after: {line}"
            )
        #: the exporter as it stood after each move fed (the first: before any), so a
        #: snapshot of fewer moves writes its text from here (``movetext(upto=)``)
        self.checkpoints: list[tuple[int, str, bool, int, bool]] = [self._checkpoint()]

    def _checkpoint(self) -> tuple[int, str, bool, int, bool]:
        """The exporter's state: it only appends lines, so the count of them, the
        line being written, whether a move number is due, the penalties said and
        whether the replay stopped say it all."""
        exporter = self._exporter
        return (
            len(exporter.lines),
            exporter.current_line,
            exporter.force_movenumber,
            self._penalties_said,
            self.stopped,
        )

    def holds_start_of(self, record: GameRecord) -> bool:
        """Whether every move fed is still the record's, in its place."""
        if (self.start_fen, self.chess960) != (record.start_fen, record.chess960):
            return False
        if self.penalties is not record.penalties:  # another game's (a new game_start)
            return False
        if self.earlier != record.earlier:
            return False
        moves = record.moves
        fed = self.moves
        return len(fed) <= len(moves) and all(a is b for a, b in zip(fed, moves, strict=False))

    def extend(self, moves: list[RecordedMove]) -> None:
        for move in moves[len(self.moves) :]:
            self.moves.append(move)
            if not self.stopped:
                self._push(move)
            self.checkpoints.append(self._checkpoint())

    def _push(self, move: RecordedMove) -> None:
        try:
            parsed = chess.Move.from_uci(move.uci)
        except ValueError:
            parsed = None
        if parsed is None or not self.board.is_legal(parsed):
            self.stopped = True
            return
        self._say_penalties(self._exporter, before=move.t)
        self._exporter.visit_move(self.board, parsed)
        self.board.push(parsed)
        if move.clock and move.by in move.clock:
            self._exporter.visit_comment(f"[%clk {format_clock(move.clock[move.by])}]")

    def _say_penalties(
        self, exporter: Any, before: float | None, said: int | None = None, upto: int | None = None
    ) -> None:
        """The penalties given before ``before`` (None: all) not yet in the movetext,
        as comments: ``{ Penalty 9.5b: +3:00 to White }`` (the page's words). Into a
        copy of the exporter (the game's end so far) they are not counted as said.
        ``said``/``upto``: a snapshot's, the first penalties not said and how many
        it holds."""
        start = self._penalties_said if said is None else said
        for penalty in self.penalties[start:upto]:
            t = _as_float(penalty.get("t"))
            if before is not None and t is not None and t >= before:
                break
            exporter.visit_comment(penalty_comment(penalty))
            start += 1
        if exporter is self._exporter:
            self._penalties_said = start

    def movetext(self, result: str, upto: int | None = None, penalties: int | None = None) -> str:
        """The moves so far and ``result``, as the exporter ends a game (with the
        penalties given since the last move). ``upto``, ``penalties``: a snapshot's
        text, of the first ``upto`` moves fed and ``penalties`` penalties."""
        ending = copy.copy(self._exporter)
        said, stopped = self._penalties_said, self.stopped
        if upto is None or upto >= len(self.moves):
            ending.lines = list(self._exporter.lines)
        else:
            lines, ending.current_line, ending.force_movenumber, said, stopped = self.checkpoints[
                upto
            ]
            ending.lines = self._exporter.lines[:lines]
        if not stopped:
            self._say_penalties(ending, before=None, said=said, upto=penalties)
        ending.visit_result(result)
        ending.end_game()
        return ending.result()


def penalty_comment(penalty: dict[str, Any]) -> str:
    """A penalty as the PGN says it, in the page's words: "Penalty 9.5b: +3:00 to
    White" (the time the arbiter added to that player's clock)."""
    seconds = _as_float(penalty.get("seconds"))
    if seconds is None or not math.isfinite(seconds):  # an older daemon's NaN: no time
        seconds = 0.0
    minutes, secs = divmod(max(0, round(seconds)), 60)
    article = clean_tag_value(penalty.get("article") or "")
    to = "Black" if penalty.get("to") == "black" else "White"
    return f"Penalty{' ' + article if article else ''}: +{minutes}:{secs:02d} to {to}"


def today_pgn_date(today: _dt.date | None = None) -> str:
    """A PGN date (``YYYY.MM.DD``) for callers that fill headers from the calendar."""
    day = today or _dt.date.today()
    return f"{day.year:04d}.{day.month:02d}.{day.day:02d}"


def pgn_of_games(records: list[GameRecord]) -> str:
    """Several boards as several games in one file, as lichess broadcasts poll."""
    return "\n".join(record.pgn() for record in records)


def replay(events: list[dict[str, Any]], headers: GameHeaders | None = None) -> GameRecord:
    """A record from a whole feed (a journal read back, a test)."""
    record = GameRecord(headers)
    for event in events:
        record.apply(event)
    return record


def players_named(event: dict[str, Any]) -> dict[str, Any]:
    """The headers a ``players`` event names: its texts among white, black and round
    (a field left out or null keeps the header as it was)."""
    return {key: event[key] for key in ("white", "black", "round")
            if isinstance(event.get(key), str)}  # fmt: skip


_HANDLERS = {
    "game_start": GameRecord._game_start,
    "move": GameRecord._move,
    "takeback": GameRecord._takeback,
    "irregularity": GameRecord._irregularity,
    "position_restored": GameRecord._position_restored,
    "boards_agree": GameRecord._position_restored,  # two boards, one game: put right
    "clock": GameRecord._clock,
    "game_end": GameRecord._game_end,
    "draw_claimable": GameRecord._draw_claimable,
    "flag": GameRecord._flag,
    "penalty": GameRecord._penalty,
    "connection": GameRecord._connection,
    "players": GameRecord._players,
    "game_resumed": GameRecord._game_resumed,
    "moves_recovered": GameRecord._moves_recovered,
}
