"""An irregularity made, and reported together with its transition.

``_report`` is the one way an alarm leaves the core: the event and the phase that
waits for the board to be put right (``daemon.rules.state``) are taken together. The
rest builds the event (its article, ``daemon.rules.laws``; the squares that differ and
the restore list; the illegal-move count, 7.4b), and answers what every decision path
asks about an open alarm: is the board on its way back (no second alarm). The promoted
piece swapped (4.4d) is here because both the commit and the judging raise it.
"""

from __future__ import annotations

import chess

from daemon.game.events import DomainEvent, Irregularity
from daemon.rules.base import CoreBase
from daemon.rules.placement import EMPTY, differing_squares, on_the_way_back
from daemon.rules.state import Trigger


class Reporting(CoreBase):
    """Irregularities built and reported."""

    def _report(
        self,
        out: list[DomainEvent],
        event: Irregularity,
        trigger: Trigger | None = Trigger.REPORT,
        *,
        reported: bytes | None = None,
        touch_binds: bool | None = None,
    ) -> None:
        """Emit an irregularity and take its transition, together: the one way an alarm
        leaves the core, so none is raised without the phase that waits for the board to
        be put right (``trigger`` None: nothing to put back, the move stands).
        ``reported``: the placement the alarm is about (not reported twice);
        ``touch_binds``: an illegal move, whose touches bind the replacing move (7.4a)."""
        out.append(event)
        if trigger is not None:
            self._state.enter(trigger, reported=reported, touch_binds=touch_binds)

    def _restore(self, key: bytes, target: bytes) -> list[dict[str, str | None]]:
        return [
            {
                "square": chess.square_name(square),
                "piece": None if target[square] == EMPTY else chr(target[square]),
            }
            for square in differing_squares(key, target)
        ]

    def _irregularity(
        self,
        t: float,
        kind: str,
        by: str | None,
        key: bytes,
        target: bytes | None = None,
        count: int | None = None,
        consequence: str | None = None,
        detail: str = "",
    ) -> Irregularity:
        node = self._game.node
        # Irregularities are judged in a game only, so there is a node.
        target = target if target is not None else node.key  # type: ignore[union-attr]
        return Irregularity(
            t,
            kind=kind,
            article=self._article(kind),
            # by: "white", "black" or None, as every caller passes (typed as str).
            by=by,  # type: ignore[arg-type]
            squares=[chess.square_name(s) for s in differing_squares(key, target)],
            count=count,
            restore=self._restore(key, target),
            consequence=consequence,
            detail=detail,
        )

    def _plain_irregularity(
        self, t: float, kind: str, by: str, squares: list[str], detail: str
    ) -> Irregularity:
        return Irregularity(
            t,
            kind=kind,
            article=self._article(kind),
            # by: "white", "black" or None, as every caller passes (typed as str).
            by=by,  # type: ignore[arg-type]
            squares=squares,
            detail=detail,
        )

    def _illegal_move(
        self,
        t: float,
        mover: str,
        key: bytes,
        kind: str = "illegal_move",
        target: bytes | None = None,
        before: str = "",
    ) -> Irregularity:
        """One illegal move of ``mover``, counted, with what follows from the count."""
        self._game.illegal_counts[mover] += 1
        count = self._game.illegal_counts[mover]
        return self._irregularity(
            t,
            kind,
            mover,
            key,
            target=target,
            count=count,
            consequence=before + self._laws.consequence(count),
        )

    def _promotion_changed(self, t: float, by: str, key: bytes, out: list[DomainEvent]) -> None:
        """4.4d: another piece set on the promotion square after the first; guide it back."""
        node = self._game.node
        assert node is not None and node.move is not None and node.move.promotion
        square = chess.square_name(node.move.to_square)
        piece = chess.piece_name(node.move.promotion)
        event = self._irregularity(
            t,
            "promotion_changed",
            by,
            key,
            detail=f"{self._laws.touch_cases['promotion']}: the {piece} touched {square} first; "
            "the choice of piece is final",
        )
        self._report(out, event, reported=key, touch_binds=False)

    def _putting_back(self, key: bytes) -> bool:
        """The pieces of the placement just reported on their way back: no second alarm."""
        state, node = self._state, self._game.node
        if not state.owed_restore or state.reported is None or node is None:
            return False
        return on_the_way_back(node.key, state.reported, key)
