"""What ``check-config`` warns about in the speech section: mistakes that start fine
and sound wrong.

An English voice reading the Appendix E vocabulary says "dray" for "drei" and
"veer" for "vier", and espeak-ng gives no warning of its own; a blind player hears
a muddle. So the voice's language is compared with the vocabulary's.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from daemon.speech.vocabulary import VocabularyError, vocabulary_of


def voice_languages(program: str = "espeak-ng") -> dict[str, str]:
    """espeak-ng's voices: every name ``-v`` accepts -> the language it speaks."""
    try:
        listing = subprocess.run(
            [program, "--voices"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    languages: dict[str, str] = {}
    for line in listing.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 5 or parts[1] == "variant":
            continue
        language = parts[1].lower()
        file = parts[4].lower()
        for name in (parts[1], parts[3], file, file.rsplit("/", 1)[-1]):
            languages.setdefault(name.lower(), language)
    return languages


def base_language(code: str) -> str:
    """ "en-us" -> "en", "es-419" -> "es", "de+f3" -> "de"."""
    return code.split("+", 1)[0].split("-", 1)[0].split("_", 1)[0].lower()


def speech_warnings(speech: Any, languages: dict[str, str] | None = None) -> list[str]:
    """Warnings for a ``SpeechSettings``: a voice that does not speak the vocabulary's
    language, or that espeak-ng does not know (it would speak English instead)."""
    if speech is None or getattr(speech, "engine", "") == "text":
        return []
    try:
        vocabulary = vocabulary_of(speech)
    except VocabularyError:
        return []  # the configuration check reports it
    voice = speech.voice or vocabulary.voice
    if languages is None:
        program = shutil.which("espeak-ng")
        languages = voice_languages(program) if program else {}
    if not languages:
        return []
    name = voice.split("+", 1)[0].lower()
    spoken = languages.get(name)
    if spoken is None:
        return [
            f"speech.voice: espeak-ng has no voice {voice!r}; it would speak English"
            " (see espeak-ng --voices)"
        ]
    if base_language(spoken) != base_language(vocabulary.language):
        return [
            f"speech.voice: the voice {voice!r} speaks {spoken}, but the vocabulary"
            f" {vocabulary.name!r} is in {vocabulary.language}: its words will be"
            f" mispronounced (use voice {vocabulary.voice!r}, or leave voice empty)"
        ]
    return []
