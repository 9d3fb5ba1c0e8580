"""``dgt-bridge say last|clock|move_number|board|square e4|piece N``: ask, and hear it.

Appendix E.2.9d: the blind player gets information when he asks. Asked of the
running daemon (``--url``), the question is sent to it (``POST /say``, with the
arbiter's token) and the daemon answers it in its own schedule (between moves,
never over one) in the asker's earphone (``--by``): never a voice of its own
beside the daemon's. The terminal shows the answer's text, built from the
daemon's ``/state.json`` by ``daemon.speech.answers`` as the daemon builds it.
With ``--events`` (the JSON lines of the event feed, e.g. a journal; no daemon
needed) the answer is spoken here with the configured engine (``--engine text``
prints it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

from daemon.game.record import GameRecord
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
            "knights, n black ones). Asked of the running daemon (--url), the daemon "
            "says the answer in its own schedule, in the asker's earphone (--by), and "
            "needs the arbiter's token (--token, --token-file, or broadcast.token of "
            "--config); with --events FILE the answer is spoken here, no daemon needed."
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
    parser.add_argument(
        "--by", choices=("white", "black"), help="who asks: his earphone answers (own clock first)"
    )
    parser.add_argument("--token", help="the arbiter's token (default: broadcast.token)")
    parser.add_argument("--token-file", metavar="FILE", help="a file holding the token")
    parser.add_argument(
        "--engine", choices=ENGINES, help="with --events: speech engine (text: print only)"
    )
    parser.add_argument("--vocabulary", help="vocabulary name or YAML path")
    parser.add_argument(
        "--voice", help="with --events: espeak-ng voice (default: the vocabulary's)"
    )
    parser.add_argument("--device", help="with --events: ALSA device to play on")
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


def fetch_state(url: str, board: str | None) -> tuple[str, dict[str, Any]]:
    """The board's id and state from the daemon's ``/state.json``."""
    address = url.rstrip("/") + "/state.json"
    with urllib.request.urlopen(address, timeout=5) as response:
        data = json.load(response)
    boards = data.get("boards") if isinstance(data, dict) else None
    if not isinstance(boards, dict):
        return board or "", data  # a bare state (one board)
    if not boards:
        raise ValueError(f"{address} shows no board")
    if board is None:
        first = next(iter(boards))
        return first, boards[first]
    if board not in boards:
        raise ValueError(f"{address} has no board {board!r} (boards: {', '.join(boards)})")
    return board, boards[board]


class Refused(Exception):
    """The daemon did not take the question; the message says why."""


def ask_daemon(url: str, board: str, body: dict[str, Any], token: str) -> None:
    """``POST /say``: the daemon's rules core takes the question like a clock
    button's, and its announcer answers in the asker's earphone."""
    query = f"?board={urllib.parse.quote(board)}" if board else ""
    request = urllib.request.Request(
        url.rstrip("/") + "/say" + query,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=5):
            return
    except urllib.error.HTTPError as exc:
        try:
            reason = json.load(exc).get("error", exc.reason)
        except (ValueError, AttributeError, OSError):
            reason = exc.reason
        raise Refused(f"the daemon refused the question ({exc.code}): {reason}") from None


def the_token(args: argparse.Namespace) -> str:
    """``--token``, ``--token-file``, else ``broadcast.token`` of ``--config`` (or of
    the default configuration, with its environment overrides)."""
    if args.token:
        return str(args.token)
    if args.token_file:
        try:
            return Path(args.token_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ValueError(f"--token-file {args.token_file}: cannot be read: {exc}") from None
    try:
        from daemon.config import load

        return str(getattr(load(args.config).broadcast, "token", "") or "")
    except Exception:
        return ""


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
    if args.events:
        return say_from_file(args, settings, vocabulary, request)
    try:
        board, state = fetch_state(args.url, args.board)
        record = GameRecord.from_state(state)
    except (OSError, urllib.error.URLError) as exc:
        print(f"dgt-bridge say: cannot reach the daemon at {args.url}: {exc}", file=sys.stderr)
        print("  (is the daemon running? or give --events FILE)", file=sys.stderr)
        return 1
    except (ValueError, KeyError, TypeError) as exc:
        print(f"dgt-bridge say: the game could not be read: {exc}", file=sys.stderr)
        return 1
    try:
        token = the_token(args)
    except ValueError as exc:
        print(f"dgt-bridge say: {exc}", file=sys.stderr)
        return 2
    if not token:
        print(
            "dgt-bridge say: the daemon answers only with the arbiter's token: give --token, "
            "--token-file, or --config with broadcast.token",
            file=sys.stderr,
        )
        return 2
    body = {"what": args.what, **request, **({"by": args.by} if args.by else {})}
    try:
        ask_daemon(args.url, board, body, token)
    except Refused as exc:
        print(f"dgt-bridge say: {exc}", file=sys.stderr)
        return 1
    except (OSError, urllib.error.URLError) as exc:
        print(f"dgt-bridge say: cannot reach the daemon at {args.url}: {exc}", file=sys.stderr)
        return 1
    print(written_answer(args, settings, vocabulary, request, record))
    return 0


def written_answer(
    args: argparse.Namespace,
    settings: SpeechSettings,
    vocabulary: Any,
    request: dict[str, Any],
    record: GameRecord,
) -> str:
    """The answer's text as the daemon composes it (for the sighted helper)."""
    return answer(
        args.what,
        request,
        record,
        vocabulary,
        by=args.by,
        form=settings.form,
        say_pawn=settings.say_pawn,
        time_left=bool(settings.time_left),
    )


def say_from_file(
    args: argparse.Namespace, settings: SpeechSettings, vocabulary: Any, request: dict[str, Any]
) -> int:
    """``--events``: no daemon; the answer from the file, spoken here."""
    if not Path(args.events).is_file():
        print(f"dgt-bridge say: no event file {args.events}", file=sys.stderr)
        return 2
    try:
        record, problems = read_events(args.events)
    except OSError as exc:
        print(f"dgt-bridge say: cannot read {args.events}: {exc}", file=sys.stderr)
        return 1
    for problem in problems:
        print(f"dgt-bridge say: skipped {problem}", file=sys.stderr)
    written = written_answer(args, settings, vocabulary, request, record)
    voice = settings.voice or vocabulary.voice
    used = asyncio.run(speak(settings, voice, written, vocabulary.pronounce(written)))
    if used != "text":
        print(written)  # what was spoken, for the sighted helper and the terminal
    return 0
