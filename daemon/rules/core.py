"""The rules core: sensor events in, the FIDE Laws' decisions out.

Theory of operation
===================

Articles implemented (FIDE Laws of Chess 2009 numbering; ``rules.laws: current``
cites today's, ``daemon.rules.laws``):
  4.3-4.5    touch-move (Appendix E.2.2: lifted = touched): every piece touched counts,
             4.3a/b/c (``daemon.rules.touch``); the previous mover's hand re-centring
             its piece is not the opponent's touch; king-then-rook castles,
             rook-then-king castling is reported (castling_rook_first); 4.4d: the
             promoted piece, once on its square, is final (promotion_changed).
  4.6        a move is made when the last piece of it is released: captures in any
             order, castling only once the rook stands on the square the king crossed,
             promotion only once the new piece (the board names it) replaces the pawn,
             the new piece set down before or after the pawn is lifted.
  5.1, 5.2   checkmate, stalemate, dead position end the game at once; 9.2 threefold
             repetition and 9.3 fifty moves are reported as claimable; both kings on
             the centre squares signal a result (DGT's convention, result_on_board).
  6.1, 6.7   with a clock, pressing it completes the move; flags (6.9 draw when the
             opponent cannot mate, 6.11 both flags).
  7.1        start position either way round (board turned), Chess960 (Appendix F),
             wrong setup; 7.3/7.5 displaced pieces with how to restore them;
             7.4 illegal moves with the per-player count and its consequence.

The game is a tree of positions (``daemon.rules.tree.Node``): position, side to
move, castling and en-passant rights. What the board shows is a placement key;
it is looked up among the current node's children (one legal move away), among
the children of every legal position the board has shown since the last
decision (a reachable-position map: a reply made inside one settle window, a
slide), its siblings (a correction of a move decided on time alone) and its
ancestors (takebacks in casual mode, restorations). Touches (4.3) are the lifts
between the board first showing a position and first showing the move's result.

The phases (``daemon.rules.state``: one enum, one transition table, one
``enter`` that resets what the old phase held):
  NO_GAME -START-> PLAYING -PRESS-> PRESSED -MOVE-> PLAYING
  PLAYING -REPORT-> IRREGULAR -RESTORE-> PLAYING;  any -END-> OVER -START-> PLAYING
  RESUMING (after resume()) -AGREE-> PLAYING
What the board shows inside a phase is read off the placement each time
(``daemon.rules.placement``), never stored:
  at rest        the board shows the current node. Lifts are recorded (touch-move).
  piece in hand  pieces are missing from the node or from one of its children
                 (a capture or castling half done, a slide): never alarming.
  move shaped    a child (a legal move), an illegal move-shaped change, or a
                 half-move (king on its castling square, pawn on the last rank).
A legal child completes: with a running clock at the mover's press (PRESSED; a
move that ends the game after the settle time without one); without a clock, or
once the press is spent, after it stood for the settle time (then it may still
be corrected by the same hand for 2.5 s at most, until the opponent touches
anything; after a press only within one settle time). A placement no move in
progress explains that stands for the settle time (or is pressed on) is an
Irregularity with a restore list (IRREGULAR); PositionRestored when the node
stands again.

No I/O, no threads, no clock: time comes with each event; ``tick(t)`` runs the
settle timer when no event arrives.

Where each decision lives
=========================

``RulesCore`` (this module) is the dispatcher: it says where each sensor event goes,
and runs the settle timer. The decisions are made by the classes it inherits, one
module each; each inherits what it calls, down to ``daemon.rules.base.CoreBase``
(the memory by lifetime, ``daemon.rules.lifetimes``; the phase, ``daemon.rules.state``):

  a square changed, a whole board picture   ``_on_square``, ``_on_board_change`` here
  the settle time ran out                   ``_decide`` here
  a clock report (a press, a flag)          ``daemon.rules.clock``
  a request (new game, takeback, the
    arbiter's corrections, a question)      ``daemon.rules.requests``
  the link lost or heard, a magic piece,
    a clock button                          ``judge`` here

  the move found (one, two in one settle
    window, a correction by the same hand)  ``daemon.rules.moves``
  the move committed, or taken back         ``daemon.rules.commit``
  the pieces lifted, touch-move (4.3)       ``daemon.rules.lifts``
  what no move explains (7.3, 7.4), a
    press on no completed move (6.7, 4.6)   ``daemon.rules.irregularities``
  an irregularity reported with its phase   ``daemon.rules.report``
  set-up and a new game (7.1)               ``daemon.rules.newgame``
  resume after a restart, moves recovered
    after an outage                         ``daemon.rules.resuming``

So a newcomer looking for where a move is decided opens ``daemon.rules.moves``
(``_commit_if_move``: is what the board shows a move, and does it count yet?) and
``daemon.rules.commit`` (``_commit``: the move into the game).
"""

from __future__ import annotations

import chess

from daemon.game.events import Connection, DomainEvent, InfoRequest, Notice, PositionRestored
from daemon.rules.base import COLOUR_NAMES
from daemon.rules.clock import Clock
from daemon.rules.irregularities import Irregularities
from daemon.rules.placement import (
    EMPTY,
    explains,
    is_subset,
    key_from_placement,
    placement_from_key,
    result_signal,
    square_number,
    standard_start_orientation,
    start_in_view,
    turned,
)
from daemon.rules.requests import Requests
from daemon.rules.state import Phase, Trigger
from daemon.rules.tree import Lift
from drivers.records import at_time
from drivers.sensors import (
    BoardDump,
    BoardHeard,
    ButtonPress,
    ClockReport,
    ConnectionChange,
    MagicPiece,
    Request,
    SensorEvent,
    SquareChange,
)

_MAX_LIFTS = 256  # the touch windows look back over a few moves at most

#: Board reports that reach the core at the same time (one DGT bus change list: every
#: change in it is stamped with the time it was asked for) are that far apart in the
#: core's time, in the order the board reported them, so that "before" and "after"
#: (touches against the position shown, the press, the opponent's first touch) keep
#: the board's order: a microsecond, far below anything a hand or a timer tells.
ORDER_STEP = 1e-6


class RulesCore(Requests, Clock, Irregularities):
    """The Article 4/6/7 state machine: ``judge`` takes each sensor event, in time order,
    and returns what the Laws make of it (domain events); ``tick`` runs the settle timer
    when no event comes."""

    @property
    def board(self) -> chess.Board:
        """The current game position (a copy; the starting position when no game runs)."""
        node = self._game.node
        if node is None:
            return chess.Board()
        root = node
        while root.parent is not None:
            root = root.parent
        board = root.board.copy()
        for move in node.line():
            board.push(move)
        return board

    @property
    def ply(self) -> int:
        return self._game.node.ply if self._game.node else 0

    @property
    def moves(self) -> list[chess.Move]:
        """The moves of the game so far, from its start position."""
        return self._game.node.line() if self._game.node else []

    @property
    def held_since(self) -> float | None:
        """When a decision began to wait for the board to be heard (None: none waits).
        The shell may ask the board at once rather than at its next liveness probe."""
        return self._reach.held_at

    def next_deadline(self) -> float | None:
        return self._deadline

    def mover_on_board(self) -> str | None:
        """The player on move, when the board shows a legal move of his, made or under
        way with a piece already set down, and not yet decided; else None (no game, a
        restart not yet agreed, the board at rest, only pieces lifted, which may be
        the opponent's hand already on his reply, or anything else).

        The clock asks at each press: a press made while the board shows a player's
        move is that player's, which tells whose clock side is whose
        (``daemon.clock.sides``) whatever the clock showed before."""
        node = self._game.node
        taking_moves = self._state.phase in (Phase.PLAYING, Phase.PRESSED, Phase.IRREGULAR)
        if node is None or not taking_moves or not self._view.known:
            return None
        key = self._key()
        if is_subset(key, node.key) or not explains(node, key):
            return None
        return COLOUR_NAMES[node.turn]

    def tick(self, t: float) -> list[DomainEvent]:
        out: list[DomainEvent] = []
        self._run_due(t, out)
        return out

    def _in_order(self, event: SensorEvent) -> SensorEvent:
        """A piece change or a press reported no later than the board's previous report
        comes ``ORDER_STEP`` after it: the board made them in the order it reported
        them. Without it, a change list holding the previous mover's re-centring and
        the opponent's first lift (a slow poll, a fast reply) gave both one time, and
        the re-centring, no longer seen before the opponent's own touch, was charged
        to him as a touched piece (4.3b); a re-centring in the list that completed the
        opponent's move counted in the position after it (4.3a)."""
        if not isinstance(event, (SquareChange, ClockReport)):
            return event
        last = self._view.reported_at
        if last is not None and event.t <= last:
            event = at_time(event, last + ORDER_STEP)
        self._view.reported_at = event.t
        return event

    def judge(self, event: SensorEvent) -> list[DomainEvent]:
        """What the Laws make of one sensor event: the domain events it decides, after
        those of the settle timer if it ran out before the event. Each kind of event goes
        to its decision path (the table at the top of this module)."""
        event = self._in_order(event)
        out: list[DomainEvent] = []
        if isinstance(event, BoardHeard) or (
            self._reach.heard_at is not None and isinstance(event, (SquareChange, BoardDump))
        ):
            self._reach.heard_at = event.t  # first: a deadline before it is confirmed by it
        self._run_due(event.t, out)
        match event:
            case BoardHeard():
                pass
            case SquareChange():
                self._reach.link_down = False  # the board talks: it is within reach
                self._on_square(event, out)
            case BoardDump():
                self._reach.link_down = False
                self._view.raw[:] = key_from_placement(event.placement)
                self._view.known = True
                if self._reach.link_was_lost or event.history:
                    self._reach.link_was_lost = False
                    # moves made meanwhile may be recovered; the picture at the loss
                    # comes first (a move already standing then is part of the line)
                    seen = (self._reach.picture_at_loss,) if self._reach.picture_at_loss else ()
                    self._reach.outage = (*seen, *event.history)
                    self._recover_at_once(event.t, out)
                self._on_board_change(event.t, out)
            case ClockReport():
                if self.settings.use_clock:
                    self._on_clock(event, out)
            case ButtonPress():
                action = self.settings.button_actions.get(event.button)
                if action:
                    out.append(InfoRequest(event.t, action))
            case Request():
                self._on_request(event, out)
            case MagicPiece():
                out.append(
                    Notice(
                        event.t,
                        "magic_piece",
                        f"magic piece '{event.meaning}' on {event.square}",
                    )
                )
            case ConnectionChange():
                out.append(Connection(event.t, event.state, event.detail, event.found))
                # No alarm on the last picture before the loss: it may have caught a
                # hand mid-move; the picture after the outage decides.
                self._reach.link_down = event.state == "lost"
                self._reach.link_was_lost |= self._reach.link_down
                if self._reach.link_down:
                    self._reach.held_at = None  # the picture after the outage decides
                if self._reach.link_down and self._view.known:  # where the board's log starts
                    self._reach.picture_at_loss = placement_from_key(bytes(self._view.raw))
        self._release_held(out)
        return out

    def _unheard_since(self, t: float) -> bool:
        """The board has not been heard at or after ``t``: a picture older than the
        decision may be stale (the board may have gone silent with a hand mid-move,
        and its loss is known only at the link's liveness time-out)."""
        return self._reach.heard_at is not None and self._reach.heard_at < t

    def _release_held(self, out: list[DomainEvent]) -> None:
        """The board heard again after a held decision: decide it now, on the picture
        the board has just confirmed."""
        held = self._reach.held_at
        if held is None or self._reach.link_down or self._unheard_since(held):
            return
        self._reach.held_at = None
        if self._deadline is None:  # a board change since re-armed it: that decides
            assert self._reach.heard_at is not None
            self._decide(self._reach.heard_at, out)

    def _run_due(self, t: float, out: list[DomainEvent]) -> None:
        while self._deadline is not None and self._deadline <= t:
            due = self._deadline
            self._deadline = None
            self._decide(due, out)

    def _on_square(self, event: SquareChange, out: list[DomainEvent]) -> None:
        raw_square = square_number(event.square)
        before = self._view.raw[raw_square]
        after = ord(event.piece) if event.piece else EMPTY
        if before == after:
            return
        if event.piece is None and self._state.in_game:
            square = self._true_square(raw_square)
            self._game.lifts.append(Lift(event.t, square, chr(before), since=event.since))
            del self._game.lifts[:-_MAX_LIFTS]
        elif event.piece is not None:
            # a polled board's put may have been made as early as its previous read
            back = event.t if event.since is None else min(event.t, event.since)
            returned = self._mark_returned(back, self._true_square(raw_square), event.piece)
            if returned is not None and self.settings.report_touches:
                self._report_touch(event.t, returned, out)
        self._view.raw[raw_square] = after
        if self._reach.outage is not None:  # what the board shows after the outage, in order
            self._reach.outage = (*self._reach.outage, placement_from_key(bytes(self._view.raw)))
        self._on_board_change(event.t, out)

    def _on_board_change(self, t: float, out: list[DomainEvent]) -> None:
        """The board changed: after a restart the resume decides (``resuming``); without a
        game a start position starts one (``newgame``); in a game the positions passed
        are followed and a press waiting for its move may complete it (``moves``), the
        position standing again ends an alarm; else the settle timer is armed."""
        self._view.changed_at = t
        self._reach.held_at = None  # a new picture: its own settle time decides
        phase = self._state.phase
        if phase is Phase.RESUMING:
            self._check_resume(t, out)
            return
        key = self._key()
        if phase in (Phase.NO_GAME, Phase.OVER):
            start = standard_start_orientation(bytes(self._view.raw))
            if start is not None:
                self._start_game(t, chess.Board(), flipped=start, out=out)
                return
            self._arm(t)
            return
        node = self._game.node
        assert node is not None
        if self._view.orientation_open and key != node.key and turned(key) == node.key:
            self._view.flipped = not self._view.flipped
            key = self._key()
        if key == node.key:
            self._view.orientation_open = False
        if self._game.blocked_key is not None and key != self._game.blocked_key:
            self._game.blocked_key = None
        self._lone_king_left(t, key, out)
        self._follow(t, key, out)
        node = self._game.node
        assert node is not None
        if key == node.key:
            if self._state.owed_restore:
                if not self._state.touch_binds:
                    # touches since the board left the position (a knock, putting it right)
                    # are no 4.3 touches; a touch before it still binds
                    since = self._view.at_node_since
                    self._game.lifts = [lift for lift in self._game.lifts if lift.t <= since]
                self._state.enter(Trigger.RESTORE)
                self._game.reset_noticed = False  # a set-up begun again is noticed again
                out.append(PositionRestored(t, node.board.fen()))
            self._view.at_node_since = t
            if not self._state.press_pending:
                self._deadline = None
                return
        elif self._state.press_pending and self._commit_if_move(t, key, out, by_press=True):
            return
        self._arm(t)

    def _decide(self, t: float, out: list[DomainEvent]) -> None:
        """The settle time ran out on what the board shows: in this order, the resume
        (``resuming``), a set-up (``newgame``), a result signalled, a move (``moves``),
        the moves made out of reach (``resuming``), a new game (``newgame``), a press on
        no move (``irregularities``), a takeback (casual mode), else what no move explains
        (``irregularities``). A board out of reach or not heard since holds an alarm."""
        self._reach.held_at = None  # this decision replaces a held one (or holds itself)
        phase = self._state.phase
        unheard = self._unheard_since(t)
        if self._reach.link_down or unheard:
            # The board is out of reach, or not heard since the picture may have gone
            # stale: a move that stood may count, but no alarm is decided on its last
            # picture (the hand may have been mid-move). A board merely not heard yet
            # holds the decision until it is (``_release_held``).
            node = self._game.node
            if phase in (Phase.PLAYING, Phase.PRESSED, Phase.IRREGULAR) and node is not None:
                key = self._key()
                if key != node.key and self._commit_if_move(
                    t, key, out, by_press=self._state.press_pending
                ):
                    return
            if not self._reach.link_down:
                self._reach.held_at = t
            return
        if phase is Phase.RESUMING:
            self._check_resume(t, out, settled=True)
            return
        # The outage was kept open for this settled picture (the first after the link
        # came back may catch a hand mid-move): it ends with this decision. Left open
        # past a board found as it was, it gathered every placement of the game, and
        # the first picture no move explained, moves later, ran its search over them
        # and told the arbiter moves were made while the board was away (issue 28).
        outage, self._reach.outage = self._reach.outage, None
        key = self._key()
        if phase in (Phase.NO_GAME, Phase.OVER):
            self._check_setup(t, key, out)
            return
        node = self._game.node
        assert node is not None
        press = self._state.press_pending
        if key == node.key:
            if press:
                self._press_irregularity(t, key, out)
            return
        result = self.settings.result_on_board and result_signal(node.key, key)
        if result:  # both kings on the centre squares (DGT's convention): the result
            self._end(t, result, "result_on_board", out)
            return
        if self._commit_if_move(t, key, out, by_press=press):
            return
        if outage is not None and self._recover(t, key, outage, out):
            return
        restart = start_in_view(bytes(self._view.raw), self.settings.chess960)
        if restart is not None:  # the pieces were set up again: a new game (7.1)
            self._undo_set_up_steps(t, out)
            board, flipped, is960 = restart
            self._start_game(t, board, flipped=flipped, out=out, chess960=is960)
            return
        if press:
            self._press_irregularity(t, key, out)
            return
        if self.settings.mode == "casual" and self._takeback_to(t, key, out):
            return
        self._judge_unexplained(t, key, out)
