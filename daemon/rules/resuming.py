"""Resume and recovery: a game rebuilt from its journal, moves made out of reach found again.

After a restart (``resume``) nothing is decided until the first whole board picture:
the board agrees with the journal or shows a move of it under way (``game_resumed``
either way), or it is displaced pieces until it does. After an outage, or a restart
whose board moved on, the moves made meanwhile are recovered as the one line of legal
moves that leads to what the board shows (``daemon.rules.recovery``), never a guess.
"""

from __future__ import annotations

from collections.abc import Sequence

import chess

from daemon.game.events import DomainEvent, GameResumed, MovesRecovered, Notice
from daemon.rules.base import COLOUR_NAMES
from daemon.rules.newgame import NewGame
from daemon.rules.placement import (
    explains,
    is_subset,
    key_from_placement,
    placement_from_key,
    turned,
)
from daemon.rules.recovery import Recovery, logged_lines, recover
from daemon.rules.recovery import describe as describe_line
from daemon.rules.state import Phase, Trigger
from daemon.rules.tree import Node

#: placements back from a restart's last one where the move under way may begin
_UNDER_WAY_LOOKBACK = 8


class Resuming(NewGame):
    """The game resumed after a restart, and moves recovered after an outage."""

    @property
    def resuming(self) -> bool:
        """A game resumed from its journal waits for the board to agree with it."""
        return self._state.phase is Phase.RESUMING

    def resume(
        self,
        t: float,
        start_fen: str,
        uci_moves: Sequence[str],
        illegal_counts: dict[str, int] | None = None,
        *,
        chess960: bool | None = None,
        start_ply: int = 0,
    ) -> list[DomainEvent]:
        """Rebuild a game from the journal without announcing it again. ``start_ply``:
        the ply of ``start_fen`` (the arbiter accepted that position in mid-game).

        The next board picture decides: GameResumed when it agrees, else a
        displaced_pieces irregularity with the restore list, and the core waits.
        ``chess960`` None: a Chess960 start position counts as one when allowed.
        """
        board = self._new_board(start_fen, chess960)
        node = Node.root(board, ply=start_ply)
        self._start_tree(node)
        for uci in uci_moves:
            move = node.board.parse_uci(uci)
            node = node.child(move)
            self._game.repetitions[node.identity()] += 1
        self._game.node = node
        self._state.enter(Trigger.RESUME)
        self._game.illegal_counts = {"white": 0, "black": 0, **(illegal_counts or {})}
        self._game.resume_clock_open = True
        return []

    def _check_resume(self, t: float, out: list[DomainEvent], settled: bool = False) -> None:
        """After ``resume``: does the board agree with the journal, or explain a move?

        The player on move may have completed a move while the daemon was down
        (or be in the middle of one, or the opponent already replying, as inside
        one settle window in play): a legal child of the journal's position or a
        move in progress, or a reply to one, resumes the game at the journal's
        position, and the moves complete by the usual rules (a press, the settle
        time). Only
        a board no move explains is displaced pieces; the core waits for it.
        An unexplained board must stand for the settle time, as in play: the
        picture taken at the reconnection may catch a hand mid-move. Until the
        first whole board picture the board is unknown: nothing is decided.
        """
        node = self._game.node
        assert node is not None
        if not self._view.known:
            return
        raw = bytes(self._view.raw)
        views = ((self._view.flipped, self._key()), (not self._view.flipped, turned(raw)))
        for flipped, key in views:
            if key == node.key:
                self._end_resume(t, flipped, out)
                return
        history = self._reach.outage or ()
        for flipped, key in views:
            line = self._logged_line_here(key, history, flipped)
            if line is not None:
                found = Recovery(line, "eeprom", (line,))
                self._recover(t, key, history, out, resume_flipped=flipped, found=found)
                return
        for flipped, key in views:
            replied = None  # the move made, when the board shows the opponent replying
            if explains(node, key):
                if not is_subset(key, node.key):  # the move stood, then a reply's lift
                    replied = next(
                        (
                            node.child(move)
                            for child_key, move in node.legal_children().items()
                            if is_subset(key, child_key) and key != child_key
                        ),
                        None,
                    )
            else:
                children = (node.child(move) for move in node.legal_children().values())
                replied = next((c for c in children if explains(c, key)), None)
                if replied is None:
                    continue
            self._end_resume(t, flipped, out)
            self._game.touches_unknown = [node]  # the move began before the restart (4.3)
            if replied is not None:  # the board showed that move before the restart
                replied.seen_at = t
                self._game.seen = [replied]
                self._game.touches_unknown.append(replied)
            self._on_board_change(t, out)  # the move under way, by the usual rules
            return
        if not settled:
            self._arm(t)
            return
        # Several moves made while the daemon was down? The board's log (the link read
        # it when the board showed another position than the journal's) tells them.
        history = self._reach.outage or ()
        for flipped, key in views:
            if self._recover_under_way(t, key, history, out, flipped):
                return
        for flipped, key in views:
            if self._recover(t, key, history, out, resume_flipped=flipped):
                return
        if self._state.reported is None:
            key = self._key()
            event = self._irregularity(t, "displaced_pieces", None, key, detail="resume")
            self._report(out, event, reported=key)

    def _logged_line_here(
        self, key: bytes, history: tuple[str, ...], flipped: bool
    ) -> tuple[chess.Move, ...] | None:
        """The board's log after a restart gives a line of two moves or more to what
        it shows: those moves were made, whatever else the picture might be taken
        for. A picture after 4. cxd5 exd5 5. Bg5 Be7 is also Black's Be7 "under way"
        after 4. Bg5 alone, its c4 and e6 "emptied by a hand" (``explains``): taken
        so, 4. Bg5 was decided at the next press and the game stood on displaced
        pieces, the three other moves lost (a 4-board chain after SIGKILL, issue 28's
        fault trials). One move is left to the usual rules (its press, the settle
        time), as without a log. The line found (None: no such line) is the one
        ``_recover`` commits: the walk is not made twice."""
        if not history:
            return None
        node = self._game.node
        assert node is not None
        # The log's lines only, no search: this runs at every change while resuming.
        lines = logged_lines(node.board, placement_from_key(key), _oriented(history, flipped))
        return lines[0] if len(lines) == 1 and len(lines[0]) > 1 else None

    def _end_resume(self, t: float, flipped: bool, out: list[DomainEvent]) -> None:
        node = self._game.node
        assert node is not None
        self._view.flipped = flipped
        self._state.enter(Trigger.AGREE)
        self._game.touch_floor = t  # lifts before the restart are unknown, not touches
        node.seen_at = node.current_at = t
        out.append(GameResumed(t, node.ply, node.board.fen()))
        if node.board.is_game_over():
            self._state.enter(Trigger.END)  # a finished game: nothing more to decide

    def _recover_at_once(self, t: float, out: list[DomainEvent]) -> bool:
        """The first picture after an outage: the moves made meanwhile, before the
        players make more. A picture that catches a hand mid-move waits for the
        settle time (the outage stays open)."""
        node = self._game.node
        taking_moves = self._state.phase in (Phase.PLAYING, Phase.PRESSED, Phase.IRREGULAR)
        if node is None or not taking_moves or self._reach.outage is None:
            return False
        # Who touched what while the board was away is unknown (4.3): the move under
        # way is not judged by touches, nor are lifts before the outage counted.
        self._game.touch_floor = t
        self._game.touches_unknown = [node]
        key = self._key()
        if key == node.key or explains(node, key):
            return False  # at most one move: the usual rules (its press, the settle time)
        return self._recover(t, key, self._reach.outage, out, final=False)

    def _recover(
        self,
        t: float,
        key: bytes,
        history: tuple[str, ...],
        out: list[DomainEvent],
        resume_flipped: bool | None = None,
        final: bool = True,
        found: Recovery | None = None,
    ) -> bool:
        """Moves made while the board was out of reach (an outage, a restart): the one
        line of legal moves to what the board shows (``daemon.rules.recovery``), or,
        when several lines fit, a MovesRecovered saying so and a notice for the
        arbiter; never a guess. ``resume_flipped``: after a restart, the board's
        orientation this view assumes. ``found``: the line already found in the
        board's log (``_logged_line_here``)."""
        node = self._game.node
        assert node is not None
        flipped = self._view.flipped if resume_flipped is None else resume_flipped
        history = _oriented(history, flipped)
        result = found or recover(node.board, placement_from_key(key), history=history)
        board = node.board
        # A picture that caught a hand mid-move explains nothing yet (no line, or
        # the search ran out): the outage stays open for the settled picture.
        if final or result.found or result.how == "ambiguous":
            self._reach.outage = None
        if not result.found:
            reportable = result.how == "ambiguous" or (final and result.how == "gave_up")
            if reportable and flipped == self._view.flipped:
                lines = [describe_line(board, line) for line in result.candidates]
                out.append(MovesRecovered(t, [], "", result.how, lines))
                message = (
                    "moves were made while the board was out of reach, and "
                    + (
                        f"{len(lines)} lines of moves lead to it: " + " | ".join(lines)
                        if lines
                        else "too many to search for"
                    )
                    + "; the arbiter decides (set the position, or put the pieces back)"
                )
                out.append(Notice(t, "moves_not_recovered", message))
            return False
        if resume_flipped is not None:
            self._end_resume(t, resume_flipped, out)
        self._game.touch_floor = t  # touches made while away are unknown (4.3)
        moves = list(result.moves)
        under_way = len(moves) > 1 and self._mover_still_on_clock(board, len(moves))
        if under_way:
            moves.pop()  # decided by the usual rules: its press, the piece where it lands
        for move in moves:
            self._commit(t, move, out, settled=False, touch_check=False)
        line = describe_line(board, moves)
        out.append(MovesRecovered(t, [m.uci() for m in moves], line, result.how))
        # The next move's first touches may precede this decision (a bus board's
        # changes are stamped when asked for, and may come just after it): not judged
        # by touches (4.3), or the king lifted just before was missed and the castling
        # called rook first.
        assert self._game.node is not None
        self._game.touches_unknown = [self._game.node]
        if under_way:
            self._on_board_change(t, out)  # the last move under way, by the usual rules
        return True

    def _mover_still_on_clock(self, board: chess.Board, plies: int) -> bool:
        """The line's last move (of ``plies`` from ``board``) is not proven made: its
        mover's clock still runs, or no clock has been seen yet (no press after it
        known). The board's log holds every square a piece touched, so a queen slid
        d8-e7-f6 is a "Qe7" in it while the hand is still on its way to f6: taken as
        made, the game stood on displaced pieces when the queen landed (a daemon
        restarted in mid-move, ``benchmarks.pihall --restart-at``)."""
        if not self.settings.use_clock:
            return False
        mover = board.turn if plies % 2 else not board.turn
        # No report since the start (a restart): the first one tells, as for a single
        # move made while the daemon was down (``resume_clock_open``).
        return self._clock is None or self._clock[2] in (None, COLOUR_NAMES[mover])

    def _recover_under_way(
        self, t: float, key: bytes, history: tuple[str, ...], out: list[DomainEvent], flipped: bool
    ) -> bool:
        """After a restart, the picture decided on may catch the next move under way
        (a king in the hand, a victim lifted), the moves made meanwhile before it: no
        line leads to that picture. One line (by the board's log) leads to a position
        the board showed just before, and the picture is a move under way from there:
        those moves are recovered, and the move under way completes by the usual
        rules. Else nothing is done here (``_recover`` judges the picture itself)."""
        node = self._game.node
        assert node is not None
        if not history or explains(node, key):
            return False
        history = _oriented(history, flipped)
        shown = placement_from_key(key)
        if recover(node.board, shown, history=history).how in ("eeprom", "search", "ambiguous"):
            return False  # lines lead to the picture itself: ``_recover`` decides
        last = len(history) - 1
        for index in range(last, max(-1, last - _UNDER_WAY_LOOKBACK), -1):
            placement = history[index]
            if placement == shown:
                continue
            result = recover(node.board, placement, history=history[: index + 1])
            if not result.found:
                continue
            end = node
            for move in result.moves:
                end = end.child(move)
            if not explains(end, key):
                continue
            self._end_resume(t, flipped, out)
            self._reach.outage = None
            self._game.touch_floor = t  # touches made while away are unknown (4.3)
            for move in result.moves:
                self._commit(t, move, out, settled=False, touch_check=False)
            line = describe_line(node.board, result.moves)
            out.append(MovesRecovered(t, [m.uci() for m in result.moves], line, result.how))
            assert self._game.node is not None
            self._game.touches_unknown = [self._game.node]  # the move began unseen (4.3)
            self._on_board_change(t, out)  # the move under way, by the usual rules
            return True
        return False


def _oriented(history: tuple[str, ...], flipped: bool) -> tuple[str, ...]:
    """The board's log as the game sees it: turned round with a board set up the
    other way round."""
    if not flipped:
        return history
    return tuple(placement_from_key(turned(key_from_placement(h))) for h in history)
