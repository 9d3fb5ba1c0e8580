"""The one owner of pyttsx3: ``Synthesizer``, run by the daemon's synthesis thread
(``daemon.speech.synthesis``, ``speech.synthesis: thread``) or as this child process
(``process``: run as a file, so that it imports nothing of the daemon).

pyttsx3 2.99 with the espeak driver is unsafe the obvious way (checked on this
version): ``say()`` shells out to ``aplay`` and reports success even when nothing
plays; of several texts queued before ``runAndWait()`` only the last is spoken or
saved; an empty ``runAndWait()`` synthesises the previous text again; ``stop()``
does not cut the audio; the engine is not thread-safe; and the driver prints
"Audio saved to ..." on standard output. So its owner does exactly one
``save_to_file`` + ``runAndWait`` per request, into the file the daemon names, and
the daemon checks and plays that file itself with a player it can stop.

The process's protocol, one JSON object per line: the first line out is
``{"ready": true, "voice": "gmw/de"}`` (or ``{"ready": false, "error": ...}``); then for each
request ``{"id": 1, "text": "...", "file": "/tmp/x.wav", "rate": 200}`` in (``rate``
optional: words per minute for this one text, a quicker one in fast play), one ``{"id": 1,
"ok": true}`` or ``{"id": 1, "ok": false, "error": "..."}`` out. Standard output
is kept for the protocol; the driver's prints go to /dev/null.

Streamed (issue 19: the first sound of a move must not wait for its last): a request
with ``"stream": true`` instead of ``"file"`` gets its samples as espeak-ng makes them,
every ``CHUNK_MS`` of sound, each as a line ``{"id": 1, "pcm": N}`` followed by N bytes
of 16-bit mono PCM at the rate the ready line gives (``"rate": 22050``), then the
``ok`` line with ``"frames"``. The samples are taken from the driver's own synthesis
callback, which goes on as before (pyttsx3 keeps its events and its state).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import wave

# Not ``typing``, not ``argparse``: this process stays resident beside the daemon, and
# each import costs memory on a Pi (issue 19: 45 MB for the whole daemon).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
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


_patched = False


def _patch_driver() -> None:
    """The driver's fixes below, once per process (the worker's, or the daemon's when
    the synthesis runs in its thread: ``daemon.speech.synthesis``)."""
    global _patched
    if not _patched:
        _read_phoneme_codes()
        _small_chunks()
        _in_the_calling_thread()
        _quiet_driver()
        _no_cancel_at_loop_start()
        _no_polling()
        _patched = True


def _read_phoneme_codes() -> None:
    """Make the driver pass espeak's PHONEMES flag, as the espeak-ng program does:
    the vocabularies' lexicons give "[[rOS'A:d@]]" where no spelling gets the
    stress right, and without the flag the brackets would be read out as text."""
    from pyttsx3.drivers import _espeak

    synth = _espeak.Synth

    def synth_with_phonemes(text, *args, flags=0, **kwargs):
        return synth(text, *args, flags=flags | _espeak.PHONEMES, **kwargs)

    _espeak.Synth = synth_with_phonemes


#: Milliseconds of sound per synthesis callback (the driver asks for 1000: a short
#: phrase would then come in one piece, after all of it was made).
CHUNK_MS = 100


def _small_chunks() -> None:
    """Make the driver initialise espeak with ``CHUNK_MS`` buffers instead of 1 s."""
    from pyttsx3.drivers import _espeak

    initialize = _espeak.Initialize

    def initialize_small(output, buflength=CHUNK_MS, *args, **kwargs):
        return initialize(output, min(int(buflength), CHUNK_MS), *args, **kwargs)

    _espeak.Initialize = initialize_small


def _in_the_calling_thread() -> None:
    """Make espeak-ng synthesise inside ``Synth``, in the thread that asks (its
    synchronous mode), instead of in a thread of its own (retrieval, as the driver
    initialises it). In retrieval mode the text, and every ``setProperty`` before it,
    were handed to espeak-ng's thread and its samples handed back: on one slow core
    each hand-over waited for the other thread's turn of the CPU, one quota period of
    the benchmark's model each (issue 28: the synthesis thread's taking the text up
    -> its first samples 0-104 ms at the Zero 2 W's budget in a run before, 0-49 ms
    in one after), and a phrase cost a third more CPU (1.2-3.7 ms of ours, 0.9-2.2 ms
    now). The callbacks are the same; only the end differs: synchronous espeak-ng
    sends no ``MSG_TERMINATED`` event, on which the driver writes its file and ends
    its loop, so it is given one once ``Synth`` returns (``_terminated``)."""
    from pyttsx3.drivers import _espeak, espeak

    initialize = _espeak.Initialize

    def initialize_synchronous(output, *args, **kwargs):
        if output == _espeak.AUDIO_OUTPUT_RETRIEVAL:
            output = _espeak.AUDIO_OUTPUT_SYNCHRONOUS
        return initialize(output, *args, **kwargs)

    _espeak.Initialize = initialize_synchronous
    start_synthesis = espeak.EspeakDriver._start_synthesis

    def synthesise_and_end(self, text):
        start_synthesis(self, text)  # returns once every sample has been called back
        if self._speaking:  # (an espeak-ng that did send the event: already ended)
            _terminated()

    espeak.EspeakDriver._start_synthesis = synthesise_and_end


def _terminated() -> None:
    """The driver's callback given the end of the text, as espeak-ng in retrieval
    mode would give it (through the tap, which keeps its error handling)."""
    from pyttsx3.drivers import _espeak

    events = (_espeak.EVENT * 2)()
    events[0].type = _espeak.EVENT_MSG_TERMINATED
    events[1].type = _espeak.EVENT_LIST_TERMINATED
    _espeak.SynthCallback(None, 0, events)


def _quiet_driver() -> None:
    """The driver prints "Audio saved to ..." after every file. In this process fd 1
    goes to /dev/null anyway; in the daemon's thread a print would land in its
    standard output, which may carry the ``--events -`` JSON feed. A ``print`` of the
    driver module's own, found before the builtin, says nothing: no process-wide
    redirection, which would swallow the daemon's other threads' output too."""
    from pyttsx3.drivers import espeak

    espeak.print = lambda *args, **kwargs: None


def _no_cancel_at_loop_start() -> None:
    """Make the driver's ``stop()`` cancel nothing: its only caller here is
    ``runAndWait`` itself, whose first step (the loop's end, applied at once) calls
    it before the text is said. libespeak-ng, initialised for retrieval as the
    driver does, carried out ``Synth`` and ``setProperty`` in a thread of its own
    (before ``_in_the_calling_thread``; this stays for an espeak-ng that would keep a
    thread anyway); when that thread was still busy (with the rate just set, or
    ending the last phrase: often, on a loaded or CPU-capped machine) ``stop()``
    cancelled, and left a flag that cancelled the new text right after its
    ``Synth``, often before espeak-ng took it up: no samples, now and then on both
    tries, and the daemon fell back to the slow espeak-ng program. Nothing else here
    wants a stop (a cut phrase is finished unheard)."""
    from pyttsx3.drivers import espeak

    espeak.EspeakDriver.stop = lambda self: None


#: Seconds the driver's loop waits for the phrase's end before it looks again (only a
#: safety net: the end wakes it at once).
LOOP_WAIT = 1.0


def _no_polling() -> None:
    """Make the driver's run loop wait for the phrase's end instead of waking every
    10 ms to look: the phrase's end (its last callback; in espeak-ng's own thread
    when it had one) calls ``endLoop``, which now also wakes the loop. On one slow
    core each of those wake-ups (14 for a 1.3 s phrase) took the GIL and a slice of
    the CPU while the phrase's first samples were on their way (issue 28's profile).
    The loop is the driver's otherwise: the queued commands first, then the text,
    then ``iterate``."""
    import threading

    from pyttsx3.drivers import espeak

    driver_class = espeak.EspeakDriver
    end_loop = driver_class.endLoop

    def ended(self) -> threading.Event:
        event = self.__dict__.get("_dgt_ended")
        if event is None:
            event = self.__dict__["_dgt_ended"] = threading.Event()
        return event

    def end_loop_and_wake(self) -> None:
        end_loop(self)
        ended(self).set()

    def start_loop_waiting(self) -> None:
        wake = ended(self)
        wake.clear()
        self._looping = True
        self._proxy.setBusy(False)  # the queued commands (may end the loop already)
        if self._text_to_say:
            self._start_synthesis(self._text_to_say)
        while self._looping:
            wake.wait(LOOP_WAIT)
            wake.clear()
            self.iterate()

    driver_class.endLoop = end_loop_and_wake
    driver_class.startLoop = start_loop_waiting


class Tap:
    """Passes each callback's samples to ``sink`` (when set) before the driver's own
    callback sees them; so a request can stream what the driver would save."""

    def __init__(self, driver) -> None:
        from pyttsx3.drivers import _espeak

        self.sink: Callable[[bytes], None] | None = None
        self.frames = 0
        self._driver = driver
        self._driver_callback = driver._onSynth
        _espeak.SetSynthCallback(self._on_synth)

    def _on_synth(self, wav, numsamples, events):
        if self.sink is not None and numsamples > 0:
            self.frames += numsamples
            self.sink(ctypes.string_at(wav, numsamples * 2))
            # The driver would copy the phrase so far into a new buffer at every
            # callback, for its WAV into /dev/null: its events are all it needs here.
            # (In the daemon's thread that copy held the GIL against the event loop.)
            numsamples = 0
        try:
            return self._driver_callback(wav, numsamples, events)
        except Exception as exc:
            # The driver raises here when its WAV cannot be written (a directory
            # removed meanwhile), before it ends its loop: runAndWait would then wait
            # for ever (a hung synthesis, seen in the tests). End it as the driver
            # would have, with the error reported.
            driver = self._driver
            driver._data_buffer = b""
            driver._speaking = False
            driver._proxy.notify("error", exception=exc)
            driver._proxy.setBusy(False)
            driver.endLoop()
            return 0


def _set_rate(engine, rate: int) -> None:
    """The rate for the next text. Set twice, to a neighbour first: espeak-ng (1.51,
    through this driver) ignored a rate now and then after the same rate twice in a
    row (measured: 300, 300, then 150 was said at 300, and 250 after it too), so a
    move meant to be said quicker in fast play was not; a change every time is."""
    engine.setProperty("rate", rate + 1)
    engine.setProperty("rate", rate)


#: The driver's sample rate (pyttsx3's espeak driver writes its WAVs at this rate).
SAMPLE_RATE = 22050


class Synthesizer:
    """The one pyttsx3 engine of the process and every call made to it: one
    ``save_to_file`` + ``runAndWait`` per text (the pitfalls above). Not thread-safe:
    one thread (this process's main one, or the daemon's synthesis thread) owns it."""

    def __init__(self) -> None:
        import pyttsx3

        _patch_driver()
        self.engine = pyttsx3.init("espeak")
        self.tap = Tap(self.engine.proxy._driver)
        self.errors: list[str] = []
        self.engine.connect(
            "error", lambda name=None, exception=None: self.errors.append(repr(exception))
        )
        self._voice: tuple[str, float] | None = None
        self.voice = ""

    def use(self, voice: str, volume: float, rate: int = 150) -> str:
        """Sets the voice and volume (when they change) and returns the voice espeak-ng
        reports; RuntimeError if it refused the voice."""
        if self._voice == (voice, volume):
            return self.voice
        self._voice = None
        self.errors.clear()
        self.engine.setProperty("voice", voice)  # it starts in English: always set
        self.engine.setProperty("rate", rate)
        self.engine.setProperty("volume", volume)
        if self.engine.proxy.isBusy():
            # A new engine holds its commands until the first runAndWait, which
            # applies them (no text given yet). Later the commands apply at once, and
            # an empty runAndWait would either say the last text again or, the loop's
            # end being applied before the loop starts, never return (both seen).
            self.engine.runAndWait()
        if self.errors:
            raise RuntimeError(f"voice {voice!r} not set: {self.errors[0]}")
        self._voice = (voice, volume)
        self.voice = str(self.engine.getProperty("voice") or "")
        return self.voice

    def to_file(self, text: str, path: str, rate: int) -> str | None:
        """Writes ``text`` into the WAV file ``path``; the error, or None."""
        self._twice(text, path, rate, lambda: not self.errors and _frames(path) > 0)
        return self.errors[0] if self.errors else None

    def stream(self, text: str, rate: int, sink: Callable[[bytes], None]) -> tuple[int, str | None]:
        """Gives ``text``'s samples to ``sink`` as espeak-ng makes them, every
        ``CHUNK_MS``; the frames made and the error, or None."""
        tap = self.tap
        tap.frames = 0
        tap.sink = sink
        try:  # the driver's copy goes nowhere; an error is not tried again
            self._twice(text, os.devnull, rate, lambda: bool(self.errors or tap.frames))
        finally:
            tap.sink = None
        if not self.errors and tap.frames == 0:
            self.errors.append("no samples")
        return tap.frames, (self.errors[0] if self.errors else None)

    def _twice(self, text: str, path: str, rate: int, done: Callable[[], bool]) -> None:
        """``text`` through the engine into ``path``, once more unless ``done()``:
        once in a while (seen under load) the driver made no samples at all, its
        stop() having cancelled the text (``_no_cancel_at_loop_start``). One more try
        is cheap; the daemon checks what came anyway. What failed is in ``errors``."""
        for _attempt in range(2):
            self.errors.clear()
            try:
                _set_rate(self.engine, rate)
                self.engine.save_to_file(text, path)
                self.engine.runAndWait()
            except Exception as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")
            if done():
                return


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
        synthesizer = Synthesizer()
        voice = synthesizer.use(args.voice, args.volume, args.rate)
    except Exception as exc:  # any failure to start is reported, not raised
        _send(out, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        return 1
    _send(out, {"ready": True, "voice": voice, "rate": SAMPLE_RATE})
    binary = out.buffer
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            ident, text = request["id"], str(request["text"])
            stream = bool(request.get("stream"))
            path = os.devnull if stream else str(request["file"])
            rate = int(request.get("rate") or args.rate)
        except (ValueError, KeyError, TypeError) as exc:
            _send(out, {"id": None, "ok": False, "error": f"bad request: {exc}"})
            continue
        if stream:
            _stream(synthesizer, out, binary, ident, text, rate)
            continue
        error = synthesizer.to_file(text, path, rate)
        if error:
            _send(out, {"id": ident, "ok": False, "error": error})
        else:
            _send(out, {"id": ident, "ok": True})
    return 0


def _stream(synthesizer: Synthesizer, out: TextIO, binary, ident, text: str, rate: int) -> None:
    """One streamed request: the samples as they come, then the ``ok`` line."""

    head = '{"id": ' + json.dumps(ident) + ', "pcm": %d}\n'

    def send_chunk(pcm: bytes) -> None:
        binary.write((head % len(pcm)).encode() + pcm)
        binary.flush()

    frames, error = synthesizer.stream(text, rate, send_chunk)
    if error:
        _send(out, {"id": ident, "ok": False, "error": error})
    else:
        _send(out, {"id": ident, "ok": True, "frames": frames})


if __name__ == "__main__":
    sys.exit(main())
