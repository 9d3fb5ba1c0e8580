"""Articles 6.9 and 6.11: what a fallen flag decides. Pure: the clock's report, the
position and the time control in, the flag event and the game's end (if any) out.

- One flag (6.9): the game is lost, unless the opponent cannot mate by any series
  of legal moves (python-chess's insufficient material): then drawn.
- Both flags, which first unknown (6.11): drawn in the last period; in an earlier
  one the game goes on (the clocks gain the next period's time, and a flag may fall
  again). Without a time control the arbiter decides (no end).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from daemon.game.events import FlagFall
from drivers.records import FrozenRecord
from drivers.sensors import ClockReport, Colour
from drivers.timecontrol import TimeControl, is_last_period


@dataclass(eq=False, repr=False, slots=True)
class FlagRuling(FrozenRecord):
    """The flag event, the game's end as (result, reason) or None, and whether a flag
    may fall again later in this game (both fell before the last period)."""

    event: FlagFall
    end: tuple[str, str] | None = None
    may_fall_again: bool = False


def fallen_flags(event: ClockReport) -> set[Colour]:
    """The sides whose flag the report shows fallen, or whose running time is out."""
    fallen: set[Colour] = set(event.flags)
    if event.running == "white" and event.white <= 0:
        fallen.add("white")
    if event.running == "black" and event.black <= 0:
        fallen.add("black")
    return fallen


def flag_ruling(
    t: float, fallen: set[Colour], board: chess.Board, time_control: TimeControl | None
) -> FlagRuling:
    """What the flags ``fallen`` (not empty) decide in the position ``board``."""
    if len(fallen) == 2:
        if time_control is None:
            return FlagRuling(FlagFall(t, None, both=True))  # the arbiter decides
        # the move number counts, also in a game set up from a FEN
        ply = 2 * (board.fullmove_number - 1) + (board.turn == chess.BLACK)
        last = is_last_period(time_control, ply)
        flag = FlagFall(t, None, both=True, game_continues=not last)
        if last:
            return FlagRuling(flag, ("1/2-1/2", "both_flags"))
        return FlagRuling(flag, may_fall_again=True)
    side = next(iter(fallen))
    opponent = chess.BLACK if side == "white" else chess.WHITE
    draw = board.has_insufficient_material(opponent)
    flag = FlagFall(t, side, draw=draw, game_continues=False)
    if draw:
        return FlagRuling(flag, ("1/2-1/2", "flag_draw"))
    return FlagRuling(flag, ("0-1" if side == "white" else "1-0", "flag"))
