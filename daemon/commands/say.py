"""``dgt-bridge say last|clock|move_number|board|square e4|piece N``: ask, and hear it.

Appendix E.2.9d: the blind player gets information when he asks. The game comes
from the running daemon (``/state.json`` at ``--url``) or from an event file
(``--events``: the JSON lines of the event feed, e.g. a journal); the answer is
built by ``daemon.speech.answers`` exactly as the daemon's announcer builds it, and
spoken with the configured engine (``--engine text`` prints it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

from daemon.gamerecord import GameRecord
from daemon.speech.answers import REQUESTS, answer
from daemon.speech.settings import ENGINES, SpeechSettings
from daemon.speech.vocabulary import VocabularyError, vocabulary_of

DEFAULT_URL = "http://127.0.0.1:8080"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "say",
        help="speak the answer to a request (last move, clocks, position...)",
        description=(
            "Answer one request about the current game, as a blind player asks by the "
            "clock buttons: last (repeat the last move), moves (the last few), clock "
            "(both times, your own first with --by), move_number, board (the whole "
            "position), square SQUARE "
            "(what stands there), piece LETTER (where those pieces stand: N white "
            "knights, n black ones). The game comes from the running daemon (--url) or "
            "from an event file (--events)."
        ),
    )
    parser.add_argument("what", choices=REQUESTS, help="what to ask")
    parser.add_argument(
        "arg",
        nargs="*",
        help="the square (e4), piece letter (N, n), or for board: own, opponent, rank 3, file e",
    )
    parser.add_argument("--url", default=DEFAULT_URL, help=f"the daemon (default {DEFAULT_URL})")
    parser.add_argument("--board", help="which board of the daemon (default: the first)")
    parser.add_argument("--events", metavar="FILE", help="read the game from an event file")
    parser.add_argument("--by", choices=("white", "black"), help="who asks (own clock first)")
    parser.add_argument("--engine", choices=ENGINES, help="speech engine (text: print only)")
    parser.add_argument("--vocabulary", help="vocabulary name or YAML path")
    parser.add_argument("--voice", help="espeak-ng voice (default: the vocabulary's)")
    parser.add_argument("--device", help="ALSA device to play on")
    parser.add_argument("--config", help="configuration file for the speech settings")
    parser.set_defaults(func=say)


def read_events(path: str) -> tuple[GameRecord, list[str]]:
    """Fold an event file; bad lines are reported by number and skipped."""
    record = GameRecord()
    problems: list[str] = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                event = json.loads(text)
            except json.JSONDecodeError as exc:
                problems.append(f"{path}, line {number}: not JSON ({exc.msg})")
                continue
            if not isinstance(event, dict) or "type" not in event:
                problems.append(f"{path}, line {number}: not an event (no 'type')")
                continue
            record.apply(event)
    return record, problems


def fetch_state(url: str, board: str | None) -> dict[str, Any]:
    """The board's state from the daemon's ``/state.json``."""
    address = url.rstrip("/") + "/state.json"
    with urllib.request.urlopen(address, timeout=5) as response:
        data = json.load(response)
    boards = data.get("boards") if isinstance(data, dict) else None
    if not isinstance(boards, dict):
        return data  # a bare state (one board)
    if not boards:
        raise ValueError(f"{address} shows no board")
    if board is None:
        return next(iter(boards.values()))
    if board not in boards:
        raise ValueError(f"{address} has no board {board!r} (boards: {', '.join(boards)})")
    return boards[board]


def speech_settings(args: argparse.Namespace) -> SpeechSettings:
    settings = SpeechSettings()
    try:
        from daemon.config import load

        loaded = load(args.config).speech
        if isinstance(loaded, SpeechSettings):
            settings = loaded
    except Exception as exc:
        if args.config:
            raise ValueError(f"configuration {args.config}: {exc}") from exc
    changes = {
        key: getattr(args, key)
        for key in ("engine", "vocabulary", "voice", "device")
        if getattr(args, key)
    }
    return replace(settings, **changes)


def request_args(what: str, arg: str | None) -> dict[str, Any]:
    if what in ("square", "piece") and not arg:
        raise ValueError(f"say {what} needs an argument (e.g. say square e4, say piece N)")
    if what == "square":
        assert arg is not None
        square = arg.strip().lower()
        if len(square) != 2 or square[0] not in "abcdefgh" or square[1] not in "12345678":
            raise ValueError(f"{arg!r} is not a square (a1 to h8, e.g. e4)")
        return {"square": square}
    if what == "piece":
        if arg not in tuple("KQRBNPkqrbnp"):
            raise ValueError(
                f"{arg!r} is not a piece letter (K Q R B N P for White's, k q r b n p for Black's)"
            )
        return {"piece": arg}
    if what == "board" and arg:
        return board_args(arg)
    return {}


def board_args(arg: str) -> dict[str, Any]:
    """``say board own|opponent|white|black|rank 3|file e`` (or ``3``, ``e``)."""
    words = arg.strip().lower().split()
    value = words[-1] if words else ""
    if value in ("own", "opponent", "white", "black"):
        return {"order": value}
    if value in tuple("12345678"):
        return {"rank": value}
    if value in tuple("abcdefgh"):
        return {"file": value}
    raise ValueError(f"{arg!r}: say board own, opponent, white, black, rank 1-8 or file a-h")


async def speak(settings: SpeechSettings, voice: str, written: str, spoken: str) -> str:
    from daemon.speech.engines import build_engine

    engine = build_engine(settings, voice)
    try:
        await engine.start()
        await engine.speak(written, spoken)
    finally:
        await engine.close()
    return engine.used or ""


def say(args: argparse.Namespace) -> int:
    try:
        settings = speech_settings(args)
        vocabulary = vocabulary_of(settings)
        arg = " ".join(args.arg) if isinstance(args.arg, list) else args.arg
        request = request_args(args.what, arg or None)
    except (ValueError, VocabularyError) as exc:
        print(f"dgt-bridge say: {exc}", file=sys.stderr)
        return 2
    try:
        if args.events:
            if not Path(args.events).is_file():
                print(f"dgt-bridge say: no event file {args.events}", file=sys.stderr)
                return 2
            record, problems = read_events(args.events)
            for problem in problems:
                print(f"dgt-bridge say: skipped {problem}", file=sys.stderr)
        else:
            record = GameRecord.from_state(fetch_state(args.url, args.board))
    except (OSError, urllib.error.URLError) as exc:
        print(f"dgt-bridge say: cannot read the game from {args.url}: {exc}", file=sys.stderr)
        print("  (is the daemon running? or give --events FILE)", file=sys.stderr)
        return 1
    except (ValueError, KeyError, TypeError) as exc:
        print(f"dgt-bridge say: the game could not be read: {exc}", file=sys.stderr)
        return 1
    written = answer(
        args.what,
        request,
        record,
        vocabulary,
        by=args.by,
        form=settings.form,
        say_pawn=settings.say_pawn,
        time_left=bool(settings.time_left),
    )
    voice = settings.voice or vocabulary.voice
    used = asyncio.run(speak(settings, voice, written, vocabulary.pronounce(written)))
    if used != "text":
        print(written)  # what was spoken, for the sighted helper and the terminal
    return 0
