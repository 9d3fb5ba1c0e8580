"""The move committed: one move into the game, and the game taken back.

``_commit`` is where a move becomes the game's: its SAN and speech, its clock, how
long the same hand may still correct it, the touches judged (4.3,
``daemon.rules.lifts``), the promoted piece that touched the square first (4.4d), then
what the new position ends or allows (5.1, 5.2: mate, stalemate, a dead position; 9.2,
9.3: a draw to claim). Which move to commit is found in ``daemon.rules.moves``.
"""

from __future__ import annotations

import chess

from daemon.game.events import DomainEvent, DrawClaimable, Move, Takeback
from daemon.rules.base import COLOUR_NAMES
from daemon.rules.boards import insufficient_material
from daemon.rules.lifts import Lifts
from daemon.rules.placement import descends
from daemon.rules.state import Phase, Trigger
from daemon.rules.tree import Node
from daemon.rules.words import describe_move as fallback_describe
from daemon.rules.words import san as move_san

#: How long after a move decided on the settle time the same hand may still change
#: it (a slow slide, the king after the rook): a hand that goes on moving does so at
#: once; later, a piece of the side not on move that moves was knocked (7.3).
CORRECTION_WINDOW = 2.5


class Committing(Lifts):
    """Moves into the game, and the game back to an earlier position."""

    def _commit(
        self,
        t: float,
        move: chess.Move,
        out: list[DomainEvent],
        settled: bool,
        correction: bool = False,
        node_child: Node | None = None,
        touch_check: bool = True,
        press: bool = False,
        entered: bool = False,
        entered_clock: dict[str, float] | None = None,
    ) -> None:
        """One move into the game. ``entered``: the arbiter typed it in (its clock is
        ``entered_clock``, the one known at its ply, or none; never the time of the
        request, which is no time of the move)."""
        node = self._game.node
        assert node is not None
        board = node.board
        mover = COLOUR_NAMES[board.turn]
        child = node_child or self._child_of(node, move)
        chosen = None if correction else self._first_promotion_choice(node, child)
        if chosen is not None:  # 4.4d: the first piece to touch the square is the choice
            # A promotion choice is a child node, made by its move (never the root).
            child, move = chosen, chosen.move  # type: ignore[assignment]
        # the move's one text; the speech's words take it
        san = move_san(
            board,
            move,
            key=node.key,
            check=child.is_check(),
            after_has_legal_move=child.has_legal_move(),
        )
        if self._describe is None:
            speech = fallback_describe(board, move, san)
        else:
            speech = self._describe(board.copy(stack=False), move, san)
        if settled:
            child.correctable_until = t + CORRECTION_WINDOW
        elif press:
            child.correctable_until = t + self.settings.settle_time
        else:
            child.correctable_until = None
        if child.seen_at is None:
            child.seen_at = self._view.changed_at  # a correction or a request: seen just now
        child.current_at = t
        child.pressed_at = t if press else None
        self._game.presses = []  # the presses so far are this move's and those before it
        out.append(
            Move(
                t,
                ply=child.ply,
                uci=move.uci(),
                san=san,
                fen=child.fen(),
                # COLOUR_NAMES holds only "white" and "black" (typed as str there).
                by=mover,  # type: ignore[arg-type]
                speech=speech,
                clock=entered_clock if entered else self._clock_dict(),
                correction=correction,
                entered=entered,
            )
        )
        unseen = any(node is n for n in self._game.touches_unknown)
        if touch_check and not unseen:
            for event in self._touch_irregularities(t, node, move, child):
                self._report(out, event, None)  # the move stands: nothing to put back
        if unseen or not (touch_check or correction):
            self._game.release_unknown = child  # made (or ended) while the board was away
        self._game.touches_unknown = [n for n in self._game.touches_unknown if n is not node]
        self._game.node = child
        self._game.seen = [n for n in self._game.seen if n is not child and descends(n, child)]
        self._state.enter(Trigger.MOVE)
        self._game.blocked_key = None
        self._after_move(t, node, child, out)
        shown = self._key()
        if chosen is not None and shown != child.key and self._state.phase is Phase.PLAYING:
            self._promotion_changed(t, mover, shown, out)

    def _first_promotion_choice(self, node: Node, child: Node) -> Node | None:
        """Another promotion of the same pawn the board showed before this one, if any."""
        move = child.move
        if move is None or not move.promotion:
            return None
        earlier = [
            seen
            for seen in self._game.seen
            if seen.parent is node
            and seen.move is not None
            and seen.move.from_square == move.from_square
            and seen.move.to_square == move.to_square
            and seen.move.promotion != move.promotion
            and (seen.seen_at or 0.0) < (child.seen_at or float("inf"))
        ]
        return min(earlier, key=lambda seen: seen.seen_at or 0.0) if earlier else None

    def _after_move(self, t: float, parent: Node, child: Node, out: list[DomainEvent]) -> None:
        board = child.board
        identity = child.identity()
        self._game.repetitions[identity] += 1
        mover = COLOUR_NAMES[parent.turn]
        if not child.has_legal_move():
            if board.is_check():
                result = "1-0" if mover == "white" else "0-1"
                self._end(t, result, "checkmate", out)
            else:
                self._end(t, "1/2-1/2", "stalemate", out)
            return
        if insufficient_material(board):
            self._end(t, "1/2-1/2", "insufficient_material", out)
            return
        if self._game.repetitions[identity] >= 3:
            out.append(DrawClaimable(t, "threefold_repetition", child.ply))
        if board.halfmove_clock >= 100 and parent.board.halfmove_clock < 100:
            out.append(DrawClaimable(t, "fifty_moves", child.ply))

    def _child_of(self, node: Node, move: chess.Move) -> Node:
        """The child node for ``move``, the one already seen if there is one."""
        for seen in self._game.seen:
            if seen.parent is node and seen.move == move:
                return seen
        return node.child(move)

    def _takeback_to(
        self, t: float, key: bytes, out: list[DomainEvent], target: Node | None = None
    ) -> bool:
        node = self._game.node
        assert node is not None
        if target is None:
            target = next((n for n in node.ancestors() if n.key == key), None)
        if target is None:
            return False
        current = node
        while current is not target:
            assert current.parent is not None
            self._game.repetitions[current.identity()] -= 1
            out.append(Takeback(t, current.ply, current.parent.board.fen()))
            current = current.parent
        self._set_current(target)
        return True

    def _set_current(self, node: Node) -> None:
        node.seen_at = node.current_at = self._view.changed_at
        node.pressed = False
        self._game.node = node
        self._game.seen = []
        self._state.enter(Trigger.MOVE)
