"""A position one move on, and a position's king safety, without python-chess's long way.

Every position the board shows that is a legal move becomes a node of the tree
(``daemon.rules.tree``), with a python-chess board of its own. python-chess makes one
with ``copy`` (a new board through ``__init__``, then every field set) and ``push``
(which also keeps the undo record, normalises the move twice and asks each square's
piece of the bitboards): half of what the rules core did per move (issue 28). Here the
board after the move is built from the parent's fields and the move's squares, read
off the parent's placement key; it is the same board in every field, ``move_stack`` and
the undo record included (``tests/rules/test_rules_boards.py`` compares every field
with ``copy`` and ``push`` for every legal move of thousands of positions).

``KingGuard`` is what every legality question of one position starts from (the king,
the pieces giving check, the pieces pinned to the king): python-chess works it out
again for each move tested, each ``is_check`` and each legal-move generation; a node
asks for it once.
"""

from __future__ import annotations

from collections.abc import Iterator

import chess

_LETTER_TYPES = {
    ord(letter): chess.PIECE_SYMBOLS.index(letter.lower()) for letter in "PNBRQKpnbrqk"
}
#: the board's bitboard field for each piece type
_FIELDS = ("", "pawns", "knights", "bishops", "rooks", "queens", "kings")
_RANK_1_CLEARED = ~chess.BB_RANK_1
_RANK_8_CLEARED = ~chess.BB_RANK_8
#: the squares the king and the rook castle to: by colour (white True), then side (h-side True)
_CASTLED = {
    (True, True): (chess.G1, chess.F1),
    (True, False): (chess.C1, chess.D1),
    (False, True): (chess.G8, chess.F8),
    (False, False): (chess.C8, chess.D8),
}
#: the board's fields ``board_after`` makes; any other field is copied as it is, so a
#: python-chess that added a mutable one would share it (the test names them all)
BOARD_FIELDS = frozenset(
    {
        "occupied_co", "pawns", "knights", "bishops", "rooks", "queens", "kings", "promoted",
        "occupied", "chess960", "ep_square", "move_stack", "_stack", "turn", "castling_rights",
        "halfmove_clock", "fullmove_number",
    }
)  # fmt: skip


def board_after(board: chess.Board, key: bytes, move: chess.Move) -> chess.Board:
    """``board`` with ``move`` pushed onto a copy without its stack: what
    ``board.copy(stack=False)`` then ``push(move)`` give, field for field.

    ``key`` is ``board``'s placement key; ``move`` a pseudo-legal move, as python-chess
    generates it (castling as king to its square in standard chess, as king takes rook
    in Chess960)."""
    fields = board.__dict__.copy()  # every field an int, a bool or None, but three lists
    turn = board.turn
    own, other = board.occupied_co[turn], board.occupied_co[not turn]
    frm, to = move.from_square, move.to_square
    from_bb = chess.BB_SQUARES[frm]
    piece = _LETTER_TYPES[key[frm]]
    promoted = board.promoted
    fields["_stack"] = [chess._BoardState(board)]  # the undo record, as push keeps it
    fields["ep_square"] = None
    fields["halfmove_clock"] = board.halfmove_clock + 1
    if not turn:
        fields["fullmove_number"] = board.fullmove_number + 1
    chess960 = board.chess960
    if piece == chess.KING and (
        own & chess.BB_SQUARES[to] or (not chess960 and abs(to - frm) == 2)
    ):
        # castling: python-chess's king takes rook, the rook in its corner in standard chess
        h_side = to > frm
        rook_from = to if chess960 else ((to | 7) if h_side else (to & ~7))
        king_to, rook_to = _CASTLED[(turn, h_side)]
        gone = from_bb | chess.BB_SQUARES[rook_from]
        fields["kings"] = board.kings & ~gone | chess.BB_SQUARES[king_to]
        fields["rooks"] = board.rooks & ~gone | chess.BB_SQUARES[rook_to]
        own = own & ~gone | chess.BB_SQUARES[king_to] | chess.BB_SQUARES[rook_to]
        rights = board.clean_castling_rights() & ~gone
        if not promoted & from_bb:
            rights &= _RANK_1_CLEARED if turn else _RANK_8_CLEARED
        promoted &= ~gone
        fields["move_stack"] = [move if chess960 else chess.Move(frm, king_to)]
    else:
        to_bb = chess.BB_SQUARES[to]
        was_promoted = promoted & from_bb
        rights = board.clean_castling_rights() & ~from_bb & ~to_bb
        moved_field = _FIELDS[piece]
        fields[moved_field] &= ~from_bb
        captured = _LETTER_TYPES.get(key[to])
        if captured is not None:
            victim_field = _FIELDS[captured]
            fields[victim_field] &= ~to_bb
            other &= ~to_bb
            fields["halfmove_clock"] = 0
        if piece == chess.KING and not was_promoted:
            rights &= _RANK_1_CLEARED if turn else _RANK_8_CLEARED
        elif captured == chess.KING and not promoted & to_bb:
            # a king taken (no legal move does): its side's castling ends, as in push
            if turn and to >> 3 == 7:
                rights &= _RANK_8_CLEARED
            elif not turn and to >> 3 == 0:
                rights &= _RANK_1_CLEARED
        placed = piece
        if piece == chess.PAWN:
            fields["halfmove_clock"] = 0
            step = to - frm
            if step == 16 and frm >> 3 == 1:
                fields["ep_square"] = frm + 8
            elif step == -16 and frm >> 3 == 6:
                fields["ep_square"] = frm - 8
            elif to == board.ep_square and captured is None and step in (7, 9, -7, -9):
                victim = to - 8 if turn else to + 8  # en passant
                victim_type = _LETTER_TYPES.get(key[victim])
                if victim_type is not None:
                    victim_bb = chess.BB_SQUARES[victim]
                    victim_field = _FIELDS[victim_type]
                    fields[victim_field] &= ~victim_bb
                    own &= ~victim_bb
                    other &= ~victim_bb
                    promoted &= ~victim_bb
            if move.promotion:
                placed = move.promotion
        fields[_FIELDS[placed]] |= to_bb
        own = own & ~from_bb | to_bb
        promoted &= ~from_bb & ~to_bb
        if was_promoted or move.promotion:
            promoted |= to_bb
        fields["move_stack"] = [move]
    occupied_co = [0, 0]
    occupied_co[turn] = own
    occupied_co[not turn] = other
    fields["occupied_co"] = occupied_co
    fields["occupied"] = own | other
    fields["promoted"] = promoted
    fields["castling_rights"] = rights
    fields["turn"] = not turn
    after = object.__new__(type(board))
    after.__dict__ = fields
    return after


class KingGuard:
    """The side to move's king (None: none on the board), the pieces checking it, and
    its own pieces pinned to it: python-chess's ``king``, ``checkers_mask`` and
    ``_slider_blockers``, worked out once for a position (the pinned pieces only when
    a question needs them: a piece off every line through the king is not pinned)."""

    __slots__ = ("_pinned", "checkers", "king")

    def __init__(self, board: chess.Board, key: bytes) -> None:
        """``key``: the board's placement key (the king is found in it, as python-chess's
        ``king`` finds it: the highest square, when a position has two)."""
        if board.promoted & board.kings:
            king = board.king(board.turn)  # python-chess passes a promoted king over
        else:
            found = key.rfind(b"K" if board.turn else b"k")
            king = None if found < 0 else found
        self.king = king
        self.checkers = 0 if king is None else board.attackers_mask(not board.turn, king)
        self._pinned: int | None = None if king is not None else 0

    def pinned(self, board: chess.Board) -> int:
        """The side to move's pieces pinned to its king (python-chess's blockers)."""
        pinned = self._pinned
        if pinned is None:
            assert self.king is not None
            pinned = self._pinned = board._slider_blockers(self.king)
        return pinned

    def keeps_king_safe(self, board: chess.Board, move: chess.Move) -> bool:
        """``not board.is_into_check(move)`` for a pseudo-legal ``move``."""
        king = self.king
        if king is None:
            return True
        checkers = self.checkers
        frm = move.from_square
        if checkers and move not in board._generate_evasions(
            king, checkers, chess.BB_SQUARES[frm], chess.BB_SQUARES[move.to_square]
        ):
            return False
        if frm != king and not chess.BB_RAYS[king][frm] and move.to_square != board.ep_square:
            return True  # off every line through the king: not pinned (en passant aside)
        return board._is_safe(king, self.pinned(board), move)

    def legal_moves(
        self, board: chess.Board, from_mask: int = chess.BB_ALL
    ) -> Iterator[chess.Move]:
        """``board.generate_legal_moves(from_mask)``."""
        king = self.king
        if king is None or board.promoted & board.kings:
            yield from board.generate_legal_moves(from_mask)
            return
        if self.checkers:
            moves = board._generate_evasions(king, self.checkers, from_mask)
        else:
            moves = board.generate_pseudo_legal_moves(from_mask)
        pinned = self.pinned(board)
        for move in moves:
            if board._is_safe(king, pinned, move):
                yield move

    def any_legal_move(self, board: chess.Board) -> bool:
        """``any(board.generate_legal_moves())``."""
        king = self.king
        if king is None or board.promoted & board.kings:
            # python-chess's own generation (no king, or a king it reads differently)
            return any(board.generate_legal_moves())
        if self.checkers:
            moves = board._generate_evasions(king, self.checkers)
        else:
            # Not in check, a pawn not pinned to its king may push onto an empty square,
            # and a knight not pinned go anywhere not its own side's: most positions
            # answer here, without a move generated (issue 28). A piece off every line
            # through the king is not pinned, so the pinned pieces need not be known.
            if self._pinned is None and _free_move(board, _lines_through(king)):
                return True
            if _free_move(board, self.pinned(board)):
                return True
            moves = board.generate_pseudo_legal_moves()
        pinned = self.pinned(board)
        return any(board._is_safe(king, pinned, move) for move in moves)


def _lines_through(square: int) -> int:
    """Every square on a rank, file or diagonal through ``square``."""
    return (
        chess.BB_RANK_ATTACKS[square][0]
        | chess.BB_FILE_ATTACKS[square][0]
        | chess.BB_DIAG_ATTACKS[square][0]
    )


def _free_move(board: chess.Board, held: int) -> bool:
    """A pawn of the side to move that may push onto an empty square, or a knight that
    may go to a square not its own side's, neither among ``held`` (its pieces that may
    be pinned): a legal move, when the king is not in check."""
    own = board.occupied_co[board.turn]
    free = own & ~held
    pawns = board.pawns & free
    if (pawns << 8 if board.turn else pawns >> 8) & ~board.occupied & chess.BB_ALL:
        return True
    return any(
        chess.BB_KNIGHT_ATTACKS[square] & ~own
        for square in chess.scan_forward(board.knights & free)
    )


def insufficient_material(board: chess.Board) -> bool:
    """``board.is_insufficient_material()``, which asks White first: with a pawn, a rook
    or a queen he has enough (asked after every move, most of a game has one)."""
    if board.occupied_co[chess.WHITE] & (board.pawns | board.rooks | board.queens):
        return False
    return board.is_insufficient_material()
