"""check-config's speech warnings and the file alphabets a user can choose."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.speech.checks import speech_warnings
from daemon.speech.settings import SpeechSettings
from daemon.speech.vocabulary import VocabularyError, load_vocabulary

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="no espeak-ng")


def check_config(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    path = tmp_path / "hall.yaml"
    path.write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "daemon", "check-config", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@needs_espeak
def test_check_config_warns_of_an_english_voice_on_the_appendix_e_vocabulary(tmp_path) -> None:
    result = check_config(tmp_path, "speech:\n  voice: en\n")
    assert result.returncode == 0  # valid, but it would sound wrong
    lines = result.stdout.splitlines()
    assert lines[0].endswith("hall.yaml: OK")
    assert "the voice 'en' speaks en-gb, but the vocabulary" in lines[1]
    assert "is in de" in lines[1] and "use voice 'de'" in lines[1]


@needs_espeak
def test_a_fitting_voice_or_the_vocabularys_own_gives_no_warning() -> None:
    assert speech_warnings(SpeechSettings()) == []
    assert speech_warnings(SpeechSettings(vocabulary="en", voice="en-us")) == []
    assert speech_warnings(SpeechSettings(vocabulary="es", voice="es-419")) == []
    assert speech_warnings(SpeechSettings(engine="text", voice="en")) == []  # nothing speaks


def test_an_unknown_voice_would_speak_english_and_is_named() -> None:
    languages = {"de": "de", "en": "en-gb"}
    assert speech_warnings(SpeechSettings(voice="xx-none"), languages) == [
        "speech.voice: espeak-ng has no voice 'xx-none'; it would speak English"
        " (see espeak-ng --voices)"
    ]


def test_en_and_es_name_the_files_with_a_spelling_alphabet_by_default() -> None:
    assert load_vocabulary("en").square("b7") == "Bravo seven"
    assert load_vocabulary("es").square("d1") == "David uno"
    assert load_vocabulary("en", "appendix-e").square("c3") == "Cesar three"
    assert load_vocabulary("es", "radio").square("a8") == "Antonio ocho"
    letters = load_vocabulary("en", "letters")
    assert letters.square("a1") == "a one"  # written; the voice hears "eh one"
    assert letters.pronounce("Rook a one, a move") == "Rook eh one, a move"


def test_an_unknown_file_alphabet_is_refused_with_the_known_ones(tmp_path) -> None:
    with pytest.raises(VocabularyError, match=r"no file alphabet 'nato'.*letters, radio"):
        load_vocabulary("es", "nato")
    result = check_config(tmp_path, "speech:\n  vocabulary: es\n  files: nato\n")
    assert result.returncode == 2
    assert "line 3: speech.files:" in result.stderr
