"""The words of one language, read from a YAML file, checked before the first game.

A vocabulary is everything the announcer says, so a user adds a language with one
YAML file and no code. A file that lacks a key or has a wrong one is refused at
load time with the file and the key named: discovering it at the first illegal
move, in the middle of a game, would leave a blind player without the one
announcement that mattered.

The written words keep the official spellings (Appendix E: "fuenf", "Laeufer",
"Koenig", "Cesar"); ``pronunciation`` maps a written word to what the voice must be
given to say it right ("fünf", "Läufer", "König", "Zäsar"). It is applied to whole
words only, so it can safely run over any text the announcer builds.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.files import yamlcache
from daemon.files.resources import vocabularies_dir
from drivers.records import FrozenRecord

#: The vocabulary used when the configuration names none: FIDE Appendix E.
DEFAULT_VOCABULARY = "appendix-e"

PIECE_NAMES = ("king", "queen", "rook", "bishop", "knight", "pawn")
PIECE_LETTERS = {"king": "K", "queen": "Q", "rook": "R", "bishop": "B", "knight": "N", "pawn": "P"}

#: words: key -> whether it may be empty ("" = say nothing).
WORDS: dict[str, bool] = {
    "capture": False,
    "check": False,
    "mate": False,
    "en_passant": False,
    "castle_short": False,
    "castle_long": False,
    # said before the promoted piece: without it "Bauer Felix acht Laeufer Schach"
    # lets the piece be taken for the start of the next move (Appendix E says nothing)
    "promotion": False,
    "list_separator": False,  # between squares or pieces in a list
    # clock answers: the singular with its number word, the plural after a number
    "one_hour": False,
    "hours": False,
    "one_minute": False,
    "minutes": False,
    "one_second": False,
    "seconds": False,
}

#: messages: key -> the placeholders its template may use.
MESSAGES: dict[str, frozenset[str]] = {
    key: frozenset(fields)
    for key, fields in {
        "move_correction": ("move",),
        "fix_put_back": ("piece", "square"),
        "fix_put": ("piece", "square"),
        "fix_clear": ("square",),
        "piece_of_colour": ("piece", "colour"),
        "illegal_move": ("fix", "side"),
        "illegal_move_count": ("side", "count"),
        "illegal_move_minutes": ("side",),  # 7.4b: the opponent's two minutes
        "illegal_move_lost": ("side",),  # the illegal move that loses; the arbiter decides
        "claim_open": (),  # said only while the claim is open (4.7)
        "touch_move": ("pieces", "side"),
        "touch_move_move": ("piece", "side"),
        "touch_move_capture": ("piece", "side"),
        "touch_move_capture_with": ("piece", "target", "side"),
        "castling_rook_first": ("touched", "side"),
        "incomplete_castling": ("fix", "side"),
        "fix_move": ("piece", "from_square", "to_square"),
        "incomplete_promotion": ("square", "side"),
        "promotion_changed": ("square", "side", "fix"),
        "clock_without_move": ("fix", "side"),
        "wrong_setup": ("fix", "side"),
        "touch_move_count": ("side", "count"),
        "displaced_pieces": ("fix", "side"),
        "irregularity": ("fix", "side"),
        "boards_diverged": ("fix", "side"),
        "position_restored": (),
        "takeback": (),
        "game_start": (),
        "game_resumed": (),
        "game_end": ("result", "reason"),
        "result_white_wins": (),
        "result_black_wins": (),
        "result_draw": (),
        "flag": ("side",),
        "touched": ("side", "piece"),  # E.9.e: the other player touched his own piece
        "flag_both": (),
        "flag_draw": ("side",),
        "draw_claimable": ("reason",),
        "penalty": ("side", "seconds"),
        "connection_lost": (),
        "board_not_found": (),
        "connection_back": (),
        "answer_last": ("move",),
        "answer_no_move": (),
        "answer_clock_side": ("side", "time"),
        "answer_moves": (),
        "answer_moves_item": ("number", "side", "move"),
        "answer_resumed": ("request",),
        "answer_dropped": ("request",),
        "answer_no_clock": (),
        "answer_moves_completed": ("count",),  # E.9.d: the moves completed
        "answer_time_used": ("side", "time"),  # E.9.d: the time used by each player
        "answer_move_number": ("number", "side"),
        "answer_board_side": ("side", "pieces"),
        "answer_square_empty": ("square",),
        "answer_square": ("square", "piece"),
        "answer_piece": ("piece", "squares"),
        "answer_piece_none": ("piece",),
        "answer_unknown": ("what",),
        "time_hms": ("hours", "minutes", "seconds"),
        "time_ms": ("minutes", "seconds"),
        "time_s": ("seconds",),
    }.items()
}

#: requests (what a player may ask): their spoken names, for "Stellung abgebrochen".
REQUEST_NAMES = ("last", "moves", "clock", "move_number", "board", "square", "piece", "unknown")

#: reasons (game end and draw claims): spoken names, each required.
REASONS = (
    "checkmate",
    "stalemate",
    "insufficient_material",
    "flag",
    "flag_draw",
    "both_flags",
    "illegal_moves",
    "arbiter",
    "threefold_repetition",
    "fifty_moves",
    "result_on_board",
)


def _file_names(
    data: dict[str, Any], choice: str, eight: Any, where: str
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The files' names: the vocabulary's own ``files``, or one of ``file_alphabets``
    (a list of 8, or ``names`` with the ``pronunciation`` those names need: bare
    English letters need "a" said as the letter, which would spoil the article
    "a" in every other text), with that alphabet's own lexicon entries.

    Bare letters rhyme in English ("b, c, d, e, g") and are words in Spanish
    ("a", "de"); a spelling alphabet tells them apart by ear, so the shipped en and
    es vocabularies name the files with one and offer the others by name.
    """
    alphabets = data.get("file_alphabets") or {}
    if not isinstance(alphabets, dict):
        raise VocabularyError(f"{where}: key 'file_alphabets' must be a mapping of names to lists")
    chosen: tuple[tuple[str, ...], dict[str, Any]] | None = None
    for name, entry in alphabets.items():  # each one checked, chosen or not
        key = f"file_alphabets.{name}"
        lexicon: Any = {}
        if isinstance(entry, dict):
            lexicon = entry.get("pronunciation") or {}
            if not isinstance(lexicon, dict):
                raise VocabularyError(f"{where}: key '{key}.pronunciation' must be a mapping")
            names = eight(f"{key}.names", entry, "names")
        else:
            names = eight(key, alphabets, name)
        if name == choice:
            chosen = names, lexicon
    if not choice:
        return eight("files", data), {}
    if chosen is None:
        known = ", ".join(sorted(alphabets)) or "none"
        raise VocabularyError(
            f"{where}: no file alphabet {choice!r} (speech.files; this vocabulary has: {known})"
        )
    return chosen


class VocabularyError(ValueError):
    """A vocabulary file is missing, unreadable or lacks a key; names both."""


@dataclass(eq=False, repr=False)
class Vocabulary(FrozenRecord):
    """The words of one language. Build with ``load_vocabulary``; see the shipped files."""

    name: str
    language: str
    voice: str  # the espeak-ng voice that reads this language ("de", "en", "es")
    files: tuple[str, ...]  # a..h
    ranks: tuple[str, ...]  # 1..8
    pieces: Mapping[str, str]  # FEN letter (upper case) -> singular name
    pieces_plural: Mapping[str, str]
    colours: Mapping[str, str]  # "white" / "black" -> name
    words: Mapping[str, str]
    messages: Mapping[str, str]
    reasons: Mapping[str, str]
    requests: Mapping[str, str] = field(default_factory=dict)
    pronunciation: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    _pattern: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    def square(self, square_name: str) -> str:
        """ "e4" -> "Eva vier": file and rank as two words, never "e4" in one."""
        return f"{self.files[ord(square_name[0]) - ord('a')]} {self.ranks[int(square_name[1]) - 1]}"

    def piece(self, letter: str) -> str:
        return self.pieces[letter.upper()]

    def colour(self, side: str | None) -> str:
        return self.colours.get(side or "", side or "")

    def message(self, key: str, **fields: Any) -> str:
        text = self.messages[key].format(**fields)
        # An empty field leaves no double space, and no ": " where the side was unknown.
        return " ".join(text.split()).removeprefix(": ")

    def reason(self, reason: str) -> str:
        return self.reasons.get(reason, reason.replace("_", " "))

    def pronounce(self, written: str) -> str:
        """The text for the voice: each official spelling replaced, whole words only."""
        if self._pattern is None:
            return written
        return self._pattern.sub(lambda m: self.pronunciation[m.group(0)], written)


def shipped_vocabularies_dir() -> Path:
    """Where the shipped vocabularies are, even before the shipped configuration exists."""
    try:
        return vocabularies_dir()
    except FileNotFoundError:
        pass
    for candidate in (
        Path(__file__).resolve().parent.parent / "_shipped_config" / "vocabularies",
        Path(__file__).resolve().parent.parent.parent / "config" / "vocabularies",
    ):
        if candidate.is_dir():
            return candidate
    raise VocabularyError("the shipped vocabularies are missing (config/vocabularies)")


def available_vocabularies(directory: Path | None = None) -> list[str]:
    """Names of the shipped vocabularies (file stems)."""
    folder = directory or shipped_vocabularies_dir()
    return sorted(p.stem for p in folder.glob("*.yaml"))


def resolve_vocabulary_path(name_or_path: str | Path) -> Path:
    """A shipped name ("appendix-e", "en") or a path to a user's own YAML file."""
    candidate = Path(name_or_path).expanduser()
    if candidate.suffix in (".yaml", ".yml") or candidate.is_file() or "/" in str(name_or_path):
        return candidate
    return shipped_vocabularies_dir() / f"{name_or_path}.yaml"


def load_vocabulary(name_or_path: str | Path = DEFAULT_VOCABULARY, files: str = "") -> Vocabulary:
    """Read and check a vocabulary; VocabularyError names the file and the bad key.

    ``files``: the name of one of the vocabulary's ``file_alphabets`` to name the
    files with (``speech.files``); empty: its own ``files``.
    """
    path = resolve_vocabulary_path(name_or_path)
    try:
        stat = path.stat()
        key = (str(path), stat.st_mtime_ns, stat.st_size, files)
        if key in _LOADED:
            return _LOADED[key]
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        known = ", ".join(available_vocabularies()) if path.parent.is_dir() else "none"
        raise VocabularyError(
            f"vocabulary {name_or_path!r}: no file {path} (shipped: {known})"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise VocabularyError(f"vocabulary file {path}: cannot be read: {exc}") from None
    data = yamlcache.read("vocabulary", text)  # parsed before: no PyYAML to import
    if data is None:
        data = _parse_yaml(text, path)
        vocabulary = parse_vocabulary(data, source=str(path), files=files)
        yamlcache.write("vocabulary", text, data)
    else:
        vocabulary = parse_vocabulary(data, source=str(path), files=files)
    _LOADED[key] = vocabulary
    return vocabulary


def _parse_yaml(text: str, path: Path) -> Any:
    import yaml

    try:
        # libyaml's parser where PyYAML has it: every command that phrases a move
        # reads the vocabulary at start-up, and the Python parser takes tens of ms.
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise VocabularyError(f"vocabulary file {path}: not valid YAML: {exc}") from None


#: Vocabularies read, by file, its version (mtime, size) and ``files``: a command's
#: start reads the configured one three times (the configuration's check, the rules
#: core's phrasing, the announcer), ~2 ms each; a changed file is read afresh.
_LOADED: dict[tuple[str, int, int, str], Vocabulary] = {}


def vocabulary_of(settings: Any) -> Vocabulary:
    """The vocabulary a ``SpeechSettings`` names, with its file alphabet."""
    return load_vocabulary(settings.vocabulary, getattr(settings, "files", ""))


def parse_vocabulary(data: Any, source: str = "<vocabulary>", files: str = "") -> Vocabulary:
    """Check a parsed YAML document key by key; the first problem is the message."""
    where = f"vocabulary file {source}"
    if not isinstance(data, dict):
        raise VocabularyError(f"{where}: the top level must be a mapping of keys")

    def text(value: Any, key: str, *, may_be_empty: bool = False) -> str:
        if value is None and may_be_empty:
            return ""
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise VocabularyError(f"{where}: key '{key}' must be a text, got {value!r}")
        value = str(value).strip()
        if not value and not may_be_empty:
            raise VocabularyError(f"{where}: key '{key}' must not be empty")
        return value

    def section(key: str) -> dict[str, Any]:
        if key not in data:
            raise VocabularyError(f"{where}: missing key '{key}'")
        value = data[key]
        if not isinstance(value, dict):
            raise VocabularyError(f"{where}: key '{key}' must be a mapping")
        return value

    def required(mapping: dict[str, Any], parent: str, key: str, **kw: bool) -> str:
        if key not in mapping:
            raise VocabularyError(f"{where}: missing key '{parent}.{key}'")
        return text(mapping[key], f"{parent}.{key}", **kw)

    def eight(key: str, mapping: dict[str, Any] | None = None, name: str = "") -> tuple[str, ...]:
        mapping = data if mapping is None else mapping
        name = name or key
        if name not in mapping:
            raise VocabularyError(f"{where}: missing key '{key}'")
        value = mapping[name]
        if not isinstance(value, list) or len(value) != 8:
            raise VocabularyError(f"{where}: key '{key}' must be a list of 8 words")
        return tuple(text(item, f"{key}[{i}]") for i, item in enumerate(value))

    for key in ("name", "language", "voice"):
        if key not in data:
            raise VocabularyError(f"{where}: missing key '{key}'")
    pieces_section = section("pieces")
    plural_section = section("pieces_plural")
    colours_section = section("colours")
    words_section = section("words")
    messages_section = section("messages")
    reasons_section = section("reasons")
    requests_section = section("requests")

    messages: dict[str, str] = {}
    for key, allowed in MESSAGES.items():
        template = required(messages_section, "messages", key, may_be_empty=not allowed)
        try:
            names = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
        except ValueError as exc:
            raise VocabularyError(f"{where}: key 'messages.{key}': bad template: {exc}") from None
        unknown = names - allowed
        if unknown:
            hint = ", ".join(f"{{{n}}}" for n in sorted(allowed)) or "none"
            raise VocabularyError(
                f"{where}: key 'messages.{key}' uses {{{sorted(unknown)[0]}}};"
                f" allowed placeholders: {hint}"
            )
        messages[key] = template

    pronunciation_section = data.get("pronunciation") or {}
    if not isinstance(pronunciation_section, dict):
        raise VocabularyError(f"{where}: key 'pronunciation' must be a mapping")
    file_names, files_lexicon = _file_names(data, files, eight, where)
    pronunciation = {
        text(k, "pronunciation"): text(v, f"pronunciation.{k}")
        for k, v in {**pronunciation_section, **files_lexicon}.items()
    }
    pattern = None
    if pronunciation:
        alternatives = "|".join(re.escape(k) for k in sorted(pronunciation, key=len, reverse=True))
        pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")

    return Vocabulary(
        name=text(data["name"], "name"),
        language=text(data["language"], "language"),
        voice=text(data["voice"], "voice"),
        files=file_names,
        ranks=eight("ranks"),
        pieces={PIECE_LETTERS[n]: required(pieces_section, "pieces", n) for n in PIECE_NAMES},
        pieces_plural={
            PIECE_LETTERS[n]: required(plural_section, "pieces_plural", n) for n in PIECE_NAMES
        },
        colours={c: required(colours_section, "colours", c) for c in ("white", "black")},
        words={
            key: required(words_section, "words", key, may_be_empty=empty)
            for key, empty in WORDS.items()
        },
        messages=messages,
        reasons={r: required(reasons_section, "reasons", r) for r in REASONS},
        requests={r: required(requests_section, "requests", r) for r in REQUEST_NAMES},
        pronunciation=pronunciation,
        source=source,
        _pattern=pattern,
    )
