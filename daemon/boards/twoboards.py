"""Two e-boards bound to one game, for a blind player (Laws, Appendix E.1, E.2.7).

A blind player may demand a board of his own: the sighted player moves on one board,
the blind player on the other, and each repeats the opponent's move on his own. This
module decides, without any I/O or clock of its own (time is an argument):

- **where the moves are read**: on the board of the player to move (``own_side`` of
  each board). Only that board's sensor events reach the game's rules core, so an
  illegal move, a touch-move or any other irregularity is judged on the board where
  the move is made; the other board is only watched. The core is handed over to the
  other board once that board shows the game's position (the opponent's move has
  been repeated on it), with a dump of it, so the hand-over is never itself a move;
  or once it shows that position with one legal move of its player made on it: a
  board seen again only after that move (the daemon restarted, or the board away
  while its player repeated and replied) is read there, where the move was made,
  not watched as a board that lags until the other player repeats it (issue 29).
- **whether the boards agree**: a board that is not the mover's and does not show the
  game's position is repeating a move. Once that has lasted ``diverge_after``
  seconds (longer than a repetition takes) it is reported: a ``boards_diverged``
  irregularity (E.2.7) per board that must be corrected, with the squares the boards
  differ on and, for that board's player, what to put where on *his* board; and
  ``boards_agree`` when both show the game's position again.

The shell (``daemon.app.Daemon``) routes each board's sensor events through ``sensor()``,
gives the core's decisions to ``game_event()`` and calls ``tick()`` at
``next_deadline()``.
"""

from __future__ import annotations

import chess

from daemon.game.events import (
    BoardsAgree,
    Colour,
    DomainEvent,
    GameResumed,
    GameStart,
    Irregularity,
    Move,
    PositionRestored,
    Takeback,
)
from drivers.sensors import (
    BoardDump,
    BoardHeard,
    ButtonPress,
    ClockReading,
    ClockReport,
    ConnectionChange,
    MagicPiece,
    SensorEvent,
    SquareChange,
)

ARTICLE = "E.2.7"


class TwoBoardGame:
    """One game on two boards. ``owners`` maps each colour to the id of the board
    that player moves on; ``clock_board`` is the board the clock is plugged into
    (its clock events reach the core whichever board is read)."""

    def __init__(
        self,
        owners: dict[Colour, str],
        *,
        diverge_after: float = 15.0,
        clock_board: str | None = None,
    ) -> None:
        if set(owners) != {"white", "black"} or owners["white"] == owners["black"]:
            raise ValueError("a two-board game needs one board per colour")
        self.owners = owners
        self.diverge_after = diverge_after
        self.clock_board = clock_board or owners["white"]
        self.boards = (owners["white"], owners["black"])
        start = chess.Board()
        self.game = start  # the game's position with the side to move (its legal moves)
        self.position: chess.BaseBoard = chess.BaseBoard(start.board_fen())
        self.to_move: Colour = "white"
        self.placements: dict[str, chess.BaseBoard] = {
            b: chess.BaseBoard(start.board_fen()) for b in self.boards
        }
        self.source = owners["white"]  # the board whose events reach the core
        self._since: float | None = None  # when a watched board began to lag
        self._reported = False

    # -- in --------------------------------------------------------------------------

    def sensor(self, board_id: str, event: SensorEvent) -> list[SensorEvent]:
        """A board's sensor event; what the game's rules core is to be fed."""
        if board_id not in self.placements:
            return []
        if isinstance(event, ClockReading | ClockReport | ButtonPress):
            return [event] if board_id == self.clock_board else []
        if isinstance(event, ConnectionChange | BoardHeard):
            return [event] if board_id == self.source else []
        self._apply(board_id, event)
        if board_id == self.source:
            return [event]
        return self._hand_over(event.t)

    def game_event(self, event: DomainEvent) -> list[SensorEvent]:
        """A decision of the game's core: the game's position moved on. Returns a
        hand-over dump when the next mover's board already shows it."""
        match event:
            case GameStart(fen=fen, chess960=chess960):
                pass
            case (
                Move(fen=fen) | Takeback(fen=fen) | PositionRestored(fen=fen) | GameResumed(fen=fen)
            ):
                chess960 = False  # only the board and the side to move are read
            case _:
                return []
        if not fen:
            return []
        board = chess.Board(fen, chess960=chess960)
        self.game = board
        self.position = chess.BaseBoard(board.board_fen())
        self.to_move = "white" if board.turn == chess.WHITE else "black"
        return self._hand_over(event.t)

    # -- time ------------------------------------------------------------------------

    def next_deadline(self) -> float | None:
        if self._since is None or self._reported:
            return None
        return self._since + self.diverge_after

    def tick(self, t: float) -> list[DomainEvent]:
        """The boards' agreement at time ``t``: ``boards_diverged`` once a watched
        board has lagged ``diverge_after``, ``boards_agree`` when it caught up."""
        lagging = self._lagging()
        if not lagging:
            self._since = None
            if self._reported:
                self._reported = False
                return [BoardsAgree(t, list(self.boards))]
            return []
        if self._since is None:
            self._since = t
        if self._reported or t < self._since + self.diverge_after:
            return []
        self._reported = True
        squares = _differing(self.placements[self.boards[0]], self.placements[self.boards[1]])
        return [
            Irregularity(
                t,
                kind="boards_diverged",
                article=ARTICLE,
                by=self.owner_of(board_id),
                squares=squares or _differing(self.placements[board_id], self.position),
                restore=self.fixes(board_id),
                detail=f"board {board_id}",
            )
            for board_id in lagging
        ]

    # -- what is where -----------------------------------------------------------------

    @property
    def diverged(self) -> bool:
        """A ``boards_diverged`` is standing (the page's marker)."""
        return self._reported

    def fixes(self, board_id: str) -> list[dict[str, str | None]]:
        """What board ``board_id``'s player must set where to show the game's position:
        the pieces to put first, then the squares to clear."""
        placement = self.placements[board_id]
        wrong = [s for s in chess.SQUARES if placement.piece_at(s) != self.position.piece_at(s)]
        put = [s for s in wrong if self.position.piece_at(s) is not None]
        clear = [s for s in wrong if self.position.piece_at(s) is None]
        return [
            {
                "square": chess.square_name(s),
                "piece": (piece.symbol() if (piece := self.position.piece_at(s)) else None),
            }
            for s in put + clear
        ]

    def _lagging(self) -> list[str]:
        """The watched boards that do not show the game's position."""
        return [b for b in self.boards if b != self.source and self.placements[b] != self.position]

    def owner_of(self, board_id: str) -> Colour:
        """Whose board ``board_id`` is."""
        return "white" if self.owners["white"] == board_id else "black"

    def _hand_over(self, t: float) -> list[SensorEvent]:
        """The mover's board reads the game once it shows the position, or the
        position with his move made on it (the core then decides that move)."""
        mover = self.owners[self.to_move]
        if mover == self.source:
            return []
        placement = self.placements[mover]
        if placement != self.position and not self._one_move_on(placement):
            return []
        self.source = mover
        return [BoardDump(t, placement.board_fen())]

    def _one_move_on(self, placement: chess.BaseBoard) -> bool:
        """``placement`` is the game's position after one legal move of the side to
        move."""
        shown = placement.board_fen()
        board = self.game.copy(stack=False)
        for move in board.legal_moves:
            board.push(move)
            after = board.board_fen()
            board.pop()
            if after == shown:
                return True
        return False

    def _apply(self, board_id: str, event: SensorEvent) -> None:
        placement = self.placements[board_id]
        if isinstance(event, BoardDump):
            self.placements[board_id] = chess.BaseBoard(event.placement)
        elif isinstance(event, SquareChange):
            square = chess.parse_square(event.square)
            if event.piece is None:
                placement.remove_piece_at(square)
            else:
                placement.set_piece_at(square, chess.Piece.from_symbol(event.piece))
        elif isinstance(event, MagicPiece):
            placement.remove_piece_at(chess.parse_square(event.square))


def _differing(a: chess.BaseBoard, b: chess.BaseBoard) -> list[str]:
    return [chess.square_name(s) for s in chess.SQUARES if a.piece_at(s) != b.piece_at(s)]
