"""pyttsx3's "no samples": phrases asked back to back, as fast play asks them.

    python -m benchmarks.phrases_back_to_back [--phrases N] [--one-core] [--quick]

The daemon's own ``Synthesizer`` (``daemon/speech/pyttsx3_worker.py``: what the
synthesis thread and the worker process both run) streams real move phrases one
right after the other, each at a rate of its own as fast play gives, with nothing
between them. Counted: the phrases that ended with an error ("no samples": the
daemon then falls back to the espeak-ng program), the tries that had no samples
(the synthesizer tries a text twice), and the calls to libespeak-ng's ``Cancel``
(the driver's stop(): none is wanted, no phrase is cut here). ``--one-core`` pins
the process to one CPU, as a busy machine or a CPU quota makes libespeak-ng's own
thread wait for its turn: the race showed there (issue 19).
"""

from __future__ import annotations

import argparse
import os
import time

from benchmarks.common import footer, header

PHRASES = (
    "Springer Felix drei, Schach",
    "Bauer Eva vier",
    "Kurze Rochade",
    "Dame David eins schlägt Hannah fünf",
    "Turm Anna eins",
    "Läufer Cäsar vier",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phrases", type=int, default=4000, help="phrases said (4000)")
    parser.add_argument("--one-core", action="store_true", help="pin the process to one CPU")
    parser.add_argument("--quick", action="store_true", help="40 phrases")
    args = parser.parse_args(argv)
    count = 40 if args.quick else args.phrases
    header("pyttsx3 phrases back to back (issue 19's 'no samples')")
    if args.one_core:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print(f"CPUs: {sorted(os.sched_getaffinity(0))}")

    from pyttsx3.drivers import _espeak

    from daemon.speech.pyttsx3_worker import Synthesizer

    synthesizer = Synthesizer()
    synthesizer.use("de", 1.0, 150)
    tries = cancels = 0
    run_and_wait = synthesizer.engine.runAndWait
    cancel = _espeak.Cancel

    def counted_run() -> None:
        nonlocal tries
        tries += 1
        run_and_wait()

    def counted_cancel():
        nonlocal cancels
        cancels += 1
        return cancel()

    synthesizer.engine.runAndWait = counted_run
    _espeak.Cancel = counted_cancel
    failed: list[tuple[int, str, int]] = []
    started = time.monotonic()
    for number in range(count):
        text, rate = PHRASES[number % len(PHRASES)], 150 + number % 7 * 25
        _frames, error = synthesizer.stream(text, rate, lambda pcm: None)
        if error:
            failed.append((number, text, rate))
            print(f"phrase {number} {text!r} at {rate} wpm: {error}")
    seconds = time.monotonic() - started
    print(f"phrases: {count} in {seconds:.1f} s")
    print(f"phrases without samples (the daemon falls back): {len(failed)}")
    print(f"tries without samples (of {tries} tries): {tries - count}")
    print(f"libespeak-ng cancels: {cancels}")
    footer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
