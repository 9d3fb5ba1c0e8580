"""Answers to a player's requests (Appendix E.2.9d: information only when asked).

Pure functions of the game as ``daemon.game.record.GameRecord`` folds it from the
event feed, so the daemon's announcer, the web controls and ``dgt-bridge say``
(which rebuilds the record from ``/state.json`` or an event file) give the same
answer. Written text; the voice gets ``vocabulary.pronounce``.

Requests: ``last`` (repeat the last move), ``moves`` (the last few), ``clock``
(both times, the asker's own first), ``move_number``, ``board`` (the position,
by colour and piece type), ``square`` (args ``{"square": "e4"}``), ``piece``
(args ``{"piece": "N"}``: a FEN letter, upper case white, lower case black; add
``"colour": "both"`` for both).
"""

from __future__ import annotations

from typing import Any

import chess

from daemon.game.record import GameRecord
from daemon.speech.messages import piece_name, result_text
from daemon.speech.phrases import phrase_for_move
from daemon.speech.vocabulary import Vocabulary

REQUESTS = ("last", "moves", "clock", "move_number", "board", "square", "piece")

_ORDER = (chess.KING, chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN)


def board_before_ply(record: GameRecord, ply: int) -> chess.Board | None:
    """The position before the half-move ``ply``, replayed from the record's start.

    After a restart the record starts at the resumed position (its first move has
    a ply above 1); replaying from there is right too. None when the moves do not
    replay (a feed that skipped something): the caller falls back to the event text.

    The record keeps its replay up to date a move at a time (``GameRecord.replayed_after``),
    so the position is that board with the later moves taken back: replaying the
    whole game here for every move said (``is_legal`` for each) cost ~1.5 ms at ply
    40 on this machine, ~20 ms at a Pi Zero 2 W's budget, and grew with the game
    (issue 19: press -> first sound). The board has no move stack before ``ply``:
    a phrase reads the position only.
    """
    moves = record.moves
    first_ply = moves[0].ply if moves else ply
    before = next((n for n, move in enumerate(moves) if move.ply >= ply), len(moves))
    if before != ply - first_ply:
        return None
    if before == 0:
        return chess.Board(record.start_fen, chess960=record.chess960)
    return record.replayed_after(before)  # None: a move before ``ply`` does not replay


def move_phrase(
    record: GameRecord,
    ply: int,
    vocabulary: Vocabulary,
    *,
    form: str = "short",
    say_pawn: bool = True,
    fallback: str = "",
) -> str:
    """The phrase of the half-move ``ply`` as the game now stands."""
    move = next((m for m in record.moves if m.ply == ply), None)
    if move is None:
        return fallback
    board = board_before_ply(record, ply)
    try:
        parsed = chess.Move.from_uci(move.uci)
        if board is not None and board.is_legal(parsed):
            return phrase_for_move(
                board, parsed, vocabulary, form=form, say_pawn=say_pawn, san=move.san
            )
    except ValueError:
        pass
    return fallback or move.san


def spoken_time(seconds: float, vocabulary: Vocabulary) -> str:
    total = max(0, int(seconds))  # whole seconds: what the clock shows
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)

    def unit(count: int, one: str, many: str) -> str:
        return vocabulary.words[one] if count == 1 else f"{count} {vocabulary.words[many]}"

    fields = {
        "hours": unit(hours, "one_hour", "hours"),
        "minutes": unit(minutes, "one_minute", "minutes"),
        "seconds": unit(secs, "one_second", "seconds"),
    }
    if hours:
        return vocabulary.message("time_hms", **fields)
    if minutes:
        return vocabulary.message("time_ms", **fields)
    return vocabulary.message("time_s", **fields)


def answer(
    what: str,
    args: dict[str, Any] | None,
    record: GameRecord,
    vocabulary: Vocabulary,
    **options: Any,
) -> str:
    """The written answer to one request, its phrases joined (``answer_phrases``,
    whose keywords ``options`` are); an unknown request is said to be unknown."""
    return joined(answer_phrases(what, args, record, vocabulary, **options))


#: A phrase of an answer: (key, text), or (key, text, text after an interruption), or
#: (key, text, text after an interruption, text when it follows the phrase before in
#: one utterance, its separator first: ", Bella zwei"). Only phrases with that
#: fourth form are ever said together (``SpeechSchedule``).
Spoken = tuple[str, ...]


def answer_phrases(
    what: str,
    args: dict[str, Any] | None,
    record: GameRecord,
    vocabulary: Vocabulary,
    *,
    by: str | None = None,
    form: str = "short",
    say_pawn: bool = True,
    clock_now: dict[str, float] | None = None,
    recent: int = 4,
    time_left: bool = False,
) -> list[Spoken]:
    """The answer as short phrases, each with a key that stays put as the game goes
    on (an interrupted answer goes on with the first key not yet said).

    ``clock_now``: both clocks as they stand at this moment (the announcer counts
    the running one down since its last report); default: the last report.
    ``time_left``: the clock answer also gives the time left (``speech.time_left``).
    """
    args = args if isinstance(args, dict) else {}
    if what == "last":
        last = record.last_move
        if last is None:
            return [("last", vocabulary.message("answer_no_move"))]
        phrase = move_phrase(record, last.ply, vocabulary, form=form, say_pawn=say_pawn)
        return [("last", vocabulary.message("answer_last", move=phrase))]
    if what == "moves":
        return _recent_moves(record, vocabulary, recent, form=form, say_pawn=say_pawn)
    if what == "clock":
        used = _time_used(record, vocabulary, by)
        return used + (_clock(record, vocabulary, by, clock_now) if time_left else [])
    if what == "move_number":
        if record.result:  # the game is over: nobody is to move
            text = vocabulary.message(
                "game_end",
                result=result_text(record.result, vocabulary),
                reason=vocabulary.reason(record.result_reason) if record.result_reason else "",
            )
            return [("move_number", text.rstrip(". "))]
        board = record.board()
        side = "white" if board.turn == chess.WHITE else "black"
        text = vocabulary.message(
            "answer_move_number", number=board.fullmove_number, side=vocabulary.colour(side)
        )
        return [("move_number", text)]
    if what == "board":
        return _board(record.board(), vocabulary, args, by)
    if what == "square":
        square = str(args.get("square") or "").lower()
        return [(what, _square(square, record.board(), vocabulary, what))]
    if what == "piece":
        return [(what, _piece(args, record.board(), vocabulary, what))]
    return [("unknown", vocabulary.message("answer_unknown", what=what))]


def _recent_moves(
    record: GameRecord, vocabulary: Vocabulary, count: int, *, form: str, say_pawn: bool
) -> list[Spoken]:
    """ "Letzte Züge", then each of the last ``count`` half-moves with its number."""
    moves = record.moves[-count:]
    if not moves:
        return [("last", vocabulary.message("answer_no_move"))]
    phrases: list[Spoken] = [("intro", vocabulary.message("answer_moves"))]
    for move in moves:
        text = move_phrase(record, move.ply, vocabulary, form=form, say_pawn=say_pawn)
        phrases.append(
            (
                f"ply:{move.ply}",
                vocabulary.message(
                    "answer_moves_item",
                    number=(move.ply + 1) // 2,
                    side=vocabulary.colour(move.by),
                    move=text,
                ),
            )
        )
    return phrases


def _time_used(record: GameRecord, vocabulary: Vocabulary, by: str | None) -> list[Spoken]:
    """E.9.d: "the number of moves completed and the time used by both players".

    Each player's time used is the sum of his moves' thinking times (a move's time
    less the previous move's, the first from the game's start), and for the player
    to move the time since the last move, up to the latest event: what his clock has
    run, whatever the increment or the time control (the clock shows time *left*).
    """
    moves = record.moves
    used = {"white": 0.0, "black": 0.0}
    previous = record.started_at
    for move in moves:
        if previous is not None and move.by in used:
            used[move.by] += max(0.0, move.t - previous)
        previous = move.t
    if not record.result and previous is not None and record.last_t is not None:
        to_move = "white" if record.board().turn == chess.WHITE else "black"
        used[to_move] += max(0.0, record.last_t - previous)
    completed = len(moves) // 2 if not moves or moves[0].ply == 1 else moves[-1].ply // 2
    phrases: list[Spoken] = [
        ("moves", vocabulary.message("answer_moves_completed", count=completed))
    ]
    first = by if by in ("white", "black") else "white"
    for side in (first, "black" if first == "white" else "white"):
        time = spoken_time(used[side], vocabulary)
        text = vocabulary.message("answer_time_used", side=vocabulary.colour(side), time=time)
        phrases.append((f"used:{side}", text))
    return phrases


def _clock(
    record: GameRecord,
    vocabulary: Vocabulary,
    by: str | None,
    clock_now: dict[str, float] | None,
) -> list[Spoken]:
    clock = clock_now or record.clock
    if not clock or clock.get("white") is None or clock.get("black") is None:
        return [("clock", vocabulary.message("answer_no_clock"))]
    first = by if by in ("white", "black") else "white"
    second = "black" if first == "white" else "white"
    return [
        (
            side,
            vocabulary.message(
                "answer_clock_side",
                side=vocabulary.colour(side),
                time=spoken_time(float(clock[side]), vocabulary),
            ),
        )
        for side in (first, second)
    ]


def _squares_of(board: chess.Board, piece_type: int, colour: bool, vocabulary: Vocabulary) -> str:
    squares = sorted(board.pieces(piece_type, colour), key=lambda s: (s % 8, s // 8))
    separator = vocabulary.words["list_separator"]
    return f"{separator} ".join(vocabulary.square(chess.square_name(s)) for s in squares)


def board_sides(args: dict[str, Any], by: str | None) -> list[str]:
    """The colours a board reading names, in order: ``order`` "own" (the asker's
    pieces), "opponent", "white" or "black"; else both, the asker's first."""
    own = by if by in ("white", "black") else "white"
    other = "black" if own == "white" else "white"
    order = str(args.get("order") or "")
    if order in ("white", "black"):
        return [order]
    return {"own": [own], "opponent": [other]}.get(order, [own, other])


def _board(
    board: chess.Board, vocabulary: Vocabulary, args: dict[str, Any], by: str | None
) -> list[Spoken]:
    """ "Weiß: Koenig Gustav eins", "Tuerme Anna eins, Felix eins", ... per colour and
    piece type; ``args`` may ask for one side (``order``), one ``rank`` ("3") or one
    ``file`` ("e").

    A phrase per square, each with the four forms of ``Spoken``: in fast play the
    schedule says as many squares in one utterance as the gap between two moves
    holds (one square, "Weiß: Bauern Bella zwei", fits where three did not, and a
    reading asked at move 15 of a blitz game ends within it); at leisure it says up
    to three squares of one piece type together, as before (``Pacing.leisure_chunk``)."""
    separator = vocabulary.words["list_separator"]
    phrases: list[Spoken] = []
    rank, file = str(args.get("rank") or ""), str(args.get("file") or "").lower()
    wanted = chess.BB_ALL
    if rank in tuple("12345678"):
        wanted &= chess.BB_RANKS[int(rank) - 1]
    if file and file in "abcdefgh" and len(file) == 1:
        wanted &= chess.BB_FILES[ord(file) - ord("a")]
    for side in board_sides(args, by):
        colour = side == "white"
        first_of_side = True
        for piece_type in _ORDER:
            mask = board.pieces_mask(piece_type, colour) & wanted
            squares = sorted(chess.SquareSet(mask), key=lambda s: (s % 8, s // 8))
            if not squares:
                continue
            letter = chess.piece_symbol(piece_type).upper()
            name = (
                vocabulary.pieces[letter] if len(squares) == 1 else vocabulary.pieces_plural[letter]
            )
            for index, square in enumerate(squares):
                where = vocabulary.square(chess.square_name(square))
                # After an interruption the phrase names its colour and piece again.
                with_side = vocabulary.message(
                    "answer_board_side", side=vocabulary.colour(side), pieces=f"{name} {where}"
                )
                if index:  # the same piece type goes on: "Bella zwei"
                    text, tail = where, f"{separator} {where}"
                elif first_of_side:
                    text, tail = with_side, f". {with_side}"
                else:
                    text = f"{name} {where}"
                    tail = f". {text}"
                phrases.append((f"{side}:{letter}:{index}", text, with_side, tail))
                first_of_side = False
    return phrases


def joined(phrases: list[Spoken]) -> str:
    """An answer's phrases as one text: each goes on with its ``tail`` (its fourth
    form, separator included) or after a full stop."""
    if not phrases:
        return ""
    rest = (p[3] if len(p) > 3 else f". {p[1]}" for p in phrases[1:])
    return phrases[0][1] + "".join(rest)


def _square(name: str, board: chess.Board, vocabulary: Vocabulary, what: str) -> str:
    if name not in chess.SQUARE_NAMES:
        return vocabulary.message("answer_unknown", what=f"{what} {name}".strip())
    piece = board.piece_at(chess.parse_square(name))
    where = vocabulary.square(name)
    if piece is None:
        return vocabulary.message("answer_square_empty", square=where)
    return vocabulary.message(
        "answer_square", square=where, piece=piece_name(piece.symbol(), vocabulary, None)
    )


def _piece(args: dict[str, Any], board: chess.Board, vocabulary: Vocabulary, what: str) -> str:
    letter = str(args.get("piece") or "")
    if len(letter) != 1 or letter.upper() not in "KQRBNP":
        return vocabulary.message("answer_unknown", what=f"{what} {letter}".strip())
    piece_type = chess.PIECE_SYMBOLS.index(letter.lower())
    if args.get("colour") == "both":
        colours = [chess.WHITE, chess.BLACK]
    elif args.get("colour") in ("white", "black"):
        colours = [args["colour"] == "white"]
    else:
        colours = [letter.isupper()]
    answers = []
    for colour in colours:
        symbol = chess.Piece(piece_type, colour).symbol()
        name = piece_name(symbol, vocabulary, None)
        if len(board.pieces(piece_type, colour)) > 1:  # "Bauern", as the board reading
            plural = vocabulary.pieces_plural[symbol.upper()]
            side = vocabulary.colour("white" if colour else "black")
            name = vocabulary.message("piece_of_colour", piece=plural, colour=side)
        squares = _squares_of(board, piece_type, colour, vocabulary)
        if squares:
            answers.append(vocabulary.message("answer_piece", piece=name, squares=squares))
        else:
            answers.append(vocabulary.message("answer_piece_none", piece=name))
    return ". ".join(answers)
