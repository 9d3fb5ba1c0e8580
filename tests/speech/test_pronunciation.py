"""What espeak-ng actually says for each vocabulary word (``espeak-ng -v <voice> -x``).

The expected phonemes are how the words are pronounced in the language (written
in espeak's phoneme notation): "fünf" is f'ynf, and the official spelling "fuenf"
must not reach the voice, because espeak reads it f'u:E2nf. Skips where espeak-ng
is not installed; CI installs it, so there it never skips.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from daemon.speech.vocabulary import PIECE_LETTERS, load_vocabulary

ESPEAK = shutil.which("espeak-ng")
pytestmark = pytest.mark.skipif(ESPEAK is None, reason="espeak-ng is not installed")


def phonemes(voice: str, text: str) -> str:
    result = subprocess.run(
        [ESPEAK or "espeak-ng", "-q", "-x", "-v", voice, text],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return " ".join(result.stdout.split())


# Every word of the default vocabulary (files, ranks, pieces, plurals, fixed words).
GERMAN = {
    "Anna": "_!'anA:",
    "Bella": "b'ElA:",
    "Cesar": "ts'E:zA:r",  # "Zäsar"; the spelling alone gives k'e:zA:r ("Kesar")
    "David": "dav'i:t",
    "Eva": "_!'e:vA:",
    "Felix": "f'e:lIks",
    "Gustav": "g'UstA:f",
    "Hector": "h'Ekto:r",
    "eins": "_|'aIns",
    "zwei": "tsv'aI",
    "drei": "dr'aI",
    "vier": "f'i:r",
    "fuenf": "f'ynf",  # "fünf"
    "sechs": "z'Eks",
    "sieben": "z'i:b@n",
    "acht": "_!'axt",
    "Koenig": "k'Y:nIC",  # "König"
    "Dame": "d'A:m@",
    "Damen": "d'A:m@n",
    "Turm": "t'URm",
    "Tuerme": "t'yrm@",  # "Türme"
    "Laeufer": "l'OYf3",  # "Läufer"
    "Springer": "Spr'IN3",
    "Bauer": "b'aU3",
    "Bauern": "b'aU3n",
    "schlägt": "Sl'E:kt",
    "Schach": "S'ax",
    "Matt": "m'at",
    "en passant": "_!'aN p'asaN",  # said "ang passang", near the French
    "Kurze Rochade": "k'URts@ r'OxA:d@",
    "Lange Rochade": "l'aN@ r'OxA:d@",
    "Weiß": "v'aIs",
    "eine Stunde": "_|,aIn@ St'Und@",
    "Stunden": "St'Und@n",
    "eine Minute": "_|,aIn@ mi:n'u:t@",
    "Minuten": "mi:n'u:t@n",
    "eine Sekunde": "_|,aIn@ ze:k'Und@",
    "Sekunden": "ze:k'Und@n",
    "Schwarz": "Sv'arts",
}

ENGLISH = {
    "b": "b'i:",
    "c": "s'i:",
    "d": "d'i:",
    "e": "'i:",
    "f": "'Ef",
    "g": "dZ'i:",
    "h": "'eItS",
    "one": "w'0n",
    "two": "t'u:",
    "three": "Tr'i:",
    "four": "f'o@",
    "five": "f'aIv",
    "six": "s'Iks",
    "seven": "s'Ev@n",
    "eight": "'eIt",
    "King": "k'IN",
    "Queen": "kw'i:n",
    "Rook": "r'Uk",
    "Bishop": "b'IS@p",
    "Knight": "n'aIt",
    "Pawn": "p'O:n",
    "takes": "t'eIks",
    "check": "tS'Ek",
}

SPANISH = {
    "b": "b'e",
    "c": "T'e",
    "d": "d'e",
    "f": "'efe",
    "g": "x'e",
    "h": "'atSe",
    "uno": "'uno",
    "dos": "d'os",
    "cinco": "T'inko",
    "ocho": "'otSo",
    "Rey": "R2'eI",
    "Dama": "d'ama",
    "Torre": "t'oR2e",
    "Alfil": "alf'il",
    "Caballo": "kaB'al^o",
    "Peón": "pe'on",
    "jaque": "x'ake",
    "al paso": "al p'aso",
}


def vocabulary_words(name: str) -> set[str]:
    vocabulary = load_vocabulary(name)
    words = set(vocabulary.files) | set(vocabulary.ranks)
    for letter in PIECE_LETTERS.values():
        words |= {vocabulary.pieces[letter], vocabulary.pieces_plural[letter]}
    words |= {w for k, w in vocabulary.words.items() if w and k != "list_separator"}
    words |= set(vocabulary.colours.values())
    return words


def test_every_default_vocabulary_word_has_its_expected_phonemes() -> None:
    vocabulary = load_vocabulary("appendix-e")
    words = vocabulary_words("appendix-e")
    assert words <= set(GERMAN), f"no expected phonemes for {sorted(words - set(GERMAN))}"
    wrong = {
        word: got
        for word in sorted(words)
        if (got := phonemes(vocabulary.voice, vocabulary.pronounce(word))) != GERMAN[word]
    }
    assert wrong == {}


@pytest.mark.parametrize(("name", "expected"), [("en", ENGLISH), ("es", SPANISH)])
def test_other_vocabularies_words_are_pronounced_right(name: str, expected: dict) -> None:
    vocabulary = load_vocabulary(name)
    assert set(expected) <= vocabulary_words(name)
    wrong = {
        word: got
        for word, want in expected.items()
        if (got := phonemes(vocabulary.voice, vocabulary.pronounce(word))) != want
    }
    assert wrong == {}


@pytest.mark.parametrize("word", ["fuenf", "Laeufer", "Koenig", "Cesar"])
def test_official_spellings_alone_would_be_misread(word: str) -> None:
    """Why the lexicon exists: without it the voice says something else."""
    assert phonemes("de", word) != GERMAN[word]


def test_file_a_is_the_letter_not_the_article() -> None:
    vocabulary = load_vocabulary("en")
    assert phonemes("en", "Queen a five") == "kw'i:n a# f'aIv"  # "a" as "uh"
    assert phonemes("en", vocabulary.pronounce("Queen a five")) == "kw'i:n 'eI f'aIv"
