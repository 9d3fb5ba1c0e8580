"""What is said for each event of the feed: irregularities with their fix, game events.

Pure functions of an event-feed dict, the vocabulary and (where a piece must be
named) the board as it stands. An irregularity is always said together with how to
put it right, from the event's ``restore`` list: "Unmöglicher Zug. Springer zurück
auf Gustav eins". Written text only; the voice gets ``vocabulary.pronounce``.
"""

from __future__ import annotations

from typing import Any

import chess

from daemon.speech.vocabulary import Vocabulary

#: Irregularities fixed by taking a piece back where it came from: "zurück auf".
_TAKE_BACK_KINDS = frozenset(
    {
        "illegal_move",
        "touch_move",
        "castling_rook_first",
        "incomplete_castling",
        "incomplete_promotion",
    }
)


def piece_name(letter: str, vocabulary: Vocabulary, mover: str | None) -> str:
    """A piece, with its colour said only when it is not the mover's own."""
    colour = "white" if letter.isupper() else "black"
    name = vocabulary.piece(letter)
    if mover == colour:
        return name
    return vocabulary.message("piece_of_colour", piece=name, colour=vocabulary.colour(colour))


def fix_text(
    restore: list[dict[str, Any]], kind: str, vocabulary: Vocabulary, mover: str | None
) -> str:
    """How to get back the last correct position, from an Irregularity's ``restore``."""
    puts: list[str] = []
    clears: list[str] = []
    template = "fix_put_back" if kind in _TAKE_BACK_KINDS else "fix_put"
    for item in restore:
        square = str(item.get("square") or "")
        if len(square) != 2 or square not in chess.SQUARE_NAMES:
            continue
        letter = item.get("piece")
        if letter:
            name = piece_name(str(letter), vocabulary, mover)
            puts.append(vocabulary.message(template, piece=name, square=vocabulary.square(square)))
        else:
            clears.append(vocabulary.message("fix_clear", square=vocabulary.square(square)))
    # Taking a piece back clears the square it went to; saying so too is noise.
    parts = puts if (puts and kind in _TAKE_BACK_KINDS) else puts + clears
    return _join(parts, vocabulary)


def _join(parts: list[str], vocabulary: Vocabulary) -> str:
    separator = vocabulary.words["list_separator"]
    return f"{separator} ".join(parts)


def irregularity_text(
    event: dict[str, Any], vocabulary: Vocabulary, board: chess.Board | None = None
) -> str:
    kind = str(event.get("kind") or "")
    mover = event.get("by") if event.get("by") in ("white", "black") else None
    side = vocabulary.colour(mover) if mover else ""
    fix = fix_text(list(event.get("restore") or []), kind, vocabulary, mover)
    count = event.get("count")
    if kind == "touch_move":
        pieces = touched_pieces(event.get("squares") or [], vocabulary, board, mover)
        text = vocabulary.message("touch_move", pieces=pieces, side=side)
        if count:
            text += ". " + vocabulary.message("touch_move_count", side=side, count=count)
        return text
    template = kind if kind in ("illegal_move", "displaced_pieces") else "irregularity"
    text = vocabulary.message(template, fix=fix, side=side)
    if kind == "illegal_move" and count:
        text += ". " + vocabulary.message("illegal_move_count", side=side, count=count)
    return text


def touched_pieces(
    squares: list[str], vocabulary: Vocabulary, board: chess.Board | None, mover: str | None
) -> str:
    """ "Springer Gustav eins": what stands on each touched square, or the square alone."""
    parts = []
    for square in squares:
        if square not in chess.SQUARE_NAMES:
            continue
        piece = board.piece_at(chess.parse_square(square)) if board is not None else None
        where = vocabulary.square(square)
        parts.append(f"{piece_name(piece.symbol(), vocabulary, mover)} {where}" if piece else where)
    return _join(parts, vocabulary)


def result_text(result: str, vocabulary: Vocabulary) -> str:
    if result == "1-0":
        return vocabulary.message("result_white_wins")
    if result == "0-1":
        return vocabulary.message("result_black_wins")
    if result in ("1/2-1/2", "½-½"):
        return vocabulary.message("result_draw")
    return result


def event_text(
    event: dict[str, Any],
    vocabulary: Vocabulary,
    board: chess.Board | None = None,
    board_before: chess.Board | None = None,
) -> str | None:
    """The written announcement of a non-move event, or None if nothing is said for it.

    ``board``: the position as it stands (to name touched pieces); ``board_before``:
    the position before this event (the pieces an irregularity's squares held).
    """
    kind = event.get("type")
    if kind == "irregularity":
        return irregularity_text(event, vocabulary, board)
    if kind in ("position_restored", "takeback", "game_start", "game_resumed"):
        return vocabulary.message(kind)
    if kind == "game_end":
        return vocabulary.message(
            "game_end",
            result=result_text(str(event.get("result") or ""), vocabulary),
            reason=vocabulary.reason(str(event.get("reason") or "")),
        )
    if kind == "flag":
        side = vocabulary.colour(event.get("side"))
        if event.get("both") or not event.get("side"):
            return vocabulary.message("flag_both")
        return vocabulary.message("flag_draw" if event.get("draw") else "flag", side=side)
    if kind == "draw_claimable":
        return vocabulary.message(
            "draw_claimable", reason=vocabulary.reason(str(event.get("reason") or ""))
        )
    if kind == "penalty":
        seconds = float(event.get("seconds") or 0)
        return vocabulary.message(
            "penalty", side=vocabulary.colour(event.get("to")), seconds=f"{seconds:g}"
        )
    if kind == "connection":
        return vocabulary.message(
            "connection_lost" if event.get("state") == "lost" else "connection_back"
        )
    return None
