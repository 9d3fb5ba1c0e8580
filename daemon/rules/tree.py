"""The tree of positions reached in a game.

A node is a position as the Laws compare positions (9.2): the pieces on their
squares, the side to move, the castling and en-passant rights. Its children are
all the positions one legal move away, keyed by placement, computed once on
first use and cached, so matching what the board shows costs a dict lookup.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import chess

from daemon.rules.boards import KingGuard, board_after, insufficient_material
from daemon.rules.placement import (
    EMPTY,
    child_key,
    differing_squares,
    key_from_board,
    placement_rows,
    rank_row,
)
from drivers.records import FrozenRecord, Shown

_WHITE = frozenset(b"PNBRQK")
_BLACK = frozenset(b"pnbrqk")
_KING_OR_ROOK = frozenset(b"KkRr")
_PAWNS = frozenset(b"Pp")
_PROMOTIONS = {ord(letter): chess.PIECE_SYMBOLS.index(letter.lower()) for letter in "NBRQnbrq"}


@dataclass(eq=False, repr=False, slots=True, init=False)
class Lift(FrozenRecord):
    """A piece lifted from a square (4.3: lifted = touched, Appendix E.2.2)."""

    t: float
    square: int
    piece: str  # FEN letter
    #: when the same piece stood on the same square again (the earliest it may have:
    #: a polled board's read comes later)
    returned: float | None = None
    #: a polled board's lift: made after this (its previous read), at ``t`` or before
    since: float | None = None

    @property
    def earliest(self) -> float:
        """The earliest it may have been lifted (``t`` when the board says when)."""
        return self.t if self.since is None else min(self.t, self.since)

    def __init__(
        self,
        t: float,
        square: int,
        piece: str,
        returned: float | None = None,
        since: float | None = None,
    ):
        """Set once, as the generated ``__init__`` would, without ``FrozenRecord``'s
        checked ``__setattr__`` per field: a lift is made on every lift and every
        return of a piece, the core's most frequent record (issue 28)."""
        set_field = object.__setattr__
        set_field(self, "t", t)
        set_field(self, "square", square)
        set_field(self, "piece", piece)
        set_field(self, "returned", returned)
        set_field(self, "since", since)


@dataclass(eq=False, repr=False, slots=True)
class Node(Shown):
    board: chess.Board  # without move stack; the position itself
    key: bytes
    ply: int
    parent: Node | None = None
    move: chess.Move | None = None  # the move from parent to here
    #: until when the move into this node may still be corrected by the same hand:
    #: a short window when decided on the settle time (if the opponent touches
    #: nothing), one settle time when completed by a press, never otherwise
    correctable_until: float | None = None
    seen_at: float | None = None  # when the board first showed it: touches count from here
    current_at: float = 0.0  # when it became the game's position (the move into it decided)
    pressed: bool = False  # the player on move has already pressed his clock in this node
    pressed_at: float | None = None  # when the press completed the move into this node
    _children: dict[bytes, chess.Move] | None = None
    _matches: dict[bytes, chess.Move | None] = field(default_factory=dict)
    _legal: dict[bytes, chess.Move] | None = None
    _any_legal: bool | None = None  # has_legal_move's answer: asked by SAN, the end, is_over
    _guard: KingGuard | None = None  # the king, its checkers and pinned pieces (``guard``)
    _rows: list[str] | None = None  # the FEN's placement rows, once made (``placement``)

    @classmethod
    def root(cls, board: chess.Board, ply: int = 0) -> Node:
        root_board = board.copy(stack=False)
        return cls(root_board, key_from_board(root_board), ply)

    @property
    def turn(self) -> chess.Color:
        return self.board.turn

    def children(self) -> dict[bytes, chess.Move]:
        """Placement after each pseudo-legal move -> that move (cached).

        Pseudo-legal, because a full legality test of every move costs more than
        everything else the core does; ``match`` tests the one move found.
        """
        if self._children is None:
            board, key = self.board, self.key
            self._children = {
                child_key(key, board, m): m for m in board.generate_pseudo_legal_moves()
            }
        return self._children

    def guard(self) -> KingGuard:
        """The king's position, read once: every legality question of this node starts
        from it (the move matched, check, a legal move left)."""
        guard = self._guard
        if guard is None:
            guard = self._guard = KingGuard(self.board, self.key)
        return guard

    def is_check(self) -> bool:
        """``board.is_check()``, from the node's ``guard``."""
        return bool(self.guard().checkers)

    def match(self, key: bytes) -> chess.Move | None:
        """The legal move that leads to this placement, if there is one.

        Called on every board change, so it generates only the moves of the
        pieces that left their squares, and remembers the answer per placement.
        A piece taken from one square to another (a capture, a promotion) is read
        off the two squares and tested alone, with no move generated (issue 28).
        """
        matches = self._matches
        if key in matches:
            return matches[key]
        before = self.key
        changed = differing_squares(before, key)
        if len(changed) == 2:
            found = self._one_piece_moved(changed, key)
            if found is not False:
                if len(matches) < 4096:
                    matches[key] = found
                return found
        elif not 3 <= len(changed) <= 4:  # a lift, or no one move: most board changes
            if len(matches) < 4096:
                matches[key] = None
            return None
        found = self._generated_match(changed, key)
        if len(matches) < 4096:
            matches[key] = found
        return found

    def _one_piece_moved(
        self, changed: list[int], key: bytes
    ) -> chess.Move | Literal[False] | None:
        """Two squares changed: one of the mover's pieces left one for the other (the
        piece the same, or a pawn's promotion). The move it is, or None when it is no
        legal move; False: another shape (castling, en passant, a move its piece cannot
        make), which ``_generated_match`` reads.

        Every legal move empties a square of the mover's and sets one of his pieces
        down, so two squares changed otherwise (two pieces lifted, an opposing piece
        moved) are no move. And no other legal move leaves the same placement as the
        plain move read here: a Chess960 castling that changes two squares moves the
        king two squares or more, or the rook across the king (no rook move does).
        """
        board, before = self.board, self.key
        first, second = changed
        if key[first] == EMPTY:
            left, to = first, second
        elif key[second] == EMPTY:
            left, to = second, first
        else:
            return False
        piece, placed, there = before[left], key[to], before[to]
        white = board.turn == chess.WHITE
        own = _WHITE if white else _BLACK
        if piece not in own or placed not in own:
            return None
        if there in own:
            return False
        if piece in _PAWNS:
            if to == board.ep_square:
                return False  # en passant's pawn, its victim not yet taken off
            promotion = _PROMOTIONS.get(placed) if placed != piece else None
            if (promotion is None) == (to >> 3 in (0, 7)) or not (placed == piece or promotion):
                return False  # a pawn on the last rank must promote, and only there
            if not _pawn_can(board, left, to, white, there == EMPTY, before):
                return False
            move = chess.Move(left, to, promotion)
        elif placed != piece or not board.attacks_mask(left) & chess.BB_SQUARES[to]:
            return False  # not where that piece goes (a Chess960 castling's rook, perhaps)
        else:
            move = chess.Move(left, to)
        return move if self.guard().keeps_king_safe(board, move) else None

    def _generated_match(self, changed: list[int], key: bytes) -> chess.Move | None:
        """The legal move to ``key`` among those generated for the changed squares."""
        before, board = self.key, self.board
        turn_letters = _WHITE if board.turn == chess.WHITE else _BLACK
        mask = 0
        to_mask = 0
        castling_piece = False
        for square in changed:
            to_mask |= 1 << square
            if before[square] in turn_letters:
                mask |= 1 << square
                castling_piece = castling_piece or before[square] in _KING_OR_ROOK
        if not mask:
            return None
        if castling_piece:
            mask |= board.kings & board.occupied_co[board.turn]
            # a Chess960 castling is king-takes-rook, and the rook can stay put
            to_mask |= board.rooks & board.occupied_co[board.turn]
        guard = self.guard()
        # any other move changes its target square: only those moves can match
        for move in board.generate_pseudo_legal_moves(from_mask=mask, to_mask=to_mask):
            # pseudo-legal already: only the king's safety is left to test
            if child_key(before, board, move) == key and guard.keeps_king_safe(board, move):
                return move
        return None

    def legal_moves(self, from_mask: int = chess.BB_ALL) -> Iterator[chess.Move]:
        """``board.generate_legal_moves(from_mask)``, from the node's ``guard``."""
        return self.guard().legal_moves(self.board, from_mask)

    def legal_children(self) -> dict[bytes, chess.Move]:
        """Placement after each legal move -> that move (cached)."""
        if self._legal is None:
            board, guard = self.board, self.guard()
            # children() holds pseudo-legal moves: is_legal would generate each again
            self._legal = {
                k: m for k, m in self.children().items() if guard.keeps_king_safe(board, m)
            }
        return self._legal

    def has_legal_move(self) -> bool:
        """Cached: a node's board never changes, and each commit asks it two or three times."""
        if self._any_legal is None:
            self._any_legal = self.guard().any_legal_move(self.board)
        return self._any_legal

    def child(self, move: chess.Move) -> Node:
        """The position after ``move`` (its board made by ``daemon.rules.boards``)."""
        board, key = self.board, self.key
        return Node(
            board_after(board, key, move), child_key(key, board, move), self.ply + 1, self, move
        )

    def fen(self) -> str:
        """The FEN, built from the key (python-chess's own is slow on the hot path)."""
        board = self.board
        # has_legal_en_passant() means ep_square is set; mypy cannot know that.
        ep = chess.square_name(board.ep_square) if board.has_legal_en_passant() else "-"  # type: ignore[arg-type]
        return (
            f"{self.placement()} {'w' if board.turn else 'b'} "
            f"{_castling_field(board)} {ep} {board.halfmove_clock} {board.fullmove_number}"
        )

    def placement(self) -> str:
        """The FEN's placement field. A move changes the rows of its from and to squares
        only (en passant's victim and castling's rook stand on one of them): the other
        six are the parent's, when it has made its own (each move's FEN: issue 28)."""
        rows = self._rows
        if rows is None:
            parent, move = self.parent, self.move
            if parent is not None and move is not None and parent._rows is not None:
                rows = parent._rows.copy()
                for rank in {move.from_square >> 3, move.to_square >> 3}:
                    rows[7 - rank] = rank_row(self.key, rank)
            else:
                rows = placement_rows(self.key)
            self._rows = rows
        return "/".join(rows)

    def is_over(self) -> bool:
        """Checkmate, stalemate or a dead position (5.1a, 5.2a, 5.2b)."""
        return not self.has_legal_move() or insufficient_material(self.board)

    def identity(self) -> tuple:
        """What makes two positions "the same" for repetition (9.2)."""
        board = self.board
        ep = board.ep_square if board.has_legal_en_passant() else None
        return (self.key, board.turn, board.clean_castling_rights(), ep)

    def ancestors(self):
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def line(self) -> list[chess.Move]:
        moves = []
        node: Node | None = self
        while node is not None and node.move is not None:
            moves.append(node.move)
            node = node.parent
        return moves[::-1]


def _pawn_can(
    board: chess.Board, frm: int, to: int, white: bool, onto_empty: bool, key: bytes
) -> bool:
    """A pawn of the side to move may go from ``frm`` to ``to`` as python-chess generates
    pawn moves (en passant aside): one square forward onto an empty one, two from where
    the second lands on the fourth rank (the fifth for Black), or a capture forward on
    the diagonal."""
    if not onto_empty:
        return bool(chess.BB_PAWN_ATTACKS[white][frm] & chess.BB_SQUARES[to])
    forward = 8 if white else -8
    if to - frm == forward:
        return True
    return (
        to - frm == 2 * forward
        and key[frm + forward] == EMPTY
        and to >> 3 in ((2, 3) if white else (4, 5))
    )


#: ``castling_xfen``'s answers by what it reads (the rights, the kings, the rooks on the
#: back ranks): while rights are left, most moves leave all of them as they were
_CASTLING_FIELDS: dict[tuple[int, ...], str] = {}


def _castling_field(board: chess.Board) -> str:
    """The FEN's castling field: python-chess's ``castling_xfen``, asked only when some
    right is left (it reads each rook; most of a long game has none: issue 28), and
    once for each arrangement of the kings and back-rank rooks with those rights."""
    rights = board.clean_castling_rights()
    if not rights:
        return "-"
    white, black = board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK]
    kings, rooks = board.kings & ~board.promoted, board.rooks & chess.BB_BACKRANKS
    asked = (rights, kings & white, kings & black, rooks & white, rooks & black)
    field = _CASTLING_FIELDS.get(asked)
    if field is None:
        if len(_CASTLING_FIELDS) >= 256:
            _CASTLING_FIELDS.clear()
        field = _CASTLING_FIELDS[asked] = board.castling_xfen()
    return field
