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
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import chess

from daemon.events import (
    ClockUpdate,
    Connection,
    DomainEvent,
    DrawClaimable,
    GameEnd,
    GameResumed,
    GameStart,
    InfoRequest,
    Irregularity,
    Move,
    MovesRecovered,
    Notice,
    Penalty,
    PositionRestored,
    Takeback,
    Touch,
)
from daemon.rules import corrections
from daemon.rules.flags import fallen_flags, flag_ruling
from daemon.rules.laws import laws
from daemon.rules.lifetimes import BoardView, GameMemory, Reach
from daemon.rules.placement import (
    EMPTY,
    MAX_SEEN,
    STANDARD_START_KEY,
    captured_square,
    castling_squares,
    descends,
    differing_squares,
    explains,
    half_moves,
    in_progress,
    is_subset,
    key_from_placement,
    looks_like_a_setup,
    move_shaped,
    moved_next_door,
    on_the_way_back,
    placement_from_key,
    result_signal,
    seen_path,
    set_up_step,
    setting_up,
    signalling_result,
    standard_start_orientation,
    start_in_view,
    swapped_promotion,
    turned,
    unpromoted_pawn_move,
)
from daemon.rules.recovery import describe as describe_line
from daemon.rules.recovery import recover
from daemon.rules.requests import info_request, players
from daemon.rules.settings import RulesSettings
from daemon.rules.state import GameState, Phase, Trigger
from daemon.rules.touch import touch_ruling
from daemon.rules.tree import Lift, Node
from daemon.rules.words import describe_move as fallback_describe
from daemon.rules.words import san as move_san
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

COLOUR_NAMES = {chess.WHITE: "white", chess.BLACK: "black"}
_MAX_LIFTS = 256  # the touch windows look back over a few moves at most


def _lift_time(lift: Lift) -> float:
    return lift.t


#: placements back from a restart's last one where the move under way may begin
_UNDER_WAY_LOOKBACK = 8
MAX_PRESSES = 600  # the presses kept for moves typed in later (a game's plies at most)
#: How long after a move decided on the settle time the same hand may still change
#: it (a slow slide, the king after the rook): a hand that goes on moving does so at
#: once; later, a piece of the side not on move that moves was knocked (7.3).
CORRECTION_WINDOW = 2.5


#: A hand that re-centres the piece it has just released, or brushes one while
#: withdrawing, lifts it within this long of the release (the board's report lags up
#: to 0.4 s; the fastest reply in the real capture touched 1.0 s after the press)...
BRUSH_WINDOW = 1.0
#: ... and sets it straight back within this long: not the opponent's touch (4.3b).
BRUSH_HOLD = 0.5
#: How long one piece back on its start square waits before it is called displaced:
#: longer than a hand setting up the next game pauses between two pieces.
RESET_PATIENCE = 3.0
#: How long one king on a centre square waits for the other (a result signalled on
#: the board) before it is judged as the move or displacement it then is.
SIGNAL_PATIENCE = 3.0
#: A piece of the player on move emptied this soon after the previous mover released
#: (or pressed), on a square next to where his hand set the piece down, is that hand
#: knocking it while withdrawing: a knock (7.3 if it is not put back), no touch (4.3).
KNOCK_WINDOW = 0.5
#: Board reports that reach the core at the same time (one DGT bus change list: every
#: change in it is stamped with the time it was asked for) are that far apart in the
#: core's time, in the order the board reported them, so that "before" and "after"
#: (touches against the position shown, the press, the opponent's first touch) keep
#: the board's order: a microsecond, far below anything a hand or a timer tells.
ORDER_STEP = 1e-6


class RulesCore:
    """The Article 4/6/7 state machine. Feed it sensor events; it returns domain events."""

    def __init__(self, settings: RulesSettings | None = None) -> None:
        self.settings = settings or RulesSettings()
        self._laws = laws(str(self.settings.laws))
        self._describe = self.settings.describe_move
        self._game = GameMemory()  # the game: made anew by each start (lifetimes.py)
        self._view = BoardView()  # the board as last seen
        self._reach = Reach()  # whether the board is within reach and heard
        self._state = GameState()
        self._deadline: float | None = None
        self._clock: tuple[float, float, str | None, tuple[str, ...]] | None = None
        self._chess960 = False
        self._orientation_open = False  # set_position before the board showed it
        self._reported_at: float | None = None  # the last board report's time (in order)

    # ------------------------------------------------------------------ public API

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
    def resuming(self) -> bool:
        """A game resumed from its journal waits for the board to agree with it."""
        return self._state.phase is Phase.RESUMING

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
        (``daemon.clocksides``) whatever the clock showed before."""
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
        last = self._reported_at
        if last is not None and event.t <= last:
            event = replace(event, t=last + ORDER_STEP)
        self._reported_at = event.t
        return event

    def feed(self, event: SensorEvent) -> list[DomainEvent]:
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

    # ------------------------------------------------------------------ timers

    def _run_due(self, t: float, out: list[DomainEvent]) -> None:
        while self._deadline is not None and self._deadline <= t:
            due = self._deadline
            self._deadline = None
            self._decide(due, out)

    def _arm(self, t: float) -> None:
        self._deadline = t + self.settings.settle_time
        self._reach.held_at = None  # the new deadline's decision replaces a held one

    # ------------------------------------------------------------------ board

    def _key(self) -> bytes:
        return turned(bytes(self._view.raw)) if self._view.flipped else bytes(self._view.raw)

    def _true_square(self, raw_square: int) -> int:
        return 63 - raw_square if self._view.flipped else raw_square

    def _on_square(self, event: SquareChange, out: list[DomainEvent]) -> None:
        raw_square = chess.parse_square(event.square)
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

    def _mark_returned(self, t: float, square: int, piece: str) -> Lift | None:
        """The piece lifted last from ``square`` stands there again (a brush, an
        adjustment) since ``t`` at the earliest (never before the lift): that lift, or
        None. A DGT bus reads a board every 0.1-0.3 s (several times that in game
        time in the demo, or on a loaded machine): a re-centring held 0.3 s then read
        as held 0.6 s, past ``BRUSH_HOLD``, and was charged to the opponent (4.3b)."""
        for index in range(len(self._game.lifts) - 1, max(-1, len(self._game.lifts) - 9), -1):
            lift = self._game.lifts[index]
            if lift.square == square:
                if lift.piece == piece and lift.returned is None:
                    back = max(t, lift.t)
                    self._game.lifts[index] = Lift(
                        lift.t, lift.square, lift.piece, returned=back, since=lift.since
                    )
                    return lift
                return None
        return None

    def _report_touch(self, t: float, lift: Lift, out: list[DomainEvent]) -> None:
        """E.9.e: the player to move put back a piece of his own he had lifted in this
        turn, and it could have moved (4.3a may bind him): a ``touch`` event."""
        node = self._game.node
        if node is None or not self._state.in_game or self._state.phase is Phase.OVER:
            return
        seen = node.seen_at if node.seen_at is not None else 0.0
        if lift.t < max(seen, self._game.touch_floor or 0.0):
            return  # lifted before the last move (or before a restart): not this turn's
        board = node.board
        colour = chess.WHITE if lift.piece.isupper() else chess.BLACK
        if colour != board.turn:
            return
        if not any(move.from_square == lift.square for move in board.legal_moves):
            return  # a piece that cannot move binds nobody (4.5)
        out.append(Touch(t, "white" if colour else "black", chess.square_name(lift.square),
                         lift.piece))  # fmt: skip

    def _on_board_change(self, t: float, out: list[DomainEvent]) -> None:
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
        if self._orientation_open and key != node.key and turned(key) == node.key:
            self._view.flipped = not self._view.flipped
            key = self._key()
        if key == node.key:
            self._orientation_open = False
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
                out.append(PositionRestored(t, node.board.fen()))
            self._view.at_node_since = t
            if not self._state.press_pending:
                self._deadline = None
                return
        elif self._state.press_pending and self._commit_if_move(t, key, out, by_press=True):
            return
        self._arm(t)

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
    ) -> bool:
        """Moves made while the board was out of reach (an outage, a restart): the one
        line of legal moves to what the board shows (``daemon.rules.recovery``), or,
        when several lines fit, a MovesRecovered saying so and a notice for the
        arbiter; never a guess. ``resume_flipped``: after a restart, the board's
        orientation this view assumes."""
        node = self._game.node
        assert node is not None
        flipped = self._view.flipped if resume_flipped is None else resume_flipped
        if flipped:
            history = tuple(placement_from_key(turned(key_from_placement(h))) for h in history)
        result = recover(node.board, placement_from_key(key), history=history)
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
        for move in result.moves:
            self._commit(t, move, out, settled=False, touch_check=False)
        line = describe_line(board, result.moves)
        out.append(MovesRecovered(t, [m.uci() for m in result.moves], line, result.how))
        # The next move's first touches may precede this decision (a bus board's
        # changes are stamped when asked for, and may come just after it): not judged
        # by touches (4.3), or the king lifted just before was missed and the castling
        # called rook first.
        assert self._game.node is not None
        self._game.touches_unknown = [self._game.node]
        return True

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
        if flipped:
            history = tuple(placement_from_key(turned(key_from_placement(h))) for h in history)
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

    # ------------------------------------------------------------------ decisions

    def _decide(self, t: float, out: list[DomainEvent]) -> None:
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

    def _by_settle(self) -> bool:
        node = self._game.node
        assert node is not None
        return not self._clock_running() or node.pressed

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

    def _by_settle_only(self) -> bool:
        return not self._clock_running()

    def _clock_running(self) -> bool:
        return self.settings.use_clock and self._clock is not None and self._clock[2] is not None

    def _ends_game(self, node: Node, move: chess.Move) -> bool:
        return self._child_of(node, move).is_over()

    def _child_of(self, node: Node, move: chess.Move) -> Node:
        """The child node for ``move``, the one already seen if there is one."""
        for seen in self._game.seen:
            if seen.parent is node and seen.move == move:
                return seen
        return node.child(move)

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

    # ------------------------------------------------------------------ committing

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
        san = move_san(board, move, child.board, child.has_legal_move())
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
        if board.is_insufficient_material():
            self._end(t, "1/2-1/2", "insufficient_material", out)
            return
        if self._game.repetitions[identity] >= 3:
            out.append(DrawClaimable(t, "threefold_repetition", child.ply))
        if board.halfmove_clock >= 100 and parent.board.halfmove_clock < 100:
            out.append(DrawClaimable(t, "fifty_moves", child.ply))

    def _end(self, t: float, result: str, reason: str, out: list[DomainEvent]) -> None:
        self._state.enter(Trigger.END)
        self._deadline = None
        out.append(GameEnd(t, result, reason))

    def _article(self, kind: str) -> str:
        return self._laws.articles[kind]

    def _lifts_between(self, start: float | None, end: float | None) -> list[Lift]:
        """The lifts from ``start`` to ``end``, both included.

        ``lifts`` is in time order: only square changes append to it, and ``_in_order``
        makes their times strictly increase for the core's life. So the window is found
        by bisection: scanning all ``_MAX_LIFTS`` on each move cost a tenth of the
        core's work late in a long game (issue 28).
        """
        start = max(start or 0.0, self._game.touch_floor)
        lifts = self._game.lifts
        first = bisect_left(lifts, start, key=_lift_time)
        last = len(lifts) if end is None else bisect_right(lifts, end, lo=first, key=_lift_time)
        return lifts[first:last]

    def _touch_irregularities(
        self, t: float, node: Node, move: chess.Move, child: Node
    ) -> list[Irregularity]:
        """4.3, 4.4: every piece touched in this position counts (``daemon.rules.touch``).

        The touches that count are those made between the board first showing
        the position and first showing the move's result, of pieces standing on
        their squares in that position: with fast hands the opponent's next
        touch can come before the move was decided. An opposing piece counts
        only once the position is decided, and not when the previous mover's hand
        re-centred or brushed it on the way back from his move.
        """
        mover_letters = "PNBRQK" if node.turn == chess.WHITE else "pnbrqk"
        window = [
            lift
            for lift in self._lifts_between(node.seen_at, child.seen_at)
            if chr(node.key[lift.square]) == lift.piece
        ]
        if not node.board.is_castling(move):
            # only the move's own pieces touched (the usual move): nothing to rule on,
            # as ``touch_ruling`` would find after weighing each lift (issue 28)
            own_squares = (move.from_square, captured_square(node.board, move))
            if all(lift.square in own_squares for lift in window):
                return []
        first_own = next((lift.t for lift in window if lift.piece in mover_letters), None)
        # the pieces his move moves were his own touch, however fast he replied
        moving = {move.from_square}
        if node.board.is_castling(move):
            moving.add(castling_squares(node.board, move)[2])
        lifts = [
            lift
            for lift in window
            if (
                lift.piece in mover_letters
                and (lift.square in moving or not self._knocked(node, lift))
            )
            or (
                node is not self._game.release_unknown  # 4.3: not charged on a guess
                and lift.t >= node.current_at
                and not self._brush(node, lift, first_own)
            )
        ]
        ruling = touch_ruling(node.board, lifts, move, self._laws.touch_cases)
        if ruling is None:
            return []
        mover = COLOUR_NAMES[node.turn]
        return [self._plain_irregularity(t, ruling.kind, mover, ruling.squares, ruling.detail)]

    @staticmethod
    def _knock(node: Node, lift: Lift) -> bool:
        """The previous mover's hand knocking a piece of the player now on move, while
        withdrawing from the piece it released: within ``KNOCK_WINDOW`` of the release
        (or of the press), next to the square it set the piece down on."""
        move = node.move
        if move is None or chess.square_distance(lift.square, move.to_square) > 1:
            return False
        acts = [node.seen_at, node.pressed_at]
        return any(
            act is not None and lift.t >= act and lift.earliest - act <= KNOCK_WINDOW
            for act in acts
        )

    def _knocked(self, node: Node, lift: Lift) -> bool:
        """``_knock``, counted also from the hand's last lift of the move it finished (a
        captured piece parked next door and taken off): the hand withdraws after that."""
        if self._knock(node, lift):
            return True
        start = node.seen_at
        if node.move is None or start is None:
            return False
        if chess.square_distance(lift.square, node.move.to_square) > 1:
            return False
        lifts = self._game.lifts  # in time order (``_lifts_between``): only those between
        first = bisect_left(lifts, start, key=_lift_time)
        return any(
            lift.t <= other.t + KNOCK_WINDOW and chr(node.key[other.square]) != other.piece
            for other in lifts[first : bisect_left(lifts, lift.t, lo=first, key=_lift_time)]
        )

    @staticmethod
    def _brush(node: Node, lift: Lift, first_own: float | None) -> bool:
        """The previous mover's hand finishing his move, not the opponent's touch.

        Counted from the hand's last act of the move: the release, or the press
        when the clock completed it (the hand goes from the clock back to the piece);
        a polled board's lift from the earliest it may have been made (a lift read a
        slow poll after the press was not that late).
        """
        released = node.pressed_at or node.seen_at or node.current_at
        return (
            lift.returned is not None
            and lift.returned - lift.t <= BRUSH_HOLD
            and lift.earliest - released <= BRUSH_WINDOW
            and (first_own is None or first_own > lift.t)
        )

    # ------------------------------------------------------------------ irregularities

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

    def _judge_unexplained(self, t: float, key: bytes, out: list[DomainEvent]) -> None:
        node = self._game.node
        assert node is not None
        if key == self._state.reported:
            return
        if self.settings.result_on_board and signalling_result(node.key, key):
            # the kings on their way to the centre squares; a king that stays there alone
            # was an illegal move or a displacement after all
            signal_until = self._view.changed_at + SIGNAL_PATIENCE
            if t < signal_until:
                self._deadline = signal_until
                self._game.signal_wait = (key, self._view.changed_at)
                return
        self._game.signal_wait = None
        if self._putting_back(key):
            return  # the placement reported on its way back: one alarm is enough
        if key != self._game.blocked_key and any(
            in_progress(base, key) for base in (node, *self._game.seen)
        ):
            return  # a move under way, from here or from a reply seen in passing
        if node.parent is not None and swapped_promotion(node, key) is not None:
            self._promotion_changed(t, COLOUR_NAMES[node.parent.turn], key, out)
            return
        if self._setting_up(t, key, out):
            return
        self._judge_shape(t, key, out)

    def _lone_king_left(self, t: float, key: bytes, out: list[DomainEvent]) -> None:
        """A king that waited alone on a centre square for the other, and left it before
        the wait ended: no result was signalled, so what stood there for the settle time
        is judged as what it was (an illegal king move, a displaced king)."""
        waiting, node = self._game.signal_wait, self._game.node
        if waiting is None or node is None or key == waiting[0]:
            return
        self._game.signal_wait = None
        shown, since = waiting
        if result_signal(node.key, key) or signalling_result(node.key, key):
            return  # the other king on its way, or the first one moved on to another square
        if t - since < self.settings.settle_time or shown == self._state.reported:
            return
        self._judge_shape(t, shown, out)

    def _judge_shape(self, t: float, key: bytes, out: list[DomainEvent]) -> None:
        """What no move explains: an illegal move when move-shaped, else displaced pieces."""
        node = self._game.node
        assert node is not None
        mover = COLOUR_NAMES[node.turn]
        if key != self._game.blocked_key and move_shaped(node, key):
            if not self._by_settle():
                return  # an illegal move is complete only with the press (6.7)
            self._report(out, self._illegal_move(t, mover, key), reported=key, touch_binds=True)
        else:
            event = self._irregularity(t, "displaced_pieces", None, key)
            self._report(out, event, reported=key, touch_binds=False)

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

    def _press_irregularity(self, t: float, key: bytes, out: list[DomainEvent]) -> None:
        """The clock was pressed, and what the board shows is no completed legal move."""
        node = self._game.node
        assert node is not None
        mover = COLOUR_NAMES[node.turn]
        node.pressed = True
        half = half_moves(node).get(key)
        counts = self._laws.press_counts_as_illegal  # today: 7.5.3, 7.5.2
        if half == "incomplete_promotion" and counts:
            self._unpromoted_pawn(t, mover, key, out)
            return
        if key == node.key or (half is None and is_subset(key, node.key)):
            if counts:
                event = self._illegal_move(t, mover, key, kind="clock_without_move")
            else:
                event = self._irregularity(t, "clock_without_move", mover, key)
        elif half is not None:
            event = self._irregularity(t, half, mover, key)
        elif move_shaped(node, key):
            event = self._illegal_move(t, mover, key)
        else:
            event = self._irregularity(t, "displaced_pieces", None, key)
        # nothing to put back after a press on the position itself: judged, not reported
        trigger = Trigger.JUDGED if key == node.key else Trigger.REPORT
        self._report(out, event, trigger, reported=key, touch_binds=True)

    def _unpromoted_pawn(self, t: float, mover: str, key: bytes, out: list[DomainEvent]) -> None:
        """Today's 7.5.2: the press with the pawn on the last rank is an illegal move, and
        the pawn is replaced by a queen: the move stands as a queen promotion."""
        node = self._game.node
        assert node is not None
        move = unpromoted_pawn_move(node, key)
        assert move is not None
        self._commit(t, move, out, settled=False)
        child = self._game.node
        assert child is not None
        event = self._illegal_move(
            t,
            mover,
            key,
            kind="incomplete_promotion",
            target=child.key,
            before="the pawn is replaced by a queen (7.5.2); ",
        )
        # the queen's move stands; the board owes the queen unless it already shows it
        owed = self._state.phase is Phase.PLAYING and key != child.key
        self._report(out, event, Trigger.REPORT if owed else None, reported=key, touch_binds=False)

    # ------------------------------------------------------------------ setup (7.1)

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

    def _new_board(self, fen: str, chess960: bool | None = None) -> chess.Board:
        if chess960 is None:
            chess960 = False
            if self.settings.chess960:
                index = chess.Board(fen, chess960=True).chess960_pos()
                chess960 = index is not None and index != 518
        self._chess960 = chess960
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
        self._chess960 = chess960
        self._view.flipped = flipped
        root = Node.root(board)
        self._start_tree(root)
        root.seen_at = root.current_at = t
        self._state.enter(Trigger.START)
        out.append(GameStart(t, board.fen(), flipped=flipped, chess960=chess960))

    # ------------------------------------------------------------------ clock (6)

    def _clock_dict(self) -> dict[str, float] | None:
        if self._clock is None:
            return None
        return {"white": self._clock[0], "black": self._clock[1]}

    def _on_clock(self, event: ClockReport, out: list[DomainEvent]) -> None:
        previous = self._clock
        state = (event.white, event.black, event.running, tuple(event.flags))
        self._clock = state
        if previous is None or previous[:3] != state[:3]:
            out.append(ClockUpdate(event.t, event.white, event.black, event.running))
        before = previous[2] if previous else None
        node = self._game.node
        if self._state.in_game and before and event.running and before != event.running:
            presses = self._game.presses  # the clocks at a press, for moves typed in later
            presses.append((event.t, {"white": event.white, "black": event.black}, event.running))
            del presses[:-MAX_PRESSES]
        if self._game.resume_clock_open and event.running and node is not None:
            # the first report after a restart: the opponent's clock running means the
            # player on move pressed while the daemon was down; that press is spent
            self._game.resume_clock_open = False
            if event.running != COLOUR_NAMES[node.turn]:
                node.pressed = True
        if (
            self._state.in_game
            and node is not None
            and before
            and event.running
            and before != event.running
        ):
            on_move = COLOUR_NAMES[node.turn]
            if before == on_move:
                self._on_press(event.t, out)
            elif event.running == on_move:
                node.pressed = False
        self._check_flags(event, out)

    def _on_press(self, t: float, out: list[DomainEvent]) -> None:
        node = self._game.node
        assert node is not None
        if self._state.phase is Phase.RESUMING:
            return
        key = self._key()
        self._state.enter(Trigger.PRESS)
        if key != node.key and self._commit_if_move(t, key, out, by_press=True):
            return
        self._arm(t)

    def _check_flags(self, event: ClockReport, out: list[DomainEvent]) -> None:
        """6.9, 6.11: a flag fallen (``daemon.rules.flags`` rules on it), once a game,
        or again once both clocks show the next period's time."""
        game = self._game
        if game.flags_may_fall_again and not event.flags and min(event.white, event.black) > 0:
            # the next period's time is on both clocks: a flag may fall again there
            game.flags_may_fall_again = game.flag_reported = False
        if game.flag_reported or not self._state.in_game or game.node is None:
            return
        fallen = fallen_flags(event)
        if not fallen:
            return
        game.flag_reported = True
        ruling = flag_ruling(event.t, fallen, game.node.board, self.settings.time_control)
        out.append(ruling.event)
        if ruling.end is not None:
            self._end(event.t, *ruling.end, out)
        if ruling.may_fall_again:
            game.flags_may_fall_again = True

    # ------------------------------------------------------------------ requests

    def _on_request(self, event: Request, out: list[DomainEvent]) -> None:
        t, args = event.t, event.args
        try:
            match event.action:
                case "new_game" | "set_position":
                    fen = args.get("fen", chess.STARTING_FEN)
                    if event.action == "set_position" and "fen" not in args:
                        raise ValueError("set_position needs args.fen")
                    board = self._new_board(fen, args.get("chess960"))
                    raw = bytes(self._view.raw)
                    target = key_from_placement(board.board_fen())
                    flipped = self._view.flipped
                    if raw == target:
                        flipped = False
                    elif turned(raw) == target:
                        flipped = True
                    self._start_game(t, board, flipped, out, chess960=board.chess960)
                    # _start_game has just made the game's first node.
                    if self._key() != self._game.node.key:  # type: ignore[union-attr]
                        self._orientation_open = True
                        self._arm(t)
                case "takeback":
                    self._explicit_takeback(t, out)
                case "accept_position":
                    self._accept_position(t, out)
                case "correct_last_move":
                    self._correct_last_move(t, str(args.get("uci", "")), out)
                case "penalty":
                    to = args.get("to")
                    if to not in ("white", "black"):
                        raise ValueError("penalty needs args.to: 'white' or 'black'")
                    seconds = float(args.get("seconds", 120))
                    article = str(args.get("article", self._laws.penalty_article))
                    out.append(Penalty(t, to, seconds, article, clock=self._clock_dict()))
                case "result":
                    result = args.get("result")
                    if result not in ("1-0", "0-1", "1/2-1/2"):
                        raise ValueError("result needs args.result: 1-0, 0-1 or 1/2-1/2")
                    self._end(t, result, "arbiter", out)
                case "say":
                    out.append(info_request(t, args))
                case "players":
                    out.append(players(t, args))
                case action if action in corrections.ACTIONS:
                    corrections.apply(self, event, out)
                case _:
                    out.append(Notice(t, "unknown_request", f"unknown request {event.action!r}"))
        except (ValueError, TypeError) as error:
            out.append(Notice(t, "bad_request", f"{event.action}: {error}"))

    def _explicit_takeback(self, t: float, out: list[DomainEvent]) -> None:
        node = self._game.node
        if node is None or node.parent is None:
            out.append(Notice(t, "bad_request", "takeback: no move to take back"))
            return
        self._game.repetitions[node.identity()] -= 1
        parent = node.parent
        out.append(Takeback(t, node.ply, parent.board.fen()))
        self._set_current(parent)
        self._game.blocked_key = node.key
        if self._key() != parent.key:
            self._arm(t)

    def _accept_position(self, t: float, out: list[DomainEvent]) -> None:
        node = self._game.node
        if node is None:
            raise ValueError("accept_position: no game")
        board = chess.Board(None, chess960=self._chess960)
        board.set_board_fen(placement_from_key(self._key()))
        board.turn = node.turn
        board.castling_rights = node.board.castling_rights
        board.castling_rights = board.clean_castling_rights()
        board.fullmove_number = node.board.fullmove_number
        if not board.is_valid():
            raise ValueError(f"the board shows no valid position ({board.status()!r})")
        root = Node.root(board, ply=node.ply)
        self._set_current(root)
        self._game.repetitions = Counter({root.identity(): 1})
        out.append(PositionRestored(t, board.fen(), accepted=True))

    def _correct_last_move(self, t: float, uci: str, out: list[DomainEvent]) -> None:
        node = self._game.node
        if node is None or node.parent is None:
            raise ValueError("correct_last_move: no move to correct")
        move = node.parent.board.parse_uci(uci)
        self._game.repetitions[node.identity()] -= 1
        self._game.node = node.parent
        self._commit(t, move, out, settled=False, correction=True, touch_check=False)
