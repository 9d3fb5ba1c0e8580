"""What espeak-ng actually says for every spoken word of every shipped vocabulary.

Each vocabulary's voice (``espeak-ng -q -x -v VOICE``) is asked for the phonemes
of every word its texts can say: file names (every file alphabet, each with a rank
as it is always said), ranks, pieces, the fixed words, colours, reasons, request
names and every word of every message. The expected phonemes, in espeak's
notation, are in ``tests/speech/phonemes/<vocabulary>.yaml``: how the word is
pronounced in the language, checked by ear and against a dictionary word by word
("Rochade" rOS'A:d@ = [ʁɔˈʃaːdə], "Remis" r@m'i: = [ʁəˈmiː], "David" d'A:vIt,
"en passant" A~ pas'A~). Where the voice gets a word wrong, the vocabulary's
``pronunciation`` lexicon fixes it; a word added to a vocabulary without an
expected pronunciation fails here until someone has checked it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from daemon.speech.vocabulary import Vocabulary, load_vocabulary, resolve_vocabulary_path

ESPEAK = shutil.which("espeak-ng")
pytestmark = pytest.mark.skipif(ESPEAK is None, reason="espeak-ng is not installed")

EXPECTED = Path(__file__).with_name("phonemes")
VOCABULARIES = ("appendix-e", "en", "es")
WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")


def phonemes(voice: str, text: str) -> str:
    result = subprocess.run(
        [ESPEAK or "espeak-ng", "-q", "-x", "-v", voice, text],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return " ".join(result.stdout.split())


def alphabets(name: str) -> list[str]:
    data = yaml.safe_load(resolve_vocabulary_path(name).read_text(encoding="utf-8"))
    return ["", *sorted(data.get("file_alphabets") or {})]


def spoken_units(vocabulary: Vocabulary) -> set[str]:
    """Every word the vocabulary's texts can say; a file always with a rank, a
    one-letter word with the word after it, and the lexicon's phrases ("en
    passant") as one unit."""
    texts = [*vocabulary.ranks, *vocabulary.pieces.values(), *vocabulary.pieces_plural.values()]
    texts += [w for key, w in vocabulary.words.items() if key != "list_separator"]
    texts += [*vocabulary.colours.values(), *vocabulary.reasons.values()]
    texts += [*vocabulary.requests.values()]
    texts += [re.sub(r"\{\w+\}", " ", template) for template in vocabulary.messages.values()]
    phrases = sorted((k for k in vocabulary.pronunciation if " " in k), key=len, reverse=True)
    units = {f"{name} {vocabulary.ranks[0]}" for name in vocabulary.files}
    for text in texts:
        for phrase in phrases:
            if re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text):
                units.add(phrase)
                text = text.replace(phrase, " ")
        words = WORD.findall(text)
        for index, word in enumerate(words):
            # A one-letter word alone reads as the letter's name: say it as in its text.
            if len(word) == 1 and index + 1 < len(words):
                units.add(f"{word} {words[index + 1]}")
            else:
                units.add(word)
    return units


def expected(name: str) -> dict[str, str]:
    return yaml.safe_load((EXPECTED / f"{name}.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("name", "files"), [(name, files) for name in VOCABULARIES for files in alphabets(name)]
)
def test_every_spoken_word_has_its_expected_phonemes(name: str, files: str) -> None:
    vocabulary = load_vocabulary(name, files)
    want = expected(name)
    units = spoken_units(vocabulary)
    assert units <= set(want), f"no expected phonemes for {sorted(units - set(want))}"
    with ThreadPoolExecutor(4) as pool:
        got = dict(
            zip(
                sorted(units),
                pool.map(
                    lambda unit: phonemes(vocabulary.voice, vocabulary.pronounce(unit)),
                    sorted(units),
                ),
                strict=True,
            )
        )
    wrong = {unit: (got[unit], want[unit]) for unit in sorted(units) if got[unit] != want[unit]}
    assert wrong == {}, "said (got, expected)"


@pytest.mark.parametrize(
    ("word", "voice", "misread"),
    [
        ("fuenf", "de", "f'u:E2nf"),  # the official spelling alone: "fu-enf"
        ("Laeufer", "de", "l'E:u:f3"),
        ("Koenig", "de", "k'o:e:n,IC"),
        ("Cesar", "de", "k'e:zA:r"),  # "Kesar"
        ("Rochade", "de", "r'OxA:d@"),  # the ch of "Bach", stress on the first syllable
        ("Remis", "de", "r'e:mIs"),  # ['re:mIs]
        ("David", "de", "dav'i:t"),  # stressed on the second syllable
        ("en passant", "de", "_!'e:n pas'ant"),
        ("en passant", "en", "'En p'aas@nt"),
    ],
)
def test_without_the_lexicon_the_voice_says_something_else(word, voice, misread) -> None:
    """Why each lexicon entry exists."""
    assert phonemes(voice, word) == misread


def test_english_letters_keep_the_article_an_article() -> None:
    letters = load_vocabulary("en", "letters")
    assert phonemes("en", "Queen a five") == "kw'i:n a# f'aIv"  # "a" as "uh"
    assert phonemes("en", letters.pronounce("Queen a five")) == "kw'i:n 'eI f'aIv"
    assert letters.pronounce("Clock pressed without a move") == "Clock pressed without a move"
