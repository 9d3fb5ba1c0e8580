"""Move phrases a blind player cannot mishear by their words: none said twice in a
row, and a promotion marked so its piece is not taken for the next move."""

from __future__ import annotations

import itertools

import chess
import chess.pgn
import pytest
import yaml

from daemon.speech.phrases import make_describer
from daemon.speech.settings import SpeechSettings
from daemon.speech.vocabulary import (
    VocabularyError,
    load_vocabulary,
    parse_vocabulary,
    resolve_vocabulary_path,
)

VOCABULARIES = ("appendix-e", "en", "es")


def alphabets(name: str) -> list[str]:
    data = yaml.safe_load(resolve_vocabulary_path(name).read_text(encoding="utf-8"))
    return ["", *sorted(data.get("file_alphabets") or {})]


def repeated(text: str) -> list[str]:
    words = text.replace(",", " ").split()
    return [a for a, b in itertools.pairwise(words) if a == b]


#: Positions where SAN disambiguates by the file the piece goes to ("Qcc7", "Rdd1").
SAME_FILE = [
    ("4k3/4Q3/8/8/8/2Q5/8/4K3 w - - 0 1", "c3c7", "Dame Cesar drei Cesar sieben Matt"),
    ("4k3/R7/8/8/8/8/8/3RK3 w - - 0 1", "d1d7", "Turm David eins David sieben"),
    ("3r2k1/8/8/8/8/8/8/r3K3 b - - 0 1", "d8d1", "Turm David acht David eins Schach"),
]


@pytest.mark.parametrize(("fen", "uci", "phrase"), SAME_FILE)
def test_disambiguation_by_the_target_file_names_the_whole_square(fen, uci, phrase) -> None:
    board = chess.Board(fen)
    move = chess.Move.from_uci(uci)
    assert board.san(move)[1] == board.san(move)[2]  # "Qcc7": SAN's own form stutters
    assert make_describer()(board, move) == phrase


def positions(shared, games: int = 8):
    """Every position of real games, and positions crowded with pieces that need
    every kind of disambiguation (every legal move of each is phrased)."""
    yield chess.Board("4k3/1Q3Q2/8/8/8/1Q3Q2/8/4K3 w - - 0 1")
    yield chess.Board("k7/8/8/3N1N2/2N3N1/8/2N3N1/K2R3R w - - 0 1")
    yield chess.Board("r3k2r/pPpppppp/8/8/8/8/PpPPPPPP/R3K2R w KQkq - 0 1")
    with open(shared / "data" / "games.pgn", encoding="utf-8") as pgn:
        for _ in range(games):
            game = chess.pgn.read_game(pgn)
            if game is None:
                return
            board = game.board()
            for move in game.mainline_moves():
                board.push(move)
                yield board.copy(stack=False)


@pytest.mark.parametrize(("name", "files"), [(n, f) for n in VOCABULARIES for f in alphabets(n)])
def test_no_word_is_said_twice_in_a_row(shared, name, files) -> None:
    vocabulary = load_vocabulary(name, files)
    describers = [
        make_describer(vocabulary, form=form, say_pawn=pawn)
        for form, pawn in itertools.product(("short", "long"), (True, False))
    ]
    said = 0
    stutters: dict[str, str] = {}
    for board in positions(shared):
        for move in board.legal_moves:
            for describe in describers:
                text = describe(board, move)
                said += 1
                if repeated(text):
                    stutters.setdefault(text, board.san(move))
    assert said > 8_000
    assert stutters == {}


@pytest.mark.parametrize("name", VOCABULARIES)
def test_a_promotion_has_a_marker_word_before_the_piece(name) -> None:
    vocabulary = load_vocabulary(name)
    board = chess.Board("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1")
    text = make_describer(vocabulary)(board, chess.Move.from_uci("b7b8r"))
    marker = vocabulary.words["promotion"]
    assert marker
    assert f"{vocabulary.square('b8')} {marker} {vocabulary.piece('R')}" in text


def test_a_vocabulary_without_a_promotion_marker_is_refused() -> None:
    data = yaml.safe_load(resolve_vocabulary_path("appendix-e").read_text(encoding="utf-8"))
    data["words"]["promotion"] = ""
    with pytest.raises(VocabularyError, match=r"'words\.promotion' must not be empty"):
        parse_vocabulary(data, source="mine.yaml")


def test_max_rate_is_capped_where_move_phrases_are_still_understood() -> None:
    """benchmarks/speech_intelligibility.py: move phrases come back from a
    recogniser as well at 300 words a minute as at 150; at 330 half as many, at
    360 (the old default) a fifth."""
    assert SpeechSettings().max_rate == 300
    assert SpeechSettings(max_rate=300).max_rate == 300
    with pytest.raises(ValueError, match=r"speech\.max_rate \(360\) is quicker than .* 300"):
        SpeechSettings(max_rate=360)
    with pytest.raises(ValueError, match=r"speech\.rate \(400\)"):
        SpeechSettings(rate=400, max_rate=300)
