"""Stands in for the running ``aplay`` of ``speech.stream_player`` in the benchmarks.

    record_stream_player.py LOG RATE CHANNELS   (raw 16-bit PCM on standard input)

No sound card here: it reads the PCM the daemon streams and, for each phrase, appends
to LOG the wall-clock time its first loud sample would be heard (``T stream A``: A is
when the samples holding it arrived in the pipe) and, once the next phrase starts, when
the one before's last loud sample was heard (``T end``: whether a move pressed at some
time had to wait behind a phrase still sounding): a player that plays
every sample as soon as it has it and then at RATE samples a second. So a sample
arriving while earlier ones still play is heard when they are done, and the silence
the daemon keeps before a phrase (a few ms) counts. A phrase starts at a loud sample
(above 300 of 32767) after at least ``GAP`` of silence or no sound at all; the pauses
between the words of a phrase are shorter (about 50 ms with espeak-ng), those between
two phrases longer (the daemon's tail, flush and lead: 100 ms). What a real aplay
adds on top: one period of its buffer (25 ms with the shipped ``--buffer-time``) and
the card's own delay. Kept small and without imports beyond the standard library:
it runs in the daemon's CPU budget, as aplay would.
"""

from __future__ import annotations

import array
import os
import sys
import time

LOUD = 300
GAP = 0.08
STEP = 17  # odd: both channels of a stereo stream are looked at


def main(argv: list[str]) -> int:
    log_path, rate, channels = argv[0], int(argv[1]), int(argv[2])
    frame_rate = rate * channels  # samples a second
    play_end = 0.0  # when the samples received so far have been played
    last_loud = float("-inf")  # when the last loud sample is heard
    odd = b""
    with open(log_path, "a", encoding="utf-8") as log:
        while True:
            data = os.read(0, 65536)
            if not data:
                return 0
            now = time.time()
            data, odd = odd + data, b""
            if len(data) % 2:
                data, odd = data[:-1], data[-1:]
            samples = array.array("h", data)
            start = max(now, play_end)
            play_end = start + len(samples) / frame_rate
            if not samples or (max(samples) <= LOUD and min(samples) >= -LOUD):
                continue
            # Every STEP-th sample (under a ms apart): this runs in the daemon's budget.
            coarse = samples[::STEP]
            for index, value in enumerate(coarse):
                if value > LOUD or value < -LOUD:
                    heard = start + index * STEP / frame_rate
                    if heard - last_loud >= GAP:
                        if last_loud > 0:
                            log.write(f"{last_loud:.6f} end\n")
                        log.write(f"{heard:.6f} stream {now:.6f}\n")
                        log.flush()
                    last_loud = heard


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
