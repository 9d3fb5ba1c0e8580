"""Which Laws of Chess the core cites: the 2009 text (the seeds) or the Laws in force today.

The rules the board can see are the same in both; the article numbers differ,
and so do two consequences: today the second completed illegal move loses in
standard play (2009: the third), and pressing the clock without a move, or with
an unpromoted pawn on the last rank, counts as an illegal move. ``rules.laws``
chooses; every article in an event comes from here, so one key switches them
all. The sources are cited in ``docs/rules-core.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from drivers.records import FrozenRecord

Edition = Literal["2009", "current"]
EDITIONS: tuple[Edition, ...] = ("2009", "current")


@dataclass(eq=False, repr=False, slots=True)
class Laws(FrozenRecord):
    """The article numbers and penalties of one edition."""

    edition: Edition
    articles: dict[str, str]
    #: 4.3's three cases and 4.4's promotion rule, as the edition numbers them
    touch_cases: dict[str, str]
    #: the illegal move that loses (7.4b 2009: the third; 7.5 today: the second)
    losing_illegal_move: int
    #: a press without a move, or with a pawn left on the last rank, is an illegal move
    press_counts_as_illegal: bool
    #: the Appendix on blind and visually disabled players (E in 2009, D today)
    blind_appendix: str
    penalty_article: str

    def consequence(self, count: int) -> str:
        """What the arbiter does about a player's ``count``-th illegal move."""
        if count < self.losing_illegal_move:
            return f"the opponent gets two extra minutes ({self.penalty_article})"
        ordinal = {2: "second", 3: "third"}.get(self.losing_illegal_move, "last")
        return (
            f"{ordinal} illegal move: the game is lost, unless the opponent cannot mate by "
            f"any series of legal moves ({self.penalty_article}); the arbiter decides"
        )


LAWS: dict[Edition, Laws] = {
    "2009": Laws(
        edition="2009",
        articles={
            "touch_move": "4.3",
            "castling_rook_first": "4.4",
            "promotion_changed": "4.4",
            "incomplete_castling": "4.6",
            "incomplete_promotion": "4.6",
            "clock_without_move": "6.7",
            "wrong_setup": "7.1",
            "displaced_pieces": "7.3",
            "illegal_move": "7.4",
        },
        touch_cases={"own": "4.3a", "opposing": "4.3b", "both": "4.3c", "promotion": "4.4d"},
        losing_illegal_move=3,
        press_counts_as_illegal=False,
        blind_appendix="E",
        penalty_article="7.4b",
    ),
    "current": Laws(
        edition="current",
        articles={
            "touch_move": "4.3",
            "castling_rook_first": "4.4",
            "promotion_changed": "4.4",
            "incomplete_castling": "4.7",
            "incomplete_promotion": "7.5.2",
            "clock_without_move": "7.5.3",
            "wrong_setup": "7.2",
            "displaced_pieces": "7.4",
            "illegal_move": "7.5",
        },
        touch_cases={"own": "4.3.1", "opposing": "4.3.2", "both": "4.3.3", "promotion": "4.4.4"},
        losing_illegal_move=2,
        press_counts_as_illegal=True,
        blind_appendix="D",
        penalty_article="7.5.5",
    ),
}


def laws(edition: str) -> Laws:
    """The edition's numbers; a clear error for anything else."""
    try:
        # Any text may come from the configuration; an unknown one is the KeyError below.
        return LAWS[edition]  # type: ignore[index]
    except KeyError:
        raise ValueError(f"laws must be one of {', '.join(EDITIONS)}, not {edition!r}") from None
