"""Time controls as Article 6.2 allows them, and the arithmetic the clock needs.

A time control is a sequence of periods. Each period gives a player some main
time for a number of moves (or for the rest of the game), optionally with a
Fischer increment per move or a delay per move ("tiempo diferido", 6.2b: the
main time only starts running once the fixed extra time of the move has
expired). Time saved in one period carries over to the next (6.2).

Conventions (those of the DGT clocks, checked against a real capture, where a
3+2 game starts with 3:02 on both displays):

- The time *credited for move n* reaches the player's clock before he plays
  move n: at the start of the game for move 1, otherwise at the press that
  completes his move n-1. It is the period's main time when move n opens a
  period, plus the period's increment.
- A last period that still has a move count repeats (``40/7200`` alone: 40
  moves in two hours, then again and again), as PGN readers do.

Nothing here reads a clock: it is pure arithmetic, used by the clock drivers
(to tell an increment from a glitch), the rules core (flag falls, 6.11) and the
arbiter's tools (penalties, 7.4b and 9.5b).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from drivers.records import FrozenRecord

Colour = Literal["white", "black"]

#: Extra time the arbiter gives the opponent for an illegal move (7.4b).
ILLEGAL_MOVE_PENALTY = 120.0
#: Extra time the arbiter gives the opponent for an incorrect claim (9.5b).
INCORRECT_CLAIM_PENALTY = 180.0


class TimeControlError(ValueError):
    """A time-control string or value that cannot be what the user meant."""


@dataclass(eq=False, repr=False, slots=True)
class Period(FrozenRecord):
    """One period of a time control (6.2).

    ``moves`` is how many moves the player must make in it; ``None`` means
    all the remaining moves (sudden death). ``seconds`` is the main time the
    period adds; ``increment`` (Fischer) is added for every move played in it;
    ``delay`` is the fixed extra time per move before the main time runs.
    """

    seconds: float
    moves: int | None = None
    increment: float = 0.0
    delay: float = 0.0

    def __post_init__(self) -> None:
        if self.moves is not None and self.moves < 1:
            raise TimeControlError(f"a period needs at least one move, not {self.moves}")
        if self.seconds < 0 or self.increment < 0 or self.delay < 0:
            raise TimeControlError("times in a time control cannot be negative")
        if self.increment and self.delay:
            raise TimeControlError(
                "a period has either an increment (Fischer) or a delay (6.2b), not both"
            )
        if self.seconds == 0 and self.increment == 0 and self.delay == 0:
            raise TimeControlError("a period without any time would lose on the first move")


@dataclass(eq=False, repr=False, slots=True)
class TimeControl(FrozenRecord):
    """A whole time control: the periods in the order they are played."""

    periods: tuple[Period, ...]

    def __post_init__(self) -> None:
        if not self.periods:
            raise TimeControlError("a time control needs at least one period")
        for period in self.periods[:-1]:
            if period.moves is None:
                raise TimeControlError(
                    "only the last period can be for the rest of the game; "
                    "every earlier period needs a number of moves"
                )

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Read the usual notations; see :func:`parse_time_control`."""
        result = parse_time_control(text)
        if result is None:
            raise TimeControlError(f"{text!r} names no time control")
        return result

    @classmethod
    def from_pgn(cls, tag: str) -> TimeControl:
        """Read a PGN ``TimeControl`` tag value: always seconds, even ``300+5``."""
        return _parse_pgn(tag.strip(), tag)

    @property
    def repeats(self) -> bool:
        """The last period has a move count, so it starts again when done."""
        return self.periods[-1].moves is not None

    @property
    def has_delay(self) -> bool:
        return any(p.delay for p in self.periods)

    def period_index(self, move_number: int) -> int:
        """The 0-based index of the period a player's move ``move_number`` is in."""
        return _locate(self, move_number)[0]

    def period_of(self, move_number: int) -> Period:
        return self.periods[self.period_index(move_number)]

    def credit(self, move_number: int) -> float:
        """The time credited to a player's clock for his move ``move_number``.

        It reaches the clock before the move is played (see the module's
        conventions): the period's main time when the move opens a period,
        plus the period's increment.
        """
        index, opens = _locate(self, move_number)
        period = self.periods[index]
        return (period.seconds if opens else 0.0) + period.increment

    def added_on_press(self, move_number: int) -> float:
        """What the clock adds when the player completes move ``move_number``."""
        return self.credit(move_number + 1)

    def initial_seconds(self) -> float:
        """What each clock shows before the game starts."""
        return self.credit(1)

    def to_pgn(self) -> str:
        """The PGN ``TimeControl`` tag value (seconds), e.g. ``40/5400+30:1800+30``.

        PGN has no notation for a delay; this writes it as a ``d`` suffix
        (``3600d5``), which :func:`parse_time_control` reads back.
        """
        fields = []
        for period in self.periods:
            text = _number(period.seconds)
            if period.moves is not None:
                text = f"{period.moves}/{text}"
            if period.increment:
                text += f"+{_number(period.increment)}"
            if period.delay:
                text += f"d{_number(period.delay)}"
            fields.append(text)
        return ":".join(fields)

    def describe(self) -> str:
        """A short human text: ``40 moves in 90 min, then 30 min, +30 s per move``."""
        parts = []
        for i, period in enumerate(self.periods):
            text = f"{_number(period.seconds / 60)} min"
            if period.moves is not None:
                text = f"{period.moves} moves in {text}"
            if period.increment:
                text += f" +{_number(period.increment)} s per move"
            if period.delay:
                text += f", {_number(period.delay)} s delay per move"
            parts.append(text if i == 0 else f"then {text}")
        if self.repeats:
            parts.append("repeating")
        return ", ".join(parts)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _locate(tc: TimeControl, move_number: int) -> tuple[int, bool]:
    """The period index of a player's move, and whether the move opens it."""
    if move_number < 1:
        raise ValueError(f"move numbers start at 1, not {move_number}")
    first_move = 1
    index = 0
    while True:
        period = tc.periods[index]
        if period.moves is None or move_number < first_move + period.moves:
            return index, move_number == first_move
        first_move += period.moves
        if index + 1 < len(tc.periods):
            index += 1
        # else: the last period repeats with the same index


# --- the arithmetic -------------------------------------------------------------


def remaining(
    tc: TimeControl,
    moves_made: int,
    time_used: float | Sequence[float],
    thinking: float = 0.0,
) -> float:
    """What a player's clock should show (seconds, may go below zero).

    ``moves_made`` is how many moves he has completed; ``time_used`` the time
    he spent on them, in total or move by move; ``thinking`` the time spent so
    far on the move in progress. With a delay (6.2b) only the time beyond the
    delay of each move counts, so the times must be given move by move.
    """
    if moves_made < 0:
        raise ValueError("moves_made cannot be negative")
    credited = sum(tc.credit(n) for n in range(1, moves_made + 2))
    if isinstance(time_used, int | float):
        if tc.has_delay and (moves_made or thinking):
            raise ValueError("with a delay (6.2b) give the time used move by move")
        used = float(time_used) + thinking
    else:
        if len(time_used) != moves_made:
            raise ValueError(f"{len(time_used)} move times given for {moves_made} moves made")
        used = sum(max(0.0, spent - tc.period_of(n).delay) for n, spent in enumerate(time_used, 1))
        used += max(0.0, thinking - tc.period_of(moves_made + 1).delay)
    return credited - used


def moves_made_by(colour: Colour, ply: int) -> int:
    """How many moves ``colour`` has completed after ``ply`` half-moves."""
    return (ply + 1) // 2 if colour == "white" else ply // 2


def period_for_ply(tc: TimeControl, ply: int) -> int:
    """The period the player to move is in after ``ply`` half-moves (0-based)."""
    return tc.period_index(ply // 2 + 1)


def is_last_period(tc: TimeControl | None, ply: int) -> bool:
    """Whether the player to move after ``ply`` half-moves is in the last period.

    Article 6.11: when both flags have fallen and it cannot be told which fell
    first, the game is drawn in the last period and goes on in any other. A
    repeating period (``40/7200``) is never the last; no time control at all
    has only one period, so it is.
    """
    if tc is None:
        return True
    if tc.repeats:
        return False
    return period_for_ply(tc, ply) == len(tc.periods) - 1


def apply_penalty(times: Mapping[str, float], to: Colour, seconds: float) -> dict[str, float]:
    """The clock times after the arbiter gives ``to`` ``seconds`` extra (7.4b, 9.5b).

    Returns new ``{"white": s, "black": s}``; ``times`` is not changed.
    """
    if to not in ("white", "black"):
        raise ValueError(f"a penalty goes to white or black, not {to!r}")
    if seconds <= 0:
        raise ValueError(f"a penalty adds time; {seconds} seconds is not a penalty")
    result = {"white": float(times["white"]), "black": float(times["black"])}
    result[to] += seconds
    return result


# --- parsing -------------------------------------------------------------------

_NUMBER = r"\d+(?:\.\d+)?"
_PGN_FIELD = re.compile(
    rf"^(?:(?P<moves>\d+)/)?(?P<seconds>{_NUMBER})(?:\+(?P<inc>{_NUMBER}))?(?:d(?P<delay>{_NUMBER}))?$"
)
_MINUTES_PLUS = re.compile(rf"^(?P<minutes>{_NUMBER})\s*(?:\+|\|)\s*(?P<inc>{_NUMBER})$")
_US_SUDDEN_DEATH = re.compile(
    rf"^(?:G|SD)\s*/\s*(?P<minutes>{_NUMBER})"
    rf"(?:\s*[;,]?\s*(?:(?P<kind>d|inc|\+)\s*(?P<extra>{_NUMBER})))?$",
    re.IGNORECASE,
)
_NO_TIME_CONTROL = {"", "-", "none", "off", "no"}

NOTATIONS_HELP = (
    "write e.g. '90+30' (minutes + seconds per move), '5+3' or '3|2' (blitz), "
    "'40/5400:1800+30' (PGN TimeControl, seconds), 'G/60 d5' (60 minutes, 5 s delay), "
    "'pgn:300+5' (PGN seconds for one period), or 'none'"
)


def parse_time_control(text: str | None) -> TimeControl | None:
    """Read a time control from the configuration; ``None`` for none at all.

    Notations:

    - ``90+30``, ``5+3``, ``3|2``, ``15``: minutes, plus seconds per move (Fischer).
    - ``40/5400:1800+30``: the PGN ``TimeControl`` tag, all in seconds, periods
      joined by ``:``; each ``moves/seconds``, ``seconds`` or ``seconds+increment``
      (a ``d5`` suffix is a 5 s delay). A single PGN period without ``/`` reads
      like minutes, so write it ``pgn:300+5``.
    - ``G/60 d5``, ``G/90;inc30``, ``SD/30+5``: US notation, minutes, with a delay
      (``d``) or an increment (``inc`` or ``+``).
    - ``none``, ``-`` or empty: no time control.
    """
    if text is None:
        return None
    source = str(text).strip()
    if source.lower() in _NO_TIME_CONTROL:
        return None
    lowered = source.lower()
    if lowered == "?" or source.startswith("*"):
        raise TimeControlError(
            f"time control {source!r}: unknown or hourglass time controls are not supported; "
            + NOTATIONS_HELP
        )
    if lowered.startswith("pgn:"):
        return _parse_pgn(source[4:].strip(), source)
    if _US_SUDDEN_DEATH.match(source):
        return _parse_us(source)
    if "/" in source or ":" in source:
        return _parse_pgn(source, source)
    match = _MINUTES_PLUS.match(source)
    if match:
        return _build(
            source,
            [
                dict(
                    seconds=float(match["minutes"]) * 60,
                    increment=float(match["inc"]),
                )
            ],
        )
    if re.fullmatch(_NUMBER, source):
        return _build(source, [dict(seconds=float(source) * 60)])
    raise TimeControlError(f"cannot read time control {source!r}; {NOTATIONS_HELP}")


def _parse_pgn(body: str, source: str) -> TimeControl:
    periods = []
    for field in body.split(":"):
        match = _PGN_FIELD.match(field.strip())
        if not match:
            raise TimeControlError(
                f"time control {source!r}: cannot read the period {field!r} "
                "(PGN periods are 'moves/seconds', 'seconds' or 'seconds+increment'); "
                + NOTATIONS_HELP
            )
        periods.append(
            dict(
                seconds=float(match["seconds"]),
                moves=int(match["moves"]) if match["moves"] else None,
                increment=float(match["inc"] or 0),
                delay=float(match["delay"] or 0),
            )
        )
    return _build(source, periods)


def _parse_us(source: str) -> TimeControl:
    match = _US_SUDDEN_DEATH.match(source)
    assert match is not None
    period = dict(seconds=float(match["minutes"]) * 60)
    if match["kind"]:
        key = "delay" if match["kind"].lower() == "d" else "increment"
        period[key] = float(match["extra"])
    return _build(source, [period])


def _build(source: str, periods: list[dict]) -> TimeControl:
    try:
        return TimeControl(tuple(Period(**p) for p in periods))
    except TimeControlError as error:
        raise TimeControlError(f"time control {source!r}: {error}") from None
