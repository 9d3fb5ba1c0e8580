"""The tree of positions reached in a game.

A node is a position as the Laws compare positions (9.2): the pieces on their
squares, the side to move, the castling and en-passant rights. Its children are
all the positions one legal move away, keyed by placement, computed once on
first use and cached, so matching what the board shows costs a dict lookup.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import chess

from daemon.rules.placement import child_key, key_from_board


@dataclass(slots=True)
class Lift:
    """A piece lifted from the square it stands on in the node's position (4.3 touch)."""

    square: int
    piece: str  # FEN letter


@dataclass(eq=False, slots=True)
class Node:
    board: chess.Board  # without move stack; the position itself
    key: bytes
    ply: int
    parent: Node | None = None
    move: chess.Move | None = None  # the move from parent to here
    settled: bool = False  # committed by the settle time (no clock press): may be corrected
    lifts: list[Lift] = field(default_factory=list)  # first lifts while this node is current
    pressed: bool = False  # the player on move has already pressed his clock in this node
    _children: dict[bytes, chess.Move] | None = None

    @classmethod
    def root(cls, board: chess.Board, ply: int = 0) -> Node:
        root_board = board.copy(stack=False)
        return cls(root_board, key_from_board(root_board), ply)

    @property
    def turn(self) -> chess.Color:
        return self.board.turn

    def children(self) -> dict[bytes, chess.Move]:
        """Placement after each legal move -> that move (cached)."""
        if self._children is None:
            board, key = self.board, self.key
            self._children = {child_key(key, board, m): m for m in board.legal_moves}
        return self._children

    def child(self, move: chess.Move) -> Node:
        board = self.board.copy(stack=False)
        key = child_key(self.key, board, move)
        board.push(move)
        return Node(board, key, self.ply + 1, parent=self, move=move)

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
