"""The move found: which legal move (or moves) the board shows, and when it counts.

Asked on each board change and when the settle timer runs out (``daemon.rules.core``):
the board's placement is matched among the legal children of the current position,
of the positions the board showed in passing (a reply inside one settle window, a
slide: dgtdriver's reachable-position map), and of the position before (the same hand
correcting a move decided on time). A move counts at the mover's press with a running
clock, else once it stood for the settle time (``docs/rules-core.md``, "When a move
counts"); ``daemon.rules.commit`` commits it.
"""

from __future__ import annotations

import chess

from daemon.game.events import DomainEvent
from daemon.rules.commit import Committing
from daemon.rules.placement import (
    MAX_SEEN,
    differing_squares,
    in_progress,
    is_subset,
    seen_path,
    swapped_promotion,
)
from daemon.rules.tree import Node


class Moves(Committing):
    """Finding the move the board shows."""

    def _follow(self, t: float, key: bytes, out: list[DomainEvent]) -> None:
        """Remember legal positions the board passes through (a fast reply, a slide).

        Every position seen stays reachable until the next commit, so a captured
        piece set down by chance where it makes another legal position does not
        make the core forget the real line.
        """
        node = self._game.node
        assert node is not None
        if key == self._game.blocked_key:
            return
        seen = self._game.seen
        for base in (*reversed(seen), node):
            move = base.match(key)
            if move is None:
                continue
            if any(n.parent is base and n.move == move for n in seen):
                return
            child = base.child(move)
            child.seen_at = t
            seen.append(child)
            if len(seen) > MAX_SEEN:
                leaves = [n for n in seen if not any(m.parent is n for m in seen)]
                seen.remove(leaves[0])
            path = self._seen_path(child)
            if len(path) >= 2 and self._by_settle():
                # the opponent's reply stands on the board: the moves before it are made
                for done in path[:-1]:
                    assert done.move is not None
                    self._commit(t, done.move, out, settled=False, node_child=done)
            return

    def _seen_path(self, target: Node) -> list[Node]:
        """The seen nodes from the current node's child down to ``target``."""
        assert self._game.node is not None
        return seen_path(self._game.node, self._game.seen, target)

    def _by_settle(self) -> bool:
        node = self._game.node
        assert node is not None
        return not self._clock_running() or node.pressed

    def _by_settle_only(self) -> bool:
        return not self._clock_running()

    def _commit_if_move(self, t: float, key: bytes, out: list[DomainEvent], by_press: bool) -> bool:
        """Commit what the board shows when it is one or two legal moves (or a correction)."""
        node = self._game.node
        assert node is not None
        by_settle = self._by_settle()
        move = None if key == self._game.blocked_key else node.match(key)
        if move is not None:
            if by_press or (
                (by_settle or self._ends_game(node, move)) and not self._putting_back(key)
            ):
                self._commit(
                    t, move, out, settled=not by_press and self._by_settle_only(), press=by_press
                )
            return True
        if self._correct_to(t, key, out):
            return True
        if not (by_press or by_settle):
            return False
        if self._passing_to(t, key, out, by_press):
            return True
        return not by_press and self._two_moves_to(t, key, out, by_press)

    def _passing_to(self, t: float, key: bytes, out: list[DomainEvent], by_press: bool) -> bool:
        """Several moves, each seen on the board in passing, all inside one settle window."""
        if by_press:
            return self._press_completes_passing(t, key, out)
        for target in reversed(self._game.seen):
            if target.key != key:
                continue
            path = self._seen_path(target)
            if len(path) < 2:
                continue
            for index, child in enumerate(path):
                settled = index == len(path) - 1 and self._by_settle_only()
                assert child.move is not None
                self._commit(t, child.move, out, settled=settled, node_child=child)
            return True
        return False

    def _ends_game(self, node: Node, move: chess.Move) -> bool:
        return self._child_of(node, move).is_over()

    def _correct_to(self, t: float, key: bytes, out: list[DomainEvent]) -> bool:
        """A move decided on time alone, continued by the same hand before the reply."""
        node = self._game.node
        assert node is not None
        parent = node.parent
        until = node.correctable_until
        if until is None or until < self._view.changed_at or parent is None or key == node.key:
            return False
        move = parent.match(key)
        if move is None or swapped_promotion(node, key) is not None:
            return False  # 4.4d: the promoted piece, once on its square, is final
        changed = set(differing_squares(node.key, key))
        touched = [
            lift
            for lift in self._lifts_between(node.seen_at, t)
            if chr(node.key[lift.square]) == lift.piece
        ]
        if any(lift.square not in changed for lift in touched):
            return False  # the opponent touched something of his own
        self._game.repetitions[node.identity()] -= 1
        self._game.node = parent
        self._commit(t, move, out, settled=True, correction=True)
        return True

    def _press_completes_passing(self, t: float, key: bytes, out: list[DomainEvent]) -> bool:
        """The press completes the mover's move the board showed, whatever the opponent does next.

        The clock report can come after the opponent has begun his reply; only
        the mover's move is completed by the mover's press (6.7), the reply waits
        for its own. The board must still be explained by that move: the reply in
        progress, or pieces in hand.
        """
        for target in reversed(self._game.seen):
            if not (key == target.key or in_progress(target, key)):
                continue
            path = self._seen_path(target)
            if not path:
                continue
            first = path[0]
            assert first.move is not None
            self._commit(t, first.move, out, settled=False, node_child=first, press=True)
            return True
        return False

    def _two_moves_to(self, t: float, key: bytes, out: list[DomainEvent], by_press: bool) -> bool:
        """A reply so fast that both moves stood inside one settle window (or before a press)."""
        node = self._game.node
        assert node is not None
        if key == self._game.blocked_key:
            return False  # the board still shows what was taken back (takeback_to)
        if is_subset(key, node.key):
            # pieces in hand only: two moves can net out to that (Nxd3 cxd3 leaves the
            # squares b4 and c2 empty), but nobody set a piece down; never guess
            return False
        for child_key, move in node.legal_children().items():
            if key[move.from_square] == node.key[move.from_square]:
                # the first move's piece has left its square, and no reply can put the
                # same piece back there: not this move (and no child built for it)
                continue
            changed = sum(1 for a, b in zip(child_key, key, strict=True) if a != b)
            if changed > 4:
                continue
            child = node.child(move)
            reply = child.match(key)
            if reply is None:
                continue
            self._commit(t, move, out, settled=False, node_child=child)
            self._commit(t, reply, out, settled=not by_press and self._by_settle_only())
            return True
        return False
