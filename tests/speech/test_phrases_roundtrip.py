"""Every move of many real games: the spoken phrase read back gives the move again.

A listener who knows the vocabulary must be able to write the move down from the
phrase alone: the short form read back word by word is the SAN (without "P" and
with en passant dropped), the long form read back is the from and to square.
The reader below is written independently of the code under test.
"""

from __future__ import annotations

import itertools

import chess
import chess.pgn
import pytest

from daemon.speech.phrases import make_describer
from daemon.speech.vocabulary import load_vocabulary

GAMES = 80  # about 6,000 half-moves per vocabulary


def reader(name: str) -> dict[str, str]:
    """Word (or two-word group) -> the SAN characters it stands for."""
    vocabulary = load_vocabulary(name)
    words: dict[str, str] = {}
    words.update({w: "abcdefgh"[i] for i, w in enumerate(vocabulary.files)})
    words.update({w: "12345678"[i] for i, w in enumerate(vocabulary.ranks)})
    words.update({w: letter for letter, w in vocabulary.pieces.items()})
    words[vocabulary.words["capture"]] = "x"
    words[vocabulary.words["check"]] = "+"
    words[vocabulary.words["mate"]] = "#"
    words[vocabulary.words["castle_short"]] = "O-O"
    words[vocabulary.words["castle_long"]] = "O-O-O"
    words[vocabulary.words["en_passant"]] = ""
    if vocabulary.words["promotion"]:
        words[vocabulary.words["promotion"]] = "="
    return words


def read_back(phrase: str, words: dict[str, str]) -> str:
    """Greedy longest match of word groups, then SAN-shaped clean-up."""
    tokens = phrase.split(" ")
    out: list[str] = []
    i = 0
    while i < len(tokens):
        for length in (3, 2, 1):
            group = " ".join(tokens[i : i + length])
            if group in words:
                out.append(words[group])
                i += length
                break
        else:
            raise AssertionError(f"unknown word {tokens[i]!r} in {phrase!r}")
    text = "".join(out)
    if text.startswith("P"):
        text = text[1:]  # SAN has no pawn letter
    # A promotion piece follows the to-square: "e8Q" -> "e8=Q".
    for i in range(len(text) - 1, 0, -1):
        if text[i] in "QRBN" and text[i - 1] in "12345678":
            text = text[:i] + "=" + text[i:]
            break
    return text.replace("==", "=")


def real_games(shared, count: int):
    with open(shared / "data" / "games.pgn", encoding="utf-8") as pgn:
        for _ in range(count):
            game = chess.pgn.read_game(pgn)
            if game is None:
                return
            yield game


@pytest.mark.parametrize("vocabulary", ["appendix-e", "en", "es"])
def test_short_form_reads_back_as_san(shared, vocabulary: str) -> None:
    describe = make_describer(vocabulary)
    words = reader(vocabulary)
    checked = 0
    for game in real_games(shared, GAMES):
        board = game.board()
        for move in game.mainline_moves():
            san = board.san(move)
            # "Qcc7" is said with the whole from-square ("Dame Cesar drei Cesar
            # sieben"): the same move, never a word twice in a row.
            assert board.parse_san(read_back(describe(board, move), words)) == move, san
            board.push(move)
            checked += 1
    assert checked > 4000


def test_long_form_reads_back_as_from_and_to_square(shared) -> None:
    describe = make_describer("appendix-e", form="long")
    words = reader("appendix-e")
    for game in itertools.islice(real_games(shared, GAMES), 0, GAMES, 3):
        board = game.board()
        for move in game.mainline_moves():
            text = read_back(describe(board, move), words)
            if board.is_castling(move):
                assert text.rstrip("+#") in ("O-O", "O-O-O")
            else:
                squares = [text[i : i + 2] for i in range(len(text) - 1)]
                squares = [s for s in squares if s in chess.SQUARE_NAMES]
                assert squares[0] == chess.square_name(move.from_square)
                assert squares[-1] == chess.square_name(move.to_square)
            board.push(move)
