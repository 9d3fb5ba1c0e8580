"""Domain events: what the rules core decided, the one stream every output reads.

Each event becomes one JSON object of the event feed (``to_dict``), with ``t``
(the sensor time it was decided at) and ``type``. The pipeline makes that dict once
for the board's one game record (``daemon.game.record``) and the journal, and hands
the outputs the typed events (``daemon.boards.outputs.Output``); an output at an edge makes
the dict itself: the feed's lines, the page and MQTT. ``from_dict`` reads them
back. The outputs never see the core's internals, so the feed a display receives is
exactly what the journal stores and what a replay prints.

The field names are the public contract documented in the README; add fields,
never rename them.
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal

from drivers.records import FrozenRecord, field_names

Colour = Literal["white", "black"]


#: Each event type of the feed, by its ``type`` name (every subclass of DomainEvent
#: enters itself, wherever it is defined: ``from_dict`` reads any of them back).
EVENT_TYPES: dict[str, type[DomainEvent]] = {}


# Frozen but not slotted: ``slots=True`` makes dataclass build each class twice, and
# these eighteen are built at every command's start (about 9 ms of ``replay``'s start
# on this machine, benchmarks/cli_startup.py); a game's events are few enough that
# their instance dicts cost nothing worth that. ``==``, hash and repr come from
# ``FrozenRecord``, and so does their immutability (drivers/records.py says why).
@dataclass(eq=False, repr=False)
class DomainEvent(FrozenRecord):
    t: float
    type: ClassVar[str] = "event"

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        EVENT_TYPES[cls.type] = cls

    def to_dict(self) -> dict[str, Any]:
        """The feed's JSON object: what ``dataclasses.asdict`` gives (every container
        copied, so a caller may change it), built directly for the plain values the
        events hold; asdict's recursion took a sixth of a game's replay."""
        data: dict[str, Any] = {"t": round(self.t, 6), "type": self.type}
        try:
            for name in _field_names(type(self)):
                data[name] = _copied(getattr(self, name))
        except _NotPlain:
            rest = asdict(self)
            rest.pop("t")
            data = {"t": round(self.t, 6), "type": self.type, **rest}
        return data


#: The value types an event's fields hold; anything else goes through asdict.
_ATOMS = frozenset({str, int, float, bool, type(None)})


class _NotPlain(Exception):
    """A field holds something other than JSON-like lists, dicts and atoms."""


def _copied(value: Any) -> Any:
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is list:
        return [_copied(item) for item in value]
    if kind is dict:
        return {_copied(key): _copied(item) for key, item in value.items()}
    if kind is tuple:
        return tuple(_copied(item) for item in value)
    raise _NotPlain


def _field_names(cls: type) -> tuple[str, ...]:
    """The fields after ``t``, in declaration order (as asdict lists them)."""
    return field_names(cls)[1:]


@dataclass(eq=False, repr=False)
class GameStart(DomainEvent):
    """A new game: the board shows a start position (either way round, 7.1)."""

    fen: str
    flipped: bool = False  # the board stands turned by 180 degrees
    chess960: bool = False
    type: ClassVar[str] = "game_start"


@dataclass(eq=False, repr=False, init=False)
class Move(DomainEvent):
    """A completed move (4.6, 6.7). A later Move with the same ply replaces it.

    Its ``__init__`` is written out: the generated one sets each field through
    ``FrozenRecord.__setattr__``, a tenth of the rules core's cost per move (issue 28).
    """

    ply: int  # 1-based
    uci: str
    san: str
    fen: str  # after the move
    by: Colour
    speech: str  # the phrase to announce, official spellings
    clock: dict[str, float] | None = None  # {"white": s, "black": s} at completion
    correction: bool = False  # replaces an earlier move with the same ply
    #: the arbiter typed it in (enter_moves, choose_line, add_game): ``clock`` is the
    #: one known at its ply (a press seen then), or None: no time is known for it
    entered: bool = False
    type: ClassVar[str] = "move"

    def __init__(
        self,
        t: float,
        ply: int,
        uci: str,
        san: str,
        fen: str,
        by: Colour,
        speech: str,
        clock: dict[str, float] | None = None,
        correction: bool = False,
        entered: bool = False,
    ) -> None:
        self.__dict__.update(
            t=t, ply=ply, uci=uci, san=san, fen=fen, by=by, speech=speech, clock=clock,
            correction=correction, entered=entered,
        )  # fmt: skip


@dataclass(eq=False, repr=False)
class Irregularity(DomainEvent):
    """Something Article 4 or 7 calls irregular, with how to put it right."""

    kind: str  # illegal_move, touch_move, castling_rook_first, incomplete_castling,
    #            incomplete_promotion, clock_without_move, displaced_pieces, wrong_setup
    article: str  # e.g. "7.4"
    by: Colour | None
    squares: list[str] = field(default_factory=list)
    count: int | None = None  # per player, where counted (7.4b)
    restore: list[dict[str, str | None]] = field(default_factory=list)
    #   [{"square": "g1", "piece": "N"}, {"square": "f3", "piece": None}]: what must
    #   stand on each square (None: clear it) to get back the last correct position
    consequence: str | None = None  # e.g. "opponent gets two minutes (7.4b)"
    detail: str = ""
    type: ClassVar[str] = "irregularity"


@dataclass(eq=False, repr=False)
class PositionRestored(DomainEvent):
    fen: str
    #: the arbiter accepted the board as it stands (``accept_position``): ``fen`` is
    #: the game's position from here, whatever the moves before led to
    accepted: bool = False
    type: ClassVar[str] = "position_restored"


@dataclass(eq=False, repr=False)
class Takeback(DomainEvent):
    """The move with this ply was taken back (explicit request or casual mode)."""

    ply: int
    fen: str = ""  # the position now current
    type: ClassVar[str] = "takeback"


@dataclass(eq=False, repr=False)
class GameEnd(DomainEvent):
    result: str  # "1-0", "0-1", "1/2-1/2"
    reason: str  # checkmate, stalemate, insufficient_material, flag, flag_draw, both_flags,
    #              illegal_moves, arbiter
    type: ClassVar[str] = "game_end"


@dataclass(eq=False, repr=False)
class DrawClaimable(DomainEvent):
    """Threefold repetition (9.2) or fifty moves (9.3): the player on move may claim."""

    reason: Literal["threefold_repetition", "fifty_moves"]
    ply: int
    type: ClassVar[str] = "draw_claimable"


@dataclass(eq=False, repr=False, init=False)
class ClockUpdate(DomainEvent):
    """The clock's times; one per clock report (``__init__`` written out, as Move's)."""

    white: float
    black: float
    running: Colour | None
    type: ClassVar[str] = "clock"

    def __init__(self, t: float, white: float, black: float, running: Colour | None) -> None:
        self.__dict__.update(t=t, white=white, black=black, running=running)


@dataclass(eq=False, repr=False)
class FlagFall(DomainEvent):
    """A flag fell (6.1); ``side`` None with ``both`` when the order is unknown (6.11)."""

    side: Colour | None
    both: bool = False
    draw: bool = False  # the opponent cannot mate by any series of legal moves (6.9)
    #: 6.11, both flags: True before the last period (the game goes on), False when the
    #: flag ends the game; None when the core cannot tell (no time control: the arbiter)
    game_continues: bool | None = None
    type: ClassVar[str] = "flag"


@dataclass(eq=False, repr=False)
class Penalty(DomainEvent):
    """Time the arbiter gave (7.4b: two minutes; 9.5b: three), recorded on the clock."""

    to: Colour  # who receives the time
    seconds: float
    article: str
    clock: dict[str, float] | None = None
    type: ClassVar[str] = "penalty"


@dataclass(eq=False, repr=False)
class Players(DomainEvent):
    """The arbiter named the players or the round (the console's "players"): it goes
    through the feed, not around it, so the journal's PGN on disk, a replay and every
    display hold the same names. None: that header is left as it was."""

    white: str | None = None
    black: str | None = None
    round: str | None = None
    type: ClassVar[str] = "players"


@dataclass(eq=False, repr=False)
class InfoRequest(DomainEvent):
    """A player asked for information (Appendix E.2.9d): last, clock, move_number,
    board, square, piece. ``by``: who asks (his earphone answers; None: a clock
    button, which cannot say); ``to``: "page" when he asked on his phone's page
    (``/listen``), which then answers alone, "" for his earphone."""

    what: str
    args: dict[str, Any] = field(default_factory=dict)
    by: Colour | None = None
    to: str = ""
    type: ClassVar[str] = "info_request"


@dataclass(eq=False, repr=False)
class Connection(DomainEvent):
    state: Literal["connected", "lost"]
    detail: str = ""
    found: bool = True  # False with "lost": no board found yet (not a lost one), still looking
    type: ClassVar[str] = "connection"


@dataclass(eq=False, repr=False)
class GameResumed(DomainEvent):
    """The daemon restarted and the board agrees with the journal."""

    ply: int
    fen: str
    type: ClassVar[str] = "game_resumed"


@dataclass(eq=False, repr=False)
class Notice(DomainEvent):
    """Something worth telling that is no chess event: a magic piece, a storage error."""

    code: str
    message: str
    type: ClassVar[str] = "notice"


@dataclass(eq=False, repr=False)
class Touch(DomainEvent):
    """The player to move touched one of his own pieces and put it back on its
    square, no move made (``rules.report_touches``; Appendix E.9.e: the blind
    player is told). Under 4.3a it may bind him: a piece that can move must."""

    by: Colour
    square: str
    piece: str  # FEN letter
    type: ClassVar[str] = "touch"


@dataclass(eq=False, repr=False)
class ClockSides(DomainEvent):
    """Which clock side is White's, as the daemon learnt it (``clock.sides: auto``).

    Kept in the game's journal so that a restarted daemon reuses it; ``white`` is
    None when a press contradicted the mapping (it is then learnt again).
    """

    white: Literal["left", "right"] | None
    evidence: str
    type: ClassVar[str] = "clock_sides"


@dataclass(eq=False, repr=False)
class BoardsAgree(DomainEvent):
    """Both boards of a two-board game (Appendix E.1) show the game's position again
    after a ``boards_diverged`` irregularity (E.2.7)."""

    boards: list[str] = field(default_factory=list)
    type: ClassVar[str] = "boards_agree"


@dataclass(eq=False, repr=False)
class MovesRecovered(DomainEvent):
    """Moves made while the board was out of reach (a link outage, a restart), found
    again: each is also a ``move`` event, just before this one.

    ``how``: ``eeprom`` (the board's own log told the line), ``search`` (the only
    line of legal moves to what the board shows); or, with no ``moves``,
    ``ambiguous`` (several lines: ``candidates``, in SAN; the arbiter decides) or
    ``gave_up`` (too far for the search).
    """

    moves: list[str]  # UCI, in order
    san: str  # the line with move numbers, "12. Nf3 Nc6 13. e4"
    how: str
    candidates: list[str] = field(default_factory=list)  # lines in SAN, when ambiguous
    type: ClassVar[str] = "moves_recovered"


def from_dict(data: dict[str, Any], *, lenient: bool = False) -> DomainEvent:
    """The event a feed dict (a journal line, a notice) stands for: ``to_dict``'s
    inverse. Fields a later version added are left out; an unknown type is a
    ValueError. ``lenient``: a field the dict lacks (a hand-made or damaged line) is
    None (``t``: 0), so that what can be said of it still is; else a TypeError."""
    cls = EVENT_TYPES.get(str(data.get("type")))
    if cls is None:
        raise ValueError(f"not an event of the feed: type {data.get('type')!r}")
    known = {f.name for f in fields(cls)}
    values = {key: value for key, value in data.items() if key in known}
    if lenient:
        for f in fields(cls):
            if f.name not in values and f.default is MISSING and f.default_factory is MISSING:
                values[f.name] = 0.0 if f.name == "t" else None
    return cls(**values)
