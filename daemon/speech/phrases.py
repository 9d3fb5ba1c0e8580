"""Move tokens become words of one vocabulary: the written phrase of a move.

``make_describer`` binds a vocabulary and the options once and gives the rules
core the ``describe_move(board_before, move) -> str`` it calls for the ``speech``
field of each ``move`` event. That text keeps the official spellings; the voice
gets ``vocabulary.pronounce(text)``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol

import chess

from daemon.speech.tokens import Token, move_tokens
from daemon.speech.vocabulary import DEFAULT_VOCABULARY, Vocabulary, load_vocabulary


class MoveDescriber(Protocol):
    """``describe(board_before, move, san=None) -> str``: the words for a move (its
    SAN as the rules core wrote it, when given, said rather than written again)."""

    def __call__(
        self, board_before: chess.Board, move: chess.Move, san: str | None = None
    ) -> str: ...


def token_words(tokens: list[Token], vocabulary: Vocabulary, *, say_pawn: bool = True) -> str:
    words: list[str] = []
    for token in tokens:
        kind, value = token.kind, token.value
        if kind == "piece":
            if value != "P" or say_pawn:
                words.append(vocabulary.piece(value))
        elif kind == "from_file":
            words.append(vocabulary.files[ord(value) - ord("a")])
        elif kind == "from_rank":
            words.append(vocabulary.ranks[int(value) - 1])
        elif kind in ("from_square", "square"):
            words.append(vocabulary.square(value))
        elif kind == "promotion":
            words.append(vocabulary.words["promotion"])
            words.append(vocabulary.piece(value))
        else:  # capture, en_passant, castle_short, castle_long, check, mate
            words.append(vocabulary.words[kind])
    return " ".join(w for w in words if w)


def phrase_for_move(
    board_before: chess.Board,
    move: chess.Move,
    vocabulary: Vocabulary,
    *,
    form: str = "short",
    say_pawn: bool = True,
    san: str | None = None,
) -> str:
    """The written phrase: "Springer Felix drei", "Bauer Eva acht Dame" (``san``: the
    move's SAN as the rules core wrote it, said rather than written again)."""
    tokens = move_tokens(board_before, move, form, san)
    return token_words(tokens, vocabulary, say_pawn=say_pawn)


def make_describer(
    vocabulary: Vocabulary | str | None = None, form: str = "short", say_pawn: bool = True
) -> MoveDescriber:
    """A ``describe_move(board_before, move) -> str`` with everything bound.

    ``vocabulary``: a loaded Vocabulary, a shipped name or a YAML path (default:
    Appendix E). Loading happens here, once, so a bad file fails at start-up.
    """
    if form not in ("short", "long"):
        raise ValueError(f"form must be 'short' or 'long', not {form!r}")
    vocab = (
        vocabulary
        if isinstance(vocabulary, Vocabulary)
        else load_vocabulary(vocabulary or DEFAULT_VOCABULARY)
    )

    def describe(board_before: chess.Board, move: chess.Move, san: str | None = None) -> str:
        return phrase_for_move(board_before, move, vocab, form=form, say_pawn=say_pawn, san=san)

    # The function carries its words, so a caller holding only the describer can
    # phrase the rest alike; a function attribute mypy does not model.
    describe.vocabulary = vocab  # type: ignore[attr-defined]
    return describe


@lru_cache(maxsize=1)
def _default_describer() -> MoveDescriber:
    return make_describer()


def describe_move(board_before: chess.Board, move: chess.Move, san: str | None = None) -> str:
    """The Appendix E short-form phrase, the rules core's default ``describe_move``."""
    return _default_describer()(board_before, move, san)
