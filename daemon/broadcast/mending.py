"""The arbiter's corrections, as the display checks and previews them.

A correction (``daemon.rules.corrections``: choose a recovery line, enter moves
from a scoresheet, take back to a ply, correct a past move, set the position
from the board, add a complete game) is decided by the rules core, which
answers a bad one with a ``bad_request`` notice in the feed. The console needs
more: a clear refusal at once, naming the move and why, and a preview of what
a correction will do before the arbiter sends it. Both come from the very
checks the core runs (``corrections.plan``, ``read_game``), run here on the
display's record of the game, which the feed keeps equal to the core's.
"""

from __future__ import annotations

from typing import Any

import chess

from daemon.broadcast.controls import ControlError
from daemon.game.record import GameRecord
from daemon.rules import corrections
from drivers.sensors import Request


def _game(record: GameRecord) -> tuple[chess.Board, list[chess.Move], int] | None:
    """The record's start, moves and the ply before its first; None when its moves
    do not replay (the core's own check then decides)."""
    try:
        board = chess.Board(record.start_fen, chess960=record.chess960)
        moves = [chess.Move.from_uci(m.uci) for m in record.moves]
        check = board.copy(stack=False)
        for move in moves:
            if not check.is_legal(move):
                return None
            check.push(move)
    except ValueError:
        return None
    base = record.moves[0].ply - 1 if record.moves else record.start_ply
    return board, moves, base


def check(record: GameRecord, request: Request) -> dict[str, Any] | None:
    """What a correction will do (``Plan.to_dict``, or the game added), or None for
    other actions; ``ControlError`` with the core's reason when it cannot be done."""
    action = request.action
    try:
        if action == "add_game":
            return corrections.read_game(request.args.get("pgn")).to_dict()
        if action == "position_from_board":
            return {
                "action": action,
                "summary": "the position the board shows becomes the game's start "
                "(read when it is applied)",
            }
        if action not in corrections.MOVE_ACTIONS:
            return None
        game = _game(record)
        if game is None:
            return None
        start, moves, base = game
        return corrections.plan(action, request.args, start, moves, base).to_dict()
    except corrections.CorrectionError as error:
        raise ControlError(f"{action}: {error}", _field(action)) from None


def _field(action: str) -> str | None:
    """The field a refusal of ``action`` is about, for the console to mark."""
    return {
        "choose_line": "line",
        "enter_moves": "san",
        "takeback_to": "ply",
        "add_game": "pgn",
    }.get(action)
