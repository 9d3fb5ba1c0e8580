"""What the rules core remembers, grouped by how long it lives.

The core used to hold some thirty fields side by side, and a new game reset fourteen
of them by hand; one forgotten was a bug waiting. Here each group is one object, made
anew when its lifetime begins:

- ``GameMemory``: one game, from its start position (or ``resume``) to the next: the
  current position, whether it is a Chess960 game, the positions seen in passing, the
  pieces lifted (4.3), the repetitions (9.2), the illegal-move counts (7.4b), the flags
  (6.9, 6.11), what is unknown after an outage or a restart. A new game is
  ``GameMemory.starting(root)``.
- ``BoardView``: the board as last seen: its 64 squares as reported, which way round
  it stands (and whether that is still a guess), whether a whole picture has told
  every square, when it last changed, when it last showed the current position, and
  when the board or its clock last reported. It lives as long as the core.
- ``Reach``: whether the board is within reach and was heard: the link lost, the
  outage's log of positions, the last time the board was heard, a decision held
  until it is heard again. It lives as long as the core.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from daemon.rules.tree import Lift, Node
from drivers.records import Shown


@dataclass(eq=False, repr=False, slots=True)
class GameMemory(Shown):
    """One game's memory; a new game makes a new one (nothing to reset by hand)."""

    node: Node | None = None
    chess960: bool = False  # castling as in Chess960 (Appendix F): the root board's rule
    #: legal positions the board showed since the last commit, each one move from the
    #: current node or from another of them (dgtdriver's reachable-position map)
    seen: list[Node] = field(default_factory=list)
    lifts: list[Lift] = field(default_factory=list)  # the last pieces lifted, with times
    touch_floor: float = 0.0  # touches before this time no longer count
    repetitions: Counter[tuple] = field(default_factory=Counter)
    illegal_counts: dict[str, int] = field(default_factory=lambda: {"white": 0, "black": 0})
    blocked_key: bytes | None = None  # a placement taken back: not the move again
    reset_noticed: bool = False  # the board_reset notice given, the position not yet back
    #: a lone king on a centre square waiting for the other: (placement, since when)
    signal_wait: tuple[bytes, float] | None = None
    flag_reported: bool = False
    flags_may_fall_again: bool = False  # both flags fell before the last period (6.11)
    resume_clock_open: bool = False  # the first clock report after resume not yet seen
    #: the position whose move was under way at a restart: its first touch is unknown
    touches_unknown: list[Node] = field(default_factory=list)
    #: a position reached by a move made while the board was away: when the previous
    #: mover's hand let go is unknown, so his re-centring is no touch
    release_unknown: Node | None = None
    #: the clocks at each press since the last move committed, oldest first: (time,
    #: both clocks, whose clock runs after it); the moves the arbiter types in for
    #: those presses get their times (``daemon.rules.corrections``)
    presses: list[tuple[float, dict[str, float], str]] = field(default_factory=list)

    @classmethod
    def starting(cls, root: Node) -> GameMemory:
        """The memory of a game that begins at ``root``."""
        return cls(
            node=root,
            chess960=root.board.chess960,
            repetitions=Counter({root.identity(): 1}),
        )


@dataclass(eq=False, repr=False, slots=True)
class BoardView(Shown):
    """The board as last seen (raw squares: as the board reports them, turned or not)."""

    raw: bytearray = field(default_factory=lambda: bytearray(b"." * 64))
    flipped: bool = False
    #: the arbiter set a position the board did not show yet: ``flipped`` is a guess,
    #: turned round as soon as the board shows that position the other way round
    orientation_open: bool = False
    known: bool = False  # a BoardDump has told every square
    changed_at: float = 0.0  # time of the last board change
    at_node_since: float = 0.0  # the last time the board showed the current position
    #: the time of the last piece change or clock report, as the core ordered it
    #: (``RulesCore._in_order``): reports never go back in time
    reported_at: float | None = None


@dataclass(eq=False, repr=False, slots=True)
class Reach(Shown):
    """Whether the board is within reach, and when it was last heard."""

    link_down: bool = False  # the board is out of reach: nothing is decided
    link_was_lost: bool = False  # the next whole picture ends an outage
    #: after an outage: what the board's log says it showed (None: no outage open)
    outage: tuple[str, ...] | None = None
    picture_at_loss: str | None = None  # the last placement before a loss
    #: when the board was last heard (its link's liveness probe answered, a square
    #: changed); None: its link does not say (a replay of an older log, a bus board),
    #: and alarms are decided at once as before
    heard_at: float | None = None
    held_at: float | None = None  # a decision held until the board is heard at or after
