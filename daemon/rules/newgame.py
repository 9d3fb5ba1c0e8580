"""Set-up and the new game (7.1): a start position, a wrong set-up, the board set up again.

A game starts when the board shows a start position either way round (a Chess960 one
when allowed) or the arbiter sets one; a board with both pawn rows in place but no
start position is a wrong set-up. A game that stopped without a result and whose board
is being set up again gives one ``board_reset`` notice and no alarm, and a first step
of that set-up that was itself a legal move is taken back.
"""

from __future__ import annotations

import chess

from daemon.game.events import DomainEvent, GameStart, Notice
from daemon.rules.commit import Committing
from daemon.rules.lifetimes import GameMemory
from daemon.rules.placement import (
    STANDARD_START_KEY,
    differing_squares,
    looks_like_a_setup,
    move_shaped,
    moved_next_door,
    set_up_step,
    setting_up,
    start_in_view,
    turned,
)
from daemon.rules.state import Trigger
from daemon.rules.tree import Node

#: How long one piece back on its start square waits before it is called displaced:
#: longer than a hand setting up the next game pauses between two pieces.
RESET_PATIENCE = 3.0


class NewGame(Committing):
    """Starting games, and the board being set up."""

    def _new_board(self, fen: str, chess960: bool | None = None) -> chess.Board:
        if chess960 is None:
            chess960 = False
            if self.settings.chess960:
                index = chess.Board(fen, chess960=True).chess960_pos()
                chess960 = index is not None and index != 518
        return chess.Board(fen, chess960=chess960)

    def _start_tree(self, root: Node) -> None:
        root.seen_at = root.current_at = self._view.changed_at
        self._game = GameMemory.starting(root)
        self._deadline = None

    def _start_game(
        self,
        t: float,
        board: chess.Board,
        flipped: bool,
        out: list[DomainEvent],
        chess960: bool = False,
    ) -> None:
        board.chess960 = chess960
        self._view.flipped = flipped
        root = Node.root(board)
        self._start_tree(root)
        root.seen_at = root.current_at = t
        self._state.enter(Trigger.START)
        out.append(GameStart(t, root.fen(), flipped=flipped, chess960=chess960))

    def _check_setup(self, t: float, key: bytes, out: list[DomainEvent]) -> None:
        raw = bytes(self._view.raw)
        start = start_in_view(raw, self.settings.chess960)
        if start is not None:
            board, flipped, is960 = start
            self._start_game(t, board, flipped=flipped, out=out, chess960=is960)
            return
        if not looks_like_a_setup(raw) or raw == self._state.reported:
            return
        flipped = raw[8:16] == b"p" * 8
        true_key = turned(raw) if flipped else raw
        event = self._irregularity(
            t,
            "wrong_setup",
            None,
            true_key,
            target=STANDARD_START_KEY,
            detail="the pieces do not stand in the initial position",
        )
        self._report(out, event, reported=raw)

    def _setting_up(self, t: float, key: bytes, out: list[DomainEvent]) -> bool:
        """The players are setting up the start position: one notice, no alarm, no move.

        A game that stopped without a signal (a resignation) and whose board is
        then reset. One piece put on its start square from afar may still be a
        displaced piece: that alarm waits ``RESET_PATIENCE``, longer than a hand
        resetting pauses, before it is raised. One knocked onto the square next
        to it (a start square by chance) is a knock: the usual alarm.
        """
        node = self._game.node
        assert node is not None
        pieces = setting_up(node.key, key)
        if not pieces:
            return False
        knock = moved_next_door(node.key, key) and len(differing_squares(node.key, key)) <= 2
        if pieces < 2 and (move_shaped(node, key) or knock):
            return False  # the mover's (illegal) move, or a piece knocked onto a start square
        patience_until = self._view.changed_at + RESET_PATIENCE
        if pieces < 2 and t < patience_until:  # (compared as the deadline is: no float drift)
            self._deadline = patience_until
            return True
        if pieces < 2:
            return False
        if not self._game.reset_noticed:
            self._undo_set_up_steps(t, out)
            node = self._game.node
            assert node is not None
            self._game.reset_noticed = True
            out.append(
                Notice(
                    t,
                    "board_reset",
                    "the board is being set up again: the game's record ends at move "
                    f"{node.board.fullmove_number}, unless its position is put back",
                )
            )
        # no alarm, but the placement is marked as judged (the set-up is not reported again)
        self._state.enter(Trigger.REPORT, reported=key, touch_binds=False)
        return True

    def _undo_set_up_steps(self, t: float, out: list[DomainEvent]) -> None:
        """The last move, when it was the first step of this set-up: a piece put back on
        its start square, and the next change came within ``RESET_PATIENCE`` (hands
        setting up go on at once; a player who resigns after his opponent's move takes
        longer). It is taken back: the record ends at the last real move."""
        node = self._game.node
        assert node is not None
        parent, move = node.parent, node.move
        if parent is None or move is None or not set_up_step(parent.key, move):
            return
        seen = node.seen_at if node.seen_at is not None else node.current_at
        after = next(
            (lift.t for lift in self._game.lifts if seen is not None and lift.t > seen), None
        )
        if after is not None and seen is not None and after - seen <= RESET_PATIENCE:
            self._takeback_to(t, parent.key, out, target=parent)
