"""What is said for each event of the feed: irregularities with their fix, game events.

Pure functions of an event-feed dict, the vocabulary and (where a piece must be
named) the board as it stands. An irregularity is always said together with how to
put it right, from the event's ``restore`` list: "Unmöglicher Zug. Springer zurück
auf Gustav eins". Written text only; the voice gets ``vocabulary.pronounce``.
"""

from __future__ import annotations

import re
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
    return _join([FIX + part for part in parts], vocabulary)


def _join(parts: list[str], vocabulary: Vocabulary) -> str:
    """A fix list: "Turm auf Anna eins, Anna zwei räumen", with a ``PART`` mark after
    each separator where a long list may be split into phrases (``phrases_of``)."""
    separator = vocabulary.words["list_separator"]
    return f"{separator}{PART} ".join(parts)


#: Marks, in a message being built, where a fix list may be split into phrases.
#: Never said or written: ``written`` and ``phrases_of`` take it out.
PART = "\ue000"  # private use: not whitespace (\x1f is, to str.strip and re)

#: Marks a fix (what to put where): a phrase with one is about the position, which a
#: later move shows was put right (``phrases_of``).
FIX = "\ue001"

#: At most this many items of a fix list in one phrase (as a board reading's).
PART_ITEMS = 3


def written(text: str) -> str:
    """The written text of a message built with ``PART`` and ``FIX`` marks."""
    return text.replace(PART, "").replace(FIX, "")


def phrases_of(text: str) -> list[tuple[str, bool]]:
    """A message as short phrases, each said whole: its sentences, and a long fix
    list in chunks of ``PART_ITEMS`` items; each with whether it is only a fix (what
    to put where, not what happened). A move waiting is said at a boundary between
    them (``daemon.speech.schedule``), so a long "Grundstellung falsch" never holds
    up a move for long."""
    phrases: list[tuple[str, bool]] = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        items = sentence.split(PART)
        for start in range(0, len(items), PART_ITEMS):
            chunk = items[start : start + PART_ITEMS]
            phrase = written("".join(chunk)).strip().rstrip(",;.")
            if phrase:
                only_fix = all(item.lstrip().startswith(FIX) for item in chunk)
                phrases.append((phrase, only_fix))
    return phrases


#: Irregularity kinds with their own message; any other kind says "irregularity".
OWN_MESSAGES = frozenset(
    {
        "illegal_move",
        "displaced_pieces",
        "clock_without_move",
        "incomplete_castling",
        "incomplete_promotion",
        "promotion_changed",
        "castling_rook_first",
        "wrong_setup",
        "boards_diverged",
    }
)


def irregularity_text(
    event: dict[str, Any], vocabulary: Vocabulary, board: chess.Board | None = None
) -> str:
    """What happened and what to do, with a piece word on every square named (with
    ``PART`` and ``FIX`` marks in its fix list: ``written`` or ``phrases_of`` it).

    ``board``: the game's position as it stands (the touched piece of a touch-move
    still stands on its square; the king of an incomplete castling has not
    officially moved).
    """
    kind = str(event.get("kind") or "")
    mover = event.get("by") if event.get("by") in ("white", "black") else None
    side = vocabulary.colour(mover) if mover else ""
    restore = list(event.get("restore") or [])
    squares = [s for s in event.get("squares") or [] if s in chess.SQUARE_NAMES]
    fix = fix_text(restore, kind, vocabulary, mover)
    count = event.get("count")
    if kind == "touch_move":
        text = touch_move_text(event, squares, vocabulary, board, mover)
        if count:
            text += ". " + vocabulary.message("touch_move_count", side=side, count=count)
        return text + ". " + vocabulary.message("claim_open")
    if kind == "castling_rook_first":
        # The first square is the rook's, touched first; it has castled since.
        touched = f"{vocabulary.piece('R')} {vocabulary.square(squares[0])}" if squares else ""
        text = vocabulary.message("castling_rook_first", touched=touched, side=side)
        return text + ". " + vocabulary.message("claim_open")
    if kind == "incomplete_castling":
        rook_move = _missing_rook_move(squares, board)
        if rook_move is not None and board is not None:
            rook_from, rook_to = rook_move
            piece = board.piece_at(rook_from)
            fix = vocabulary.message(
                "fix_move",
                piece=piece_name(piece.symbol(), vocabulary, mover) if piece else "",
                from_square=vocabulary.square(chess.square_name(rook_from)),
                to_square=vocabulary.square(chess.square_name(rook_to)),
            )
        return vocabulary.message("incomplete_castling", fix=fix, side=side)
    if kind in ("incomplete_promotion", "promotion_changed"):
        named = squares + [str(r.get("square") or "") for r in restore]
        last_rank = [s for s in named if len(s) == 2 and s[1] in "18"]
        where = vocabulary.square(last_rank[-1]) if last_rank else ""
        return vocabulary.message(kind, square=where, side=side, fix=fix)
    template = kind if kind in OWN_MESSAGES else "irregularity"
    text = vocabulary.message(template, fix=fix, side=side)
    if kind == "illegal_move" and count:
        text += ". " + vocabulary.message("illegal_move_count", side=side, count=count)
    if kind == "illegal_move":
        text += consequence_text(str(event.get("consequence") or ""), mover, vocabulary)
    return text


def consequence_text(consequence: str, mover: str | None, vocabulary: Vocabulary) -> str:
    """The feed's consequence of an illegal move (7.4b), said last: the fix comes
    first because the board must be put right now; the minutes are the arbiter's."""
    if mover is None:
        return ""
    if "two extra minutes" in consequence:
        opponent = "black" if mover == "white" else "white"
        return ". " + vocabulary.message("illegal_move_minutes", side=vocabulary.colour(opponent))
    if "lost" in consequence:
        return ". " + vocabulary.message("illegal_move_lost", side=vocabulary.colour(mover))
    return ""


def _piece_on(
    square: str, board: chess.Board | None, vocabulary: Vocabulary, mover: str | None
) -> str:
    """ "Springer Gustav eins": the piece standing there and the square."""
    piece = board.piece_at(chess.parse_square(square)) if board is not None else None
    where = vocabulary.square(square)
    return f"{piece_name(piece.symbol(), vocabulary, mover)} {where}" if piece else where


def _missing_rook_move(squares: list[str], board: chess.Board | None) -> tuple[int, int] | None:
    """The rook's part of a castling of which only the king has moved: (from, to)."""
    if board is None:
        return None
    for move in board.legal_moves:
        if not board.is_castling(move):
            continue
        kingside = board.is_kingside_castling(move)
        rank = chess.square_rank(move.from_square)
        if chess.square_name(chess.square(6 if kingside else 2, rank)) not in squares:
            continue
        rook_from = move.to_square if board.chess960 else chess.square(7 if kingside else 0, rank)
        return rook_from, chess.square(5 if kingside else 3, rank)
    return None


#: The touch-move rule a ``detail`` names: 4.3a (own piece: move it), 4.3b (the
#: opponent's: capture it), 4.3c (one of each: capture that one with this one).
_TOUCH_RULE = re.compile(r"4\.3\s*\(?([abc])\)?", re.IGNORECASE)


def touch_move_text(
    event: dict[str, Any],
    squares: list[str],
    vocabulary: Vocabulary,
    board: chess.Board | None,
    mover: str | None,
) -> str:
    """Which piece had to move or be captured (4.3): "Berührt, geführt: Springer
    Gustav eins zuerst berührt, musste ziehen".

    The first square holds the piece that had to move or be captured (for 4.3c
    with a capture due: his piece, then the opposing one, then the square he moved
    from); the duty comes from the event's ``detail`` ("4.3b: ... had to be
    captured") when it says it, else from the piece's colour.
    """
    touched = squares[0] if squares else None
    piece = board.piece_at(chess.parse_square(touched)) if board and touched else None
    side = vocabulary.colour(mover)
    if touched is None or piece is None or mover is None:
        pieces = _join([_piece_on(s, board, vocabulary, mover) for s in squares], vocabulary)
        return vocabulary.message("touch_move", pieces=pieces, side=side)
    detail = str(event.get("detail") or "")
    match = _TOUCH_RULE.search(detail)
    own = piece.color == (mover == "white")
    name = _piece_on(touched, board, vocabulary, mover)
    if match and match.group(1).lower() == "c" and len(squares) >= 3:
        # 4.3c, one of each: (his piece, the opposing piece, the square he moved from)
        other = _piece_on(squares[1], board, vocabulary, mover)
        mine, theirs = (name, other) if own else (other, name)
        return vocabulary.message("touch_move_capture_with", piece=mine, target=theirs, side=side)
    if "be captured" in detail:
        own = False
    elif "be moved" in detail:
        own = True
    key = "touch_move_move" if own else "touch_move_capture"
    return vocabulary.message(key, piece=name, side=side)


def result_text(result: str, vocabulary: Vocabulary) -> str:
    if result == "1-0":
        return vocabulary.message("result_white_wins")
    if result == "0-1":
        return vocabulary.message("result_black_wins")
    if result in ("1/2-1/2", "½-½"):
        return vocabulary.message("result_draw")
    return result


def event_speech(
    event: dict[str, Any],
    vocabulary: Vocabulary,
    board: chess.Board | None = None,
    board_before: chess.Board | None = None,
) -> tuple[str, list[tuple[str, bool]]]:
    """An event's written announcement and the phrases it is said in
    (``phrases_of``: an irregularity's sentences and fix list; any other event is
    one phrase), built once. ("", []): nothing is said."""
    if event.get("type") == "irregularity":
        marked = irregularity_text(event, vocabulary, board)
        return written(marked), phrases_of(marked)
    text = event_text(event, vocabulary, board, board_before)
    return (text, [(text, False)]) if text else ("", [])


def event_phrases(
    event: dict[str, Any],
    vocabulary: Vocabulary,
    board: chess.Board | None = None,
    board_before: chess.Board | None = None,
) -> list[tuple[str, bool]]:
    """The phrases of ``event_speech``."""
    return event_speech(event, vocabulary, board, board_before)[1]


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
        return written(irregularity_text(event, vocabulary, board))
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
    if kind == "touch":  # E.9.e: "Weiß: Springer Gustav eins berührt"
        by = str(event.get("by") or "")
        piece = piece_name(str(event.get("piece") or "P"), vocabulary, by)
        where = vocabulary.square(str(event.get("square") or "a1"))
        return vocabulary.message("touched", side=vocabulary.colour(by), piece=f"{piece} {where}")
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
        if event.get("state") != "lost":
            return vocabulary.message("connection_back")
        # Never connected: saying "connection lost" would send the player looking
        # for a cable that was never plugged in.
        found = event.get("found", True)
        return vocabulary.message("connection_lost" if found else "board_not_found")
    return None
