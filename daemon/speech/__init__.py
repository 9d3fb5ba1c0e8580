"""Spoken announcements for blind and visually impaired players (Appendix E).

The pieces, from pure to impure:

- ``tokens``: a move becomes tokens (piece, disambiguation, capture, square,
  promotion, castling, en passant, check, mate) - no words yet;
- ``vocabulary``: the words of one language, from a YAML file, with the
  pronunciation lexicon that turns official spellings into what a voice says right;
- ``phrases``: tokens to words (``make_describer`` gives the rules core its
  ``describe_move``);
- ``messages``: what is said for each event of the feed (irregularities with their
  fix, game events);
- ``answers``: the answers to a player's requests (Appendix E.2.9d);
- ``schedule``: which phrase is said next, on simulated time;
- ``settings`` and ``checks``: the ``speech:`` section, and what ``check-config``
  warns about in it;
- ``wavs``: silence trimmed, one ear of a stereo pair;
- ``engines``: pyttsx3, espeak-ng, plain text, the WAV player; ``synthesis`` (a
  thread) or ``pyttsx3_worker`` (a child process) owns pyttsx3, and ``stream`` keeps
  one player running per output;
- ``announcer``: the asyncio shell that ties the feed to the schedule and the engines;
- ``speechfirst``: the daemon's gate that a move's phrase holds until its first
  sound, while the page and MQTT wait (a quarter of a second at most);
- ``simulation`` and ``latency``: the announcer on simulated time, for the tests and
  the benchmarks, and the time from a move to its first sound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from daemon.lazy import lazy_attributes

if TYPE_CHECKING:
    from daemon.speech.announcer import Announcer, build_announcers
    from daemon.speech.phrases import describe_move, make_describer
    from daemon.speech.settings import SpeechSettings
    from daemon.speech.vocabulary import Vocabulary, VocabularyError, load_vocabulary

#: Where each name lives: imported on first use, so that reading the configuration
#: (``daemon.speech.settings``) or phrasing a move does not start asyncio and the
#: engines for every command.
_HOMES = {
    "Announcer": "announcer",
    "SpeechSettings": "settings",
    "Vocabulary": "vocabulary",
    "VocabularyError": "vocabulary",
    "describe_move": "phrases",
    "load_vocabulary": "vocabulary",
    "build_announcers": "announcer",
    "make_describer": "phrases",
}

__getattr__ = lazy_attributes(__name__, _HOMES)


__all__ = [
    "Announcer",
    "SpeechSettings",
    "Vocabulary",
    "VocabularyError",
    "build_announcers",
    "describe_move",
    "load_vocabulary",
    "make_describer",
]
