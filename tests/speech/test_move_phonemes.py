"""Every move phrase, said whole, in its own voice: each word as it is said alone.

test_pronunciation.py checks each word alone; a voice reads a word differently
by its neighbours. espeak-ng's German voice reads "eins" as the unstressed
article "ein" whenever a word follows it ("Turm Anna eins Schach": _|aIns), and
Spanish reads the letter "a" before a rank as the preposition ("Rey a tres").
So here every shape of move phrase (piece, disambiguation by file, rank or
square, capture, en passant, promotion, check, mate, castling; with and without
"Bauer") is built in every shipped vocabulary and file alphabet, with every word
beside every word that can precede and follow it in that shape (each pair of
neighbouring slots through all its values; of those, each phrase that brings a
word trigram not heard yet, about 1,600-1,900 phrases a vocabulary), and the
voice (``espeak-ng -q -x``) reads each phrase whole. Each word unit (a piece, a
file, a rank, a square) must sound as it does alone, up to the sounds the voice
joins across a word boundary (English linking r, Spanish lenition and nasal
assimilation, pauses), and keep the stress on each of its words; a fixed word
("schlägt", "en passant", "promotes to") keeps the stress it has alone.
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml

from daemon.speech.phrases import token_words
from daemon.speech.tokens import Token
from daemon.speech.vocabulary import Vocabulary, load_vocabulary, resolve_vocabulary_path

ESPEAK = shutil.which("espeak-ng")
pytestmark = pytest.mark.skipif(ESPEAK is None, reason="espeak-ng is not installed")

FILES = "abcdefgh"
RANKS = "12345678"
VOCABULARIES = ("appendix-e", "en", "es")
#: Sounds the voice changes by the next word's first sound; not another word.
JOINS = [
    (r"r-", ""),  # English linking r ("Delta eight": d'Elt@r- 'eIt)
    (r";", ""),  # palatalised before a vowel
    (r"_[|!]", ""),  # glottal stops and short pauses
    (r"D", "d"),  # Spanish lenition: "David" after a vowel
    (r"B", "b"),
    (r"Q", "g"),
    (r"[mN](?=\s|$)", "n"),  # Spanish "Peón" before b or g
]
CONTENT = {"piece", "from_file", "from_rank", "from_square", "square", "promotion"}


def shape_slots(origin: str | None, capture: bool, extra: str | None, suffix: str | None):
    """The word slots of one phrase shape, with the values each slot can take."""
    slots: list[tuple[str, str]] = [("piece", "P" if extra else "KQRBNP")]
    if origin in ("file", "square"):
        slots.append(("from_file", FILES))
    if origin in ("rank", "square"):
        slots.append(("from_rank", RANKS))
    if capture:
        slots.append(("capture", "x"))
    slots += [("file", FILES), ("rank", RANKS)]
    if extra == "en_passant":
        slots.append(("en_passant", "e"))
    if extra == "promotion":
        slots.append(("promotion", "QRBN"))
    if suffix:
        slots.append((suffix, "+"))
    return slots


def slot_tokens(origin: str | None, values: dict[str, str]) -> list[Token]:
    tokens = [Token("piece", values["piece"])]
    if origin == "file":
        tokens.append(Token("from_file", values["from_file"]))
    elif origin == "rank":
        tokens.append(Token("from_rank", values["from_rank"]))
    elif origin == "square":
        tokens.append(Token("from_square", values["from_file"] + values["from_rank"]))
    if "capture" in values:
        tokens.append(Token("capture"))
    tokens.append(Token("square", values["file"] + values["rank"]))
    for kind in ("en_passant", "promotion", "check", "mate"):
        if kind in values:
            tokens.append(Token(kind, values[kind] if kind == "promotion" else ""))
    return tokens


def candidate_moves() -> Iterator[list[Token]]:
    """Every shape, each pair of neighbouring slots through all its values."""
    for origin, capture, extra, suffix in itertools.product(
        (None, "file", "rank", "square"),
        (False, True),
        (None, "en_passant", "promotion"),
        (None, "check", "mate"),
    ):
        if extra == "en_passant" and not capture:
            continue
        slots = shape_slots(origin, capture, extra, suffix)
        for i in range(len(slots) - 1):
            pairs = itertools.product(slots[i][1], slots[i + 1][1])
            for n, (x, y) in enumerate(pairs):
                values = {
                    name: choices[(n + k) % len(choices)] for k, (name, choices) in enumerate(slots)
                }
                values[slots[i][0]], values[slots[i + 1][0]] = x, y
                yield slot_tokens(origin, values)
    for side, suffix in itertools.product(("castle_short", "castle_long"), (None, "check", "mate")):
        yield [Token(side)] + ([Token(suffix)] if suffix else [])


def move_phrases(vocabulary: Vocabulary) -> list[list[tuple[str, str]]]:
    """Phrases as (token kind, words) units, until every word trigram is in one."""
    seen: set[tuple[str, ...]] = set()
    phrases = []
    for say_pawn in (True, False):
        for tokens in candidate_moves():
            units = []
            for token in tokens:
                if token.kind == "promotion":  # the marker, then the piece
                    units.append(("promotion_word", vocabulary.words["promotion"]))
                    units.append(("promotion", vocabulary.piece(token.value)))
                    continue
                words = token_words([token], vocabulary, say_pawn=say_pawn)
                if words:
                    units.append((token.kind, words))
            words = ["^", *" ".join(w for _, w in units).split(), "$"]
            trigrams = {tuple(words[i : i + 3]) for i in range(len(words) - 2)}
            if trigrams - seen:
                seen |= trigrams
                phrases.append(units)
    return phrases


def espeak(voice: str, texts: list[str]) -> list[str]:
    """One espeak-ng for many texts: one sentence each, one line of phonemes each."""
    result = subprocess.run(
        [ESPEAK or "espeak-ng", "-q", "-x", "-v", voice],
        input="".join(f"{text}.\n" for text in texts),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert len(lines) == len(texts), "espeak-ng split a phrase"
    return lines


def sounds(phonemes: str) -> list[str]:
    for pattern, replacement in JOINS:
        phonemes = re.sub(pattern, replacement, phonemes)
    return re.sub(r"[',]", "", phonemes).split()


def stressed(word: str) -> bool:
    return "'" in word or "," in word


def alphabets(name: str) -> list[str]:
    data = yaml.safe_load(resolve_vocabulary_path(name).read_text(encoding="utf-8"))
    return ["", *sorted(data.get("file_alphabets") or {})]


def misheard(name: str, files: str) -> dict[str, tuple[str, str]]:
    """Phrase -> (said, each unit alone) for each phrase the voice says otherwise."""
    vocabulary = load_vocabulary(name, files)
    phrases = move_phrases(vocabulary)
    units = sorted({words for phrase in phrases for _, words in phrase})
    spoken = espeak(vocabulary.voice, [vocabulary.pronounce(u) for u in units])
    alone = dict(zip(units, spoken, strict=True))
    said = espeak(
        vocabulary.voice, [vocabulary.pronounce(" ".join(w for _, w in p)) for p in phrases]
    )
    wrong = {}
    for phrase, phonemes in zip(phrases, said, strict=True):
        text = " ".join(words for _, words in phrase)
        expected = " ".join(alone[words] for _, words in phrase)
        got_words = phonemes.split()
        if len(got_words) != len(expected.split()):
            wrong[text] = (phonemes, expected)
            continue
        position = 0
        for kind, words in phrase:
            own = alone[words].split()
            here = got_words[position : position + len(own)]
            position += len(own)
            if kind in CONTENT:
                same = sounds(" ".join(here)) == sounds(" ".join(own))
                if not same or not all(stressed(w) for w in here):
                    wrong[text] = (phonemes, expected)
            elif any(stressed(w) and not stressed(h) for w, h in zip(own, here, strict=True)):
                wrong[text] = (phonemes, expected)
    return wrong


CASES = [(name, files) for name in VOCABULARIES for files in alphabets(name)]


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str], dict[str, tuple[str, str]]]:
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(CASES, pool.map(lambda case: misheard(*case), CASES), strict=True))


@pytest.mark.parametrize(("name", "files"), CASES)
def test_every_word_of_every_move_phrase_is_said_as_alone(name, files, results) -> None:
    wrong = results[(name, files)]
    sample = dict(itertools.islice(wrong.items(), 8))
    assert wrong == {}, f"{len(wrong)} phrases said otherwise (said, alone): {sample}"


def test_the_phrase_space_has_every_word_beside_every_neighbour() -> None:
    """The test above is only as good as its phrases: every file after every
    piece, every rank after every file, every rank before every following word."""
    vocabulary = load_vocabulary("appendix-e")
    text = {" ".join(w for _, w in phrase) for phrase in move_phrases(vocabulary)}
    joined = "\n".join(f"^ {t} $" for t in text)
    for piece, file in itertools.product(vocabulary.pieces.values(), vocabulary.files):
        assert f"^ {piece} {file} " in joined
    for file, rank in itertools.product(vocabulary.files, vocabulary.ranks):
        assert f" {file} {rank} " in joined
        assert f" {rank} {file} " in joined
    for rank in [*vocabulary.ranks, "$"]:
        for after in ("Schach", "Matt", "schlägt", "en passant", "Umwandlung", "$"):
            if rank != "$":
                assert f" {rank} {after}" in joined, (rank, after)
    assert " Anna eins Schach $" in joined
    assert len(text) > 1500


def test_eins_before_a_word_is_stressed_as_the_rank() -> None:
    vocabulary = load_vocabulary("appendix-e")
    assert espeak("de", ["Turm Anna eins Schach"]) == ["t'URm _!'anA: _|aIns S'ax"]  # "ein"
    assert espeak("de", [vocabulary.pronounce("Turm Anna eins Schach")]) == [
        "t'URm _!'anA: _|'aIns S'ax"
    ]


def test_wiederhergestellt_is_stressed_on_wie() -> None:
    vocabulary = load_vocabulary("appendix-e")
    text = vocabulary.pronounce(vocabulary.message("position_restored"))
    assert espeak("de", [text]) == ["p,o:zi:tsj'o:n v'i:d3h,Erg@St,Elt"]
    assert espeak("de", ["Position wiederhergestellt"]) == ["p,o:zi:tsj'o:n vi:d3h'ErgESt,Elt"]
