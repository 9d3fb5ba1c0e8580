"""Requests and corrections: what the players and the arbiter ask of the game.

A ``Request`` sensor event (the web controls, the arbiter's console, a clock button's
question) is carried out here (``Requests._on_request``): a new game or a position
set, a takeback, the position on the board accepted, the last move corrected, a
penalty, a result, a player's question, the players' names, and the arbiter's
corrections of the record, checked by ``daemon.rules.corrections`` and played through
the core's own steps (its commits, its takeback, its game start), so what follows a
correction (the board to be put right, a game that ends) is decided as for any move.

A bad request raises ``ValueError`` with what was wrong, before anything changes; it
becomes a ``bad_request`` notice. ``players`` and ``info_request`` are pure: they check
their arguments and return the event.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import chess

from daemon.game.events import (
    DomainEvent,
    InfoRequest,
    Move,
    MovesRecovered,
    Notice,
    Penalty,
    Players,
    PositionRestored,
    Takeback,
)
from daemon.rules.corrections import (
    ACTIONS,
    AddedGame,
    CorrectionError,
    Plan,
    plan,
    position_from,
    read_game,
)
from daemon.rules.placement import key_from_placement, placement_from_key, turned
from daemon.rules.resuming import Resuming
from daemon.rules.state import Phase, Trigger
from daemon.rules.tree import Node
from drivers.sensors import Request

#: What a player may ask for (Appendix E.2.9d), by a clock button or the web "say" control;
#: and "silence": the arbiter stops what is being said (the speech part does).
INFO_REQUESTS = ("last", "moves", "clock", "move_number", "board", "square", "piece", "silence")


def players(t: float, args: dict) -> Players:
    """The arbiter's names for the game (the console's "players"): passed on as they
    are, an empty name read as unknown ("?", as PGN writes it); not judged, only
    carried through the feed so that the journal and every display hold them."""
    if not args or any(key not in ("white", "black", "round") for key in args):
        raise ValueError("players needs white, black or round, and nothing else")
    if any(not isinstance(value, str) for value in args.values()):
        raise ValueError("players: names and round are text")
    named = {key: (value.strip() or "?") for key, value in args.items()}
    return Players(t, **named)


def info_request(t: float, args: dict) -> InfoRequest:
    """The web "say" control: the same question a clock button asks (E.2.9d), with
    who asks (``by``: his earphone answers) and where (``to``: "page", his phone).

    Checked here, so the answer never goes wrong on a square or piece that
    cannot be: a bad one is a ``bad_request`` notice, not a spoken muddle.
    """
    what = args.get("what")
    if what not in INFO_REQUESTS:
        raise ValueError(f"say needs args.what: one of {', '.join(INFO_REQUESTS)}")
    by = args.get("by")
    if by not in (None, "white", "black"):
        raise ValueError("say: args.by is 'white' or 'black', who asks")
    to = args.get("to") or ""
    if to not in ("", "page"):
        raise ValueError("say: args.to is 'page' (his phone's page) or left out")
    extra = {key: value for key, value in args.items() if key not in ("what", "by", "to")}
    if what == "square" or "square" in extra:
        square = str(extra.get("square", "")).lower()
        if square not in chess.SQUARE_NAMES:
            raise ValueError(f"say {what} needs args.square, a square such as e4")
        extra["square"] = square
    if what == "piece" or "piece" in extra:
        piece = extra.get("piece")
        if not (isinstance(piece, str) and len(piece) == 1 and piece in "KQRBNPkqrbnp"):
            raise ValueError(f"say {what} needs args.piece, a FEN letter such as N or p")
    return InfoRequest(t, what, extra, by=by, to=to)


class Requests(Resuming):
    """What the players and the arbiter ask of the game, carried out."""

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
                        self._view.orientation_open = True
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
                case action if action in ACTIONS:
                    self._correct(event, out)
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
        board = chess.Board(None, chess960=self._game.chess960)
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

    def _correct(self, request: Request, out: list[DomainEvent]) -> None:
        """Carry out one of the arbiter's corrections (``daemon.rules.corrections``);
        ``ValueError`` (nothing changed) when it cannot be done. A preview changes
        nothing here: the display answers it."""
        args, t = request.args, request.t
        if not isinstance(args, dict):
            raise CorrectionError("the request's args are an object")
        if args.get("preview"):
            return
        if request.action == "add_game":
            self._add_game(t, read_game(args.get("pgn")), out)
            return
        if request.action == "position_from_board":
            self._position_from_board(t, args, out)
            return
        node = self._game.node
        if node is None:
            raise CorrectionError("no game is being played")
        root = node
        while root.parent is not None:
            root = root.parent
        change = plan(request.action, args, root.board, node.line(), base=root.ply)
        resume_flipped = None
        if request.action == "choose_line":
            resume_flipped = self._line_reaches_board(node, change)
        self._carry_out(t, change, out, resume_flipped)
        if request.action == "choose_line":
            ucis = [move.uci() for move in change.moves]
            out.append(MovesRecovered(t, ucis, change.line, "arbiter"))

    def _line_reaches_board(self, node: Node, change: Plan) -> bool | None:
        """``choose_line``: the line must end in the position the board shows (that is
        what made it one of the lines offered). Returns the orientation that shows it
        when the game waits for the board after a restart (None otherwise)."""
        end = node
        for move in change.moves:
            end = end.child(move)
        if not self._view.known:
            raise CorrectionError("the board has not been read yet")
        raw = bytes(self._view.raw)
        if self.resuming:
            for flipped in (self._view.flipped, not self._view.flipped):
                if (turned(raw) if flipped else raw) == end.key:
                    return flipped
        elif self._key() == end.key:
            return None
        raise CorrectionError(
            f"{change.line} does not lead to the position the board shows "
            f"({placement_from_key(self._key())}); enter_moves plays moves whatever the board shows"
        )

    def _carry_out(
        self, t: float, change: Plan, out: list[DomainEvent], resume_flipped: bool | None
    ) -> None:
        """Rewind the core's game to ``change.keep`` and play ``change.moves`` there, as
        its own commits (no touch judged: the arbiter says what was played)."""
        node = self._game.node
        assert node is not None
        was_over = self._state.phase is Phase.OVER
        if resume_flipped is not None:
            self._end_resume(t, resume_flipped, out)
        target = node
        while target.ply > change.keep:
            assert target.parent is not None
            self._game.repetitions[target.identity()] -= 1
            target = target.parent
        if target is not node:
            self._set_current(target)
            if change.action == "takeback_to":
                out.append(Takeback(t, change.keep + 1, target.board.fen()))
        correction = change.action == "correct_move"
        entered = change.action in ("enter_moves", "choose_line")
        clocks = self._clocks_at_presses(change) if entered else []
        for index, move in enumerate(change.moves):
            first = len(out)
            self._commit(
                t,
                move,
                out,
                settled=False,
                correction=correction,
                touch_check=False,
                entered=entered,
                entered_clock=clocks[index] if index < len(clocks) else None,
            )
            if correction:  # a move replayed keeps the clock of its completion (the record's)
                out[first:] = [
                    replace(event, clock=None) if isinstance(event, Move) else event
                    for event in out[first:]
                ]
        self._reach.outage = None  # the arbiter said what was played meanwhile
        now = self._game.node
        assert now is not None
        key = self._key()
        if self.resuming:
            self._check_resume(t, out)
        elif key != now.key:
            self._game.blocked_key = key  # the board still shows the old game: no move of it
            self._arm(t)  # the board must be put right: its settle time decides
        else:
            self._deadline = None
        if was_over and change.action != "takeback_to" and self._state.phase is not Phase.OVER:
            self._state.enter(Trigger.END)  # the game had ended: corrected, it stays ended
            self._deadline = None

    def _clocks_at_presses(self, change: Plan) -> list[dict[str, float]]:
        """The clock at each move the arbiter types in, as known: the clock presses seen
        since the last move the board gave, one per ply in order, for as long as each
        press started the clock of the side that did not just move (a press out of turn
        and every later one are no time of those moves: they get none)."""
        node = self._game.node
        if node is None or change.keep != node.ply:
            return []  # the game was taken back first: the presses are not of these plies
        clocks: list[dict[str, float]] = []
        position = node.board.copy(stack=False)
        presses = list(self._game.presses)
        for move, (_, clock, running) in zip(change.moves, presses, strict=False):
            mover = "white" if position.turn == chess.WHITE else "black"
            if running == mover:
                break
            clocks.append(dict(clock))
            position.push(move)
        return clocks

    def _position_from_board(self, t: float, args: dict[str, Any], out: list[DomainEvent]) -> None:
        """The board as it stands becomes the start of the game from here (a FEN game):
        ``set_position`` with the board's own position."""
        if not self._view.known:
            raise CorrectionError("the board has not been read yet")
        node = self._game.node
        like = node.board if node is not None and self._state.phase is not Phase.NO_GAME else None
        board = position_from(
            placement_from_key(self._key()),
            args.get("turn"),
            args.get("castling"),
            like,
            self._game.chess960,
        )
        self._start_game(t, board, self._view.flipped, out, chess960=board.chess960)

    def _add_game(self, t: float, game: AddedGame, out: list[DomainEvent]) -> None:
        """A complete game: started, its names, its moves, its result, in the feed as
        a game played on the board would be (the journal's PGN, the page, MQTT, lichess)."""
        self._start_game(
            t, game.board.copy(), self._view.flipped, out, chess960=game.board.chess960
        )
        if game.players:
            out.append(Players(t, **game.players))
        for move in game.moves:  # a game typed in: no time is known for its moves
            self._commit(t, move, out, settled=False, touch_check=False, entered=True)
        node = self._game.node
        assert node is not None  # _start_game made the game's first node
        if self._state.phase is not Phase.OVER and game.result:
            self._end(t, game.result, "arbiter", out)
        elif self._state.phase is not Phase.OVER and self._key() != node.key:
            self._arm(t)  # a game that goes on: the board must show its position
