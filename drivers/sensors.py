"""Sensor events: what the board and the clock report, and nothing more.

These are what a board's pipeline is fed and exactly the lines of a sensor log
(see ``drivers.sensorlog``). All but one go to the rules core as they are; a
clock's ``ClockReading`` (left and right) reaches it as a ``ClockReport`` (White and
Black) once the daemon has decided whose side is whose. They carry the time at which they were seen,
in seconds since the log (or the daemon) began, so that everything the rules
decide can be replayed on simulated time.

The board reports squares as it sees them: white at the bottom, a8 first, with
no knowledge of which way round the board stands. Turning the picture round is
the rules core's job (Article 7.1), not the driver's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from drivers.records import FrozenRecord

Colour = Literal["white", "black"]
#: A clock's sides as the players sit at it; which is whose is the daemon's decision.
Side = Literal["left", "right"]
#: Both sides, left first (the order of a reading's flags).
SIDES: tuple[Side, ...] = ("left", "right")

#: FEN letters of the twelve real pieces.
PIECE_LETTERS = frozenset("PNBRQKpnbrqk")

#: Clock buttons of a DGT 3000 / DGT XL, as the clock's acks name them.
CLOCK_BUTTONS = ("back", "minus", "run", "plus", "ok")


@dataclass(eq=False, repr=False, slots=True)
class BoardDump(FrozenRecord):
    """A full picture of the 64 squares: the ground truth after a reconnect."""

    t: float
    placement: str  # FEN placement field, a8 first, as the board reports it
    #: After an outage: the placements the board's own log (EEPROM) says it passed
    #: through since the link was lost, oldest first; empty when unknown.
    history: tuple[str, ...] = ()


@dataclass(eq=False, repr=False, slots=True)
class SquareChange(FrozenRecord):
    """One square changed: a piece lifted (``piece is None``) or set down."""

    t: float
    square: str  # "e4"
    piece: str | None  # FEN letter, or None for empty
    #: a polled board (the DGT bus): the change was made after this time (the board's
    #: previous read did not have it), at ``t`` or before; None: made at ``t``
    since: float | None = None


@dataclass(eq=False, repr=False, slots=True)
class ClockReading(FrozenRecord):
    """What a clock shows, in its own terms: the left and the right time, which side
    runs, which flags are down. A clock knows no colours: the daemon decides whose
    side is whose (``daemon.clock.sides``) and hands the rules core a ClockReport."""

    t: float
    left: float  # seconds shown on the left display
    right: float
    running: Side | None  # whose time runs; None when the clock is stopped
    flags: tuple[Side, ...] = ()  # sides whose flag the clock shows, left first


@dataclass(eq=False, repr=False, slots=True)
class ClockReport(FrozenRecord):
    """Both clock times by colour: what the rules core reads. The daemon makes it of
    a ClockReading; older sensor logs (and hand-written ones) carry it as it is."""

    t: float
    white: float  # seconds left
    black: float
    running: Colour | None  # whose clock runs; None when stopped
    flags: tuple[Colour, ...] = ()  # sides whose flag the clock shows as fallen


@dataclass(eq=False, repr=False, slots=True)
class ButtonPress(FrozenRecord):
    """A clock button was pressed (the blind player's way to ask, Appendix E.2.9d)."""

    t: float
    button: str  # one of CLOCK_BUTTONS


@dataclass(eq=False, repr=False, slots=True)
class Request(FrozenRecord):
    """An explicit request from the arbiter's controls or the command line.

    ``action`` names it (``new_game``, ``takeback``, ``set_position``,
    ``accept_position``, ``penalty``, ``result``, ``correct_last_move``); ``args``
    carries its parameters (for instance ``{"fen": ...}``).
    """

    t: float
    action: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False, repr=False, slots=True)
class MagicPiece(FrozenRecord):
    """One of DGT's three "magic pieces" (codes 0x0d-0x0f) stands on a square.

    They are not chess pieces; the board uses them to signal a result. They are
    reported, never silently dropped.
    """

    t: float
    square: str
    meaning: Literal["draw", "white_wins", "black_wins"]


@dataclass(eq=False, repr=False, slots=True)
class ConnectionChange(FrozenRecord):
    """The board link went down or came back; the rules core keeps its state."""

    t: float
    state: Literal["connected", "lost"]
    detail: str = ""
    found: bool = True  # False: no board was ever reached on this port; still looking


@dataclass(eq=False, repr=False, slots=True)
class BoardHeard(FrozenRecord):
    """The board answered the link's liveness probe: it was within reach at ``t``.

    A board that goes silent is known lost only after the link's liveness time-out
    (seconds later); until then its last picture looks current, and may have caught
    a hand mid-move. With these the rules core decides no alarm on a picture before
    the board has been heard at or after the moment of deciding."""

    t: float


SensorEvent = (
    BoardDump
    | SquareChange
    | ClockReading
    | ClockReport
    | ButtonPress
    | Request
    | MagicPiece
    | ConnectionChange
    | BoardHeard
)
