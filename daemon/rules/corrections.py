"""The arbiter's corrections: the requests that mend a game's record.

The board cannot always tell the game: two lines of moves reach the same
position after an outage, a board dies and the moves come from the scoresheets,
a move was recorded wrongly and is only noticed later. The arbiter then says
what happened, and the rules core takes it as a request (``drivers.sensors.
Request``), so a sensor log with the request replays to the same feed:

- ``choose_line`` (``line``: SAN): one of the lines the core offered
  (``moves_recovered``, ``ambiguous``); its moves must lead to what the board shows;
- ``enter_moves`` (``san``): moves from a scoresheet, from the current position;
- ``takeback_to`` (``ply``): the game back to the position after that ply;
- ``correct_move`` (``ply``, ``san`` or ``uci``): that ply's move replaced, the
  later moves replayed on it;
- ``position_from_board`` (``turn``, ``castling``, optional): the board as it
  stands becomes the game's start position (a game from a FEN);
- ``add_game`` (``pgn``): a complete game, started, played and ended as its PGN says.

Any of them with ``preview: true`` changes nothing (the display answers a
preview itself, from its own record of the game, with ``preview``).

Each is all or nothing: a SAN move that is not legal, a later move that does not
replay on a corrected one, a ply out of range, a broken PGN raise ``ValueError``
with a message naming the move and why, before anything is changed (the core
turns it into a ``bad_request`` notice).

This module is the checking half (``plan``, ``read_line``, ``read_game``,
``position_from``): pure chess on a start position and its moves, so the
broadcast's controls run the very same checks on the display's record and answer a
bad request with its reason at once, and a preview with what would be done. The
core carries a checked correction out in ``daemon.rules.requests`` (``Requests.
_correct``), through its own steps (its commits, its takeback, its game start), so
what follows a correction (the board to be put right, a game that ends) is decided
as for any move.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import chess

from drivers.records import FrozenRecord

#: The corrections this module checks (``Requests._on_request`` hands them to ``_correct``).
ACTIONS = frozenset(
    {"choose_line", "enter_moves", "takeback_to", "correct_move", "position_from_board", "add_game"}
)
#: The corrections whose plan is a change of the game's moves (``plan``).
MOVE_ACTIONS = frozenset({"choose_line", "enter_moves", "takeback_to", "correct_move"})
#: The most half-moves one request may add (a whole game from a scoresheet).
MAX_PLIES = 600
#: The longest PGN text ``add_game`` reads.
MAX_PGN = 12_000

_RESULTS = frozenset({"1-0", "0-1", "1/2-1/2", "*", "½-½"})
_NUMBER = re.compile(r"^(\d+)(\.+)(.*)$")
_COMMENT = re.compile(r"\{[^}]*\}|;[^\n]*|\$\d+")
_SQUARE = re.compile(r"[a-h][1-8]")


class CorrectionError(ValueError):
    """A correction refused, with the reason the arbiter reads; nothing was changed."""


# -- reading moves ----------------------------------------------------------------------


def _number(board: chess.Board) -> str:
    """The move number of the move to play: "13." for White's, "13..." for Black's."""
    return f"{board.fullmove_number}{'.' if board.turn == chess.WHITE else '...'}"


def _label(board: chess.Board, san: str) -> str:
    """A move with its number, as a scoresheet reads: "13. Nf3", "13...Nc6"."""
    return f"{_number(board)}{' ' if board.turn == chess.WHITE else ''}{san}"


def _side(board: chess.Board) -> str:
    return f"{'White' if board.turn == chess.WHITE else 'Black'} to move"


def _why_not(board: chess.Board, token: str, error: ValueError) -> str:
    """Why ``token`` is no move here, in words (python-chess says only 'illegal san')."""
    if isinstance(error, chess.AmbiguousMoveError):
        square = _SQUARE.findall(token)
        letter = token[0] if token[0] in "NBRQK" else "P"
        piece = chess.Piece.from_symbol(letter).piece_type
        options = sorted(
            board.san(move)
            for move in board.legal_moves
            if square
            and move.to_square == chess.parse_square(square[-1])
            and board.piece_type_at(move.from_square) == piece
        )
        return "is ambiguous: say which piece" + (f" ({' or '.join(options)})" if options else "")
    if isinstance(error, chess.IllegalMoveError):
        if board.is_checkmate():
            return "is not legal: the game is over (checkmate)"
        return f"is not a legal move in this position ({_side(board)})"
    return "is not a move in SAN (such as Nf3, exd5, O-O, e8=Q)"


def _tokens(text: str) -> list[str]:
    """The words of a line of moves, comments, variations and NAGs left out."""
    text = _COMMENT.sub(" ", text)
    depth, kept = 0, []
    for char in text:  # variations (nested parentheses) are not the game's moves
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            kept.append(char)
    return "".join(kept).split()


def read_line(board: chess.Board, text: str) -> list[chess.Move]:
    """The moves a line in SAN names, played from ``board`` (which is not changed).

    Move numbers are optional; where given they must be the position's ("13." for
    White's 13th move, "13..." for Black's), so a scoresheet read one move off is
    caught rather than played. ``0-0`` is read as ``O-O``; ``!``/``?`` marks, a
    result and comments are left out. A move that does not read raises
    ``CorrectionError`` naming it ("13. Ke9 is not a legal move in this position").
    """
    if not isinstance(text, str) or not text.strip():
        raise CorrectionError("no moves given (write them in SAN, such as 12. Nf3 Nc6)")
    position = board.copy(stack=False)
    moves: list[chess.Move] = []
    number: tuple[int, bool] | None = None  # the move number given, and whether "..." (Black)
    for word in _tokens(text):
        found = _NUMBER.match(word)
        if found:
            number = (int(found.group(1)), len(found.group(2)) > 1)
            word = found.group(3)
            if not word:
                continue
        if word == "..." or word == "..":
            number = (number[0], True) if number else None
            continue
        if word in _RESULTS:
            break
        token = word.rstrip("!?").replace("0-0-0", "O-O-O").replace("0-0", "O-O")
        if number is not None and number != (
            position.fullmove_number,
            position.turn == chess.BLACK,
        ):
            shown = f"{number[0]}{'...' if number[1] else '. '}"
            raise CorrectionError(
                f"{shown}{token}: the game is at {_number(position)} "
                f"({_side(position)}), not at {shown.strip()}"
            )
        number = None
        try:
            move = position.parse_san(token)
        except ValueError as error:
            raise CorrectionError(
                f"{_label(position, token)} {_why_not(position, token, error)}"
            ) from None
        moves.append(move)
        if len(moves) > MAX_PLIES:
            raise CorrectionError(f"more than {MAX_PLIES} half-moves in one request")
        position.push(move)
    if not moves:
        raise CorrectionError("no moves given (write them in SAN, such as 12. Nf3 Nc6)")
    return moves


def describe(board: chess.Board, moves: Sequence[chess.Move]) -> str:
    """A line in SAN with move numbers, as the core offers lines: ``12. Nf3 Nc6 13. e4``."""
    return board.variation_san(list(moves)) if moves else ""


# -- the plan: what a correction of the moves does --------------------------------------


@dataclass(eq=False, repr=False, slots=True)
class Plan(FrozenRecord):
    """A correction of the game's moves: keep the plies up to ``keep``, then play
    ``moves``. ``removed``: the plies it takes away (to be replaced or not)."""

    action: str
    keep: int  # the ply after which the game goes on (numbered as the feed numbers plies)
    moves: tuple[chess.Move, ...]
    line: str  # the moves played, in SAN with numbers
    removed: str  # the plies taken away, in SAN with numbers
    fen: str  # the position after it
    summary: str  # what it does, in one sentence

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "keep": self.keep,
            "moves": [move.uci() for move in self.moves],
            "line": self.line,
            "removed": self.removed,
            "fen": self.fen,
            "summary": self.summary,
        }


def _ply(args: dict[str, Any], low: int, high: int, range_said: str) -> int:
    value = args.get("ply")
    if isinstance(value, bool) or not isinstance(value, int):
        raise CorrectionError("ply is needed: a whole number of half-moves")
    if high < low:
        raise CorrectionError("no move has been played")
    if not low <= value <= high:
        raise CorrectionError(f"ply {value} is out of range: {range_said}")
    return value


class _Game:
    """A start position and its moves, with the position before each ply."""

    def __init__(self, start: chess.Board, moves: Sequence[chess.Move], base: int) -> None:
        self.moves = list(moves)
        self.base = base  # the ply of the start position (the first move is base + 1)
        self.boards = [start.copy(stack=False)]
        for move in self.moves:
            after = self.boards[-1].copy(stack=False)
            after.push(move)
            self.boards.append(after)

    @property
    def last(self) -> int:
        return self.base + len(self.moves)

    def before(self, ply: int) -> chess.Board:
        """The position before the move of ``ply`` (after ``ply - 1``)."""
        return self.boards[ply - 1 - self.base]

    def after(self, ply: int) -> chess.Board:
        return self.boards[ply - self.base]

    def line_after(self, ply: int) -> str:
        """The moves after ``ply``, in SAN with numbers."""
        return describe(self.after(ply), self.moves[ply - self.base :])


def plan(
    action: str,
    args: dict[str, Any],
    start: chess.Board,
    moves: Sequence[chess.Move],
    base: int = 0,
) -> Plan:
    """What ``action`` would do to the game ``start`` + ``moves`` (the first of which
    has ply ``base + 1``); ``CorrectionError`` when it cannot be done."""
    game = _Game(start, moves, base)
    last = game.last
    if action in ("enter_moves", "choose_line"):
        key = "san" if action == "enter_moves" else "line"
        text = args.get(key)
        if not isinstance(text, str):
            raise CorrectionError(f"{key} is needed: moves in SAN, such as 12. Nf3 Nc6")
        new = read_line(game.after(last), text)
        line = describe(game.after(last), new)
        return _plan(game, action, last, new, f"plays {line}")
    if action == "takeback_to":
        ply = _ply(
            args,
            game.base,
            last - 1,
            f"the game goes back to a ply from {game.base} (its start) to {last - 1}",
        )
        start_said = " (the start)" if ply == game.base else ""
        summary = (
            f"takes back {last - ply} half-move(s), {game.line_after(ply)}: the game goes on "
            f"from the position after ply {ply}{start_said}"
        )
        return _plan(game, action, ply, [], summary)
    if action == "correct_move":
        ply = _ply(
            args, game.base + 1, last, f"the game's moves are plies {game.base + 1} to {last}"
        )
        before = game.before(ply)
        new_move = _corrected(before, args)
        old = game.moves[ply - 1 - game.base]
        was, now = _label(before, before.san(old)), _label(before, before.san(new_move))
        if new_move == old:
            raise CorrectionError(f"ply {ply} is already {was}")
        replayed = [new_move]
        position = before.copy(stack=False)
        position.push(new_move)
        for later_ply in range(ply + 1, last + 1):
            # the later moves as they were written, by their SAN: "Nd2" stays the
            # knight's move to d2, whichever knight can now go there
            written = game.before(later_ply)
            san = written.san(game.moves[later_ply - 1 - game.base])
            try:
                again = position.parse_san(san)
            except ValueError as error:
                raise CorrectionError(
                    f"with {now} at ply {ply}, the later move "
                    f"{_label(position, san)} {_why_not(position, san, error)}; nothing is "
                    f"changed (take back to ply {ply - 1} and enter the moves from there)"
                ) from None
            replayed.append(again)
            position.push(again)
        later = f", and replays the {len(replayed) - 1} later half-move(s) on it"
        summary = f"replaces {was} by {now}" + (later if len(replayed) > 1 else "")
        return _plan(game, action, ply - 1, replayed, summary)
    raise CorrectionError(f"{action} is no correction of the moves")


def _corrected(board: chess.Board, args: dict[str, Any]) -> chess.Move:
    """The move ``correct_move`` names, by ``san`` or ``uci``, legal in ``board``."""
    san, uci = args.get("san"), args.get("uci")
    if isinstance(san, str) and san.strip():
        moves = read_line(board, san)
        if len(moves) > 1:
            raise CorrectionError("give one move (enter_moves plays several)")
        return moves[0]
    if isinstance(uci, str):
        try:
            move = chess.Move.from_uci(uci)
        except ValueError:
            raise CorrectionError(f"{uci!r} is not a move like e2e4 or e7e8q") from None
        if not board.is_legal(move):
            raise CorrectionError(f"{uci} is not a legal move at {_number(board)} ({_side(board)})")
        return move
    raise CorrectionError("san (such as Nf3) or uci (such as g1f3) is needed")


def _plan(game: _Game, action: str, keep: int, new: Sequence[chess.Move], summary: str) -> Plan:
    position = game.after(keep).copy(stack=False)
    line = describe(position, new)
    for move in new:
        position.push(move)
    removed = game.line_after(keep) if keep < game.last else ""
    return Plan(action, keep, tuple(new), line, removed, position.fen(), summary)


# -- a complete game --------------------------------------------------------------------


@dataclass(eq=False, repr=False, slots=True)
class AddedGame(FrozenRecord):
    """A complete game read from PGN: its start, moves, names and result."""

    board: chess.Board  # the start position
    moves: tuple[chess.Move, ...]
    players: dict[str, str]  # white, black, round, as the PGN names them ("?" left out)
    result: str | None  # 1-0, 0-1, 1/2-1/2; None: not finished ("*")

    def summary(self) -> str:
        white = self.players.get("white", "?")
        black = self.players.get("black", "?")
        ending = f", {self.result}" if self.result else ", not finished"
        return f"adds the game {white} - {black}: {len(self.moves)} half-move(s){ending}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": "add_game",
            "start_fen": self.board.fen(),
            "moves": [move.uci() for move in self.moves],
            "line": describe(self.board, self.moves),
            "players": dict(self.players),
            "result": self.result,
            "summary": self.summary(),
        }


def read_game(text: Any) -> AddedGame:
    """One game's PGN text, every move checked; ``CorrectionError`` naming the first
    move that does not read, or a text that is no game."""
    if not isinstance(text, str) or not text.strip():
        raise CorrectionError("pgn is needed: the game's PGN text")
    if len(text) > MAX_PGN:
        raise CorrectionError(f"the PGN is longer than {MAX_PGN} characters")
    import chess.pgn  # here: chess.pgn is imported after READY (daemon.compose)

    try:
        game = chess.pgn.read_game(io.StringIO(text))
    except (ValueError, KeyError) as error:  # a broken FEN tag, a variant unknown
        raise CorrectionError(f"the PGN cannot be read ({error})") from None
    if game is None:
        raise CorrectionError("the text holds no game")
    if game.errors:
        board = game.board()
        for node in game.mainline():  # the moves that did read, then the one that did not
            board = node.board()
        first = game.errors[0]
        san = str(first).split("'")[1] if "'" in str(first) else str(first)
        if isinstance(first, ValueError):
            raise CorrectionError(f"{_label(board, san)} {_why_not(board, san, first)}")
        raise CorrectionError(f"the PGN cannot be read ({first})")
    start = game.board()
    moves = tuple(game.mainline_moves())
    if len(moves) > MAX_PLIES:
        raise CorrectionError(f"more than {MAX_PLIES} half-moves")
    headers = game.headers
    players = {
        key: headers[tag].strip()
        for key, tag in (("white", "White"), ("black", "Black"), ("round", "Round"))
        if headers.get(tag, "?").strip() not in ("", "?")
    }
    result = headers.get("Result", "*")
    return AddedGame(start, moves, players, result if result in ("1-0", "0-1", "1/2-1/2") else None)


# -- the position the board shows -------------------------------------------------------


_STATUS_WORDS = (
    (chess.STATUS_NO_WHITE_KING, "there is no white king"),
    (chess.STATUS_NO_BLACK_KING, "there is no black king"),
    (chess.STATUS_TOO_MANY_KINGS, "there are too many kings"),
    (chess.STATUS_TOO_MANY_WHITE_PAWNS, "White has more than 8 pawns"),
    (chess.STATUS_TOO_MANY_BLACK_PAWNS, "Black has more than 8 pawns"),
    (chess.STATUS_PAWNS_ON_BACKRANK, "a pawn stands on the first or last rank"),
    (chess.STATUS_TOO_MANY_WHITE_PIECES, "White has more than 16 pieces"),
    (chess.STATUS_TOO_MANY_BLACK_PIECES, "Black has more than 16 pieces"),
    (chess.STATUS_OPPOSITE_CHECK, "the side not to move is in check"),
    (chess.STATUS_TOO_MANY_CHECKERS, "the king is checked by more pieces than a move can give"),
    (chess.STATUS_IMPOSSIBLE_CHECK, "the check cannot come from one move"),
)


def position_from(
    placement: str, turn: Any, castling: Any, like: chess.Board | None, chess960: bool
) -> chess.Board:
    """The position of ``placement`` (the board's squares) with ``turn`` to move
    ("white"/"black"; None: ``like``'s side to move, else White) and ``castling``
    (FEN letters or "-"; None: the rights ``like`` still had that the placement
    allows). ``CorrectionError`` saying what is wrong with a position no game has."""
    board = chess.Board(None, chess960=chess960)
    board.set_board_fen(placement)
    if turn is None:
        board.turn = like.turn if like is not None else chess.WHITE
    elif turn in ("white", "black"):
        board.turn = turn == "white"
    else:
        raise CorrectionError("turn is 'white' or 'black'")
    if castling is None:
        board.castling_rights = like.castling_rights if like is not None else chess.BB_CORNERS
    elif isinstance(castling, str) and re.fullmatch(r"-|[KQkqA-Ha-h]{1,4}", castling):
        try:
            board.set_castling_fen(castling)
        except ValueError:
            raise CorrectionError(f"castling {castling!r} is not FEN") from None
    else:
        raise CorrectionError("castling is FEN letters such as KQkq, or -")
    board.castling_rights = board.clean_castling_rights()
    if like is not None:
        board.fullmove_number = like.fullmove_number
    status = board.status()
    if status != chess.STATUS_VALID:
        words = [text for flag, text in _STATUS_WORDS if status & flag] or [repr(status)]
        raise CorrectionError(f"the board shows no position a game can have: {'; '.join(words)}")
    return board
