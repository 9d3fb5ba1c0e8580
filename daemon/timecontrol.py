"""Moved to ``drivers.timecontrol`` (the clock drivers need it, and drivers/ never
imports daemon/). Kept for a short while so that work in progress still imports;
new code imports ``drivers.timecontrol``."""

from drivers.timecontrol import (
    ILLEGAL_MOVE_PENALTY,
    INCORRECT_CLAIM_PENALTY,
    NOTATIONS_HELP,
    Period,
    TimeControl,
    TimeControlError,
    apply_penalty,
    is_last_period,
    moves_made_by,
    parse_time_control,
    period_for_ply,
    remaining,
)

__all__ = [
    "ILLEGAL_MOVE_PENALTY",
    "INCORRECT_CLAIM_PENALTY",
    "NOTATIONS_HELP",
    "Period",
    "TimeControl",
    "TimeControlError",
    "apply_penalty",
    "is_last_period",
    "moves_made_by",
    "parse_time_control",
    "period_for_ply",
    "remaining",
]
