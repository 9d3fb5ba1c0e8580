"""The child process that owns the one pyttsx3 engine (run: python -m ...).

pyttsx3 2.99 with the espeak driver is unsafe the obvious way (checked on this
version): ``say()`` shells out to ``aplay`` and reports success even when nothing
plays; of several texts queued before ``runAndWait()`` only the last is spoken or
saved; an empty ``runAndWait()`` synthesises the previous text again; ``stop()``
does not cut the audio; the engine is not thread-safe; and the driver prints
"Audio saved to ..." on standard output. So this process does exactly one
``save_to_file`` + ``runAndWait`` per request, into the file the daemon names, and
the daemon checks and plays that file itself with a player it can stop.

Protocol, one JSON object per line: the first line out is ``{"ready": true,
"voice": "gmw/de"}`` (or ``{"ready": false, "error": ...}``); then for each
request ``{"id": 1, "text": "...", "file": "/tmp/x.wav", "rate": 200}`` in (``rate``
optional: words per minute for this one text, a quicker one in fast play), one ``{"id": 1,
"ok": true}`` or ``{"id": 1, "ok": false, "error": "..."}`` out. Standard output
is kept for the protocol; the driver's prints go to /dev/null.
"""

from __future__ import annotations

import json
import os
import sys
import wave

# Not ``typing``, not ``argparse``: this process stays resident beside the daemon, and
# each import costs memory on a Pi (issue 19: 45 MB for the whole daemon).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO


def _protocol_stream() -> TextIO:
    """A private copy of stdout for the protocol; fd 1 itself goes to /dev/null."""
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - process lifetime
    return out


def _frames(path: str) -> int:
    try:
        with wave.open(path, "rb") as wav:
            return wav.getnframes()
    except (OSError, EOFError, wave.Error):
        return 0


def _read_phoneme_codes() -> None:
    """Make the driver pass espeak's PHONEMES flag, as the espeak-ng program does:
    the vocabularies' lexicons give "[[rOS'A:d@]]" where no spelling gets the
    stress right, and without the flag the brackets would be read out as text."""
    from pyttsx3.drivers import _espeak

    synth = _espeak.Synth

    def synth_with_phonemes(text, *args, flags=0, **kwargs):
        return synth(text, *args, flags=flags | _espeak.PHONEMES, **kwargs)

    _espeak.Synth = synth_with_phonemes


def _send(out: TextIO, message: dict) -> None:
    out.write(json.dumps(message, ensure_ascii=False) + "\n")
    out.flush()


class Options:
    """``--voice V [--rate WPM] [--volume 0..1]``, as the daemon gives them."""

    def __init__(self, argv: list[str]) -> None:
        given = dict(zip(argv[::2], argv[1::2], strict=False))
        unknown = set(given) - {"--voice", "--rate", "--volume"}
        if unknown or "--voice" not in given or len(argv) % 2:
            raise SystemExit("usage: pyttsx3_worker --voice V [--rate WPM] [--volume 0..1]")
        self.voice = given["--voice"]
        self.rate = int(given.get("--rate", 150))
        self.volume = float(given.get("--volume", 1.0))


def main(argv: list[str] | None = None) -> int:
    args = Options(sys.argv[1:] if argv is None else argv)
    out = _protocol_stream()
    try:
        import pyttsx3

        _read_phoneme_codes()
        engine = pyttsx3.init("espeak")
        errors: list[str] = []
        engine.connect("error", lambda name=None, exception=None: errors.append(repr(exception)))
        engine.setProperty("voice", args.voice)  # it starts in English: always set
        engine.setProperty("rate", args.rate)
        engine.setProperty("volume", args.volume)
        engine.runAndWait()  # applies the properties; no text has been given yet
        voice = str(engine.getProperty("voice") or "")
        if errors:
            raise RuntimeError(f"voice {args.voice!r} not set: {errors[0]}")
    except Exception as exc:  # any failure to start is reported, not raised
        _send(out, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        return 1
    _send(out, {"ready": True, "voice": voice})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            ident, text, path = request["id"], str(request["text"]), str(request["file"])
            rate = int(request.get("rate") or args.rate)
        except (ValueError, KeyError, TypeError) as exc:
            _send(out, {"id": None, "ok": False, "error": f"bad request: {exc}"})
            continue
        # Once in a while (seen once under load, not reproduced) the driver writes a
        # WAV without frames; one more try is cheap, the daemon checks the file anyway.
        for _attempt in range(2):
            errors.clear()
            try:
                engine.setProperty("rate", rate)
                engine.save_to_file(text, path)
                engine.runAndWait()
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
            if not errors and _frames(path) > 0:
                break
        if errors:
            _send(out, {"id": ident, "ok": False, "error": errors[0]})
        else:
            _send(out, {"id": ident, "ok": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())
