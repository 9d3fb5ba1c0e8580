"""A move as tokens: what is said, before any language chooses the words.

Short form follows SAN order and SAN's own disambiguation (python-chess decides
it, so the spoken move names exactly the piece the written notation names); long
form names the from and the to square. Castling is one token, as the Laws count
it as one king move (3.8), also in Chess960.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import chess

from daemon.rules.words import san as written_san
from drivers.records import FrozenRecord

TokenKind = Literal[
    "piece",  # value: FEN letter, upper case ("N", "P")
    "from_file",  # value: "g" (SAN disambiguation by file; a pawn capture's file)
    "from_rank",  # value: "1"
    "from_square",  # value: "g1" (long form, or SAN's full disambiguation)
    "capture",
    "square",  # value: the to-square, "f3"
    "en_passant",
    "promotion",  # value: FEN letter of the promoted piece
    "castle_short",
    "castle_long",
    "check",
    "mate",
]


@dataclass(eq=False, repr=False, slots=True)
class Token(FrozenRecord):
    kind: TokenKind
    value: str = ""


_SAN = re.compile(
    r"^(?P<piece>[KQRBN])?(?P<file>[a-h])?(?P<rank>[1-8])?(?P<capture>x)?"
    r"(?P<square>[a-h][1-8])(?:=(?P<promotion>[QRBN]))?"
)


def _names(san: str, move: chess.Move) -> bool:
    """Whether ``san`` can be this move's text: castling, or its target square."""
    if san.startswith("O-O"):
        return True
    match = _SAN.match(san)
    return match is not None and match["square"] == chess.square_name(move.to_square)


def move_tokens(
    board_before: chess.Board, move: chess.Move, form: str = "short", san: str | None = None
) -> list[Token]:
    """The tokens of ``move`` played in ``board_before`` (which is not changed).

    ``form``: "short" (SAN order: "Springer Felix drei") or "long" (from and to
    square: "Springer Gustav eins Felix drei"). ``san``: the move's SAN as the rules
    core wrote it (``daemon.rules.words.san``: the feed's and the PGN's), said in
    this vocabulary's words rather than written again; one that does not name this
    move is not used. Raises ValueError for a move that is not legal in the
    position: a phrase for a move that was not played must never be spoken.
    """
    if form not in ("short", "long"):
        raise ValueError(f"form must be 'short' or 'long', not {form!r}")
    if not board_before.is_legal(move):
        raise ValueError(f"{move.uci()} is not legal in {board_before.fen()}")
    if san is None or not _names(san, move):
        san = written_san(board_before, move)
    after = board_before.copy(stack=False)
    after.push(move)
    tokens: list[Token] = []
    if board_before.is_castling(move):
        side: TokenKind = (
            "castle_short" if board_before.is_kingside_castling(move) else "castle_long"
        )
        tokens.append(Token(side))
    else:
        match = _SAN.match(san)
        if match is None:  # pragma: no cover - python-chess SAN always matches
            raise ValueError(f"unexpected SAN {san!r}")
        piece = board_before.piece_at(move.from_square)
        assert piece is not None  # a legal move has a piece on its from-square
        letter = piece.symbol().upper()
        tokens.append(Token("piece", letter))
        capture = board_before.is_capture(move)
        if form == "long":
            tokens.append(Token("from_square", chess.square_name(move.from_square)))
        elif match["file"] and match["rank"]:
            tokens.append(Token("from_square", match["file"] + match["rank"]))
        elif match["file"] and match["file"] == chess.square_name(move.to_square)[0]:
            # SAN's "Qcc7" would be said "Dame Cesar Cesar sieben": a word twice
            # in a row, heard as a stutter or a repeated announcement. The whole
            # from-square names the same piece and no word follows itself.
            tokens.append(Token("from_square", chess.square_name(move.from_square)))
        elif match["file"]:
            tokens.append(Token("from_file", match["file"]))
        elif match["rank"]:
            tokens.append(Token("from_rank", match["rank"]))
        if capture:
            tokens.append(Token("capture"))
        tokens.append(Token("square", chess.square_name(move.to_square)))
        if board_before.is_en_passant(move):
            tokens.append(Token("en_passant"))
        if move.promotion:
            tokens.append(Token("promotion", chess.piece_symbol(move.promotion).upper()))
    if after.is_checkmate():
        tokens.append(Token("mate"))
    elif after.is_check():
        tokens.append(Token("check"))
    return tokens
