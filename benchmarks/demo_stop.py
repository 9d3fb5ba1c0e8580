"""How fast ``dgt-bridge demo`` stops on Ctrl-C (SIGINT) in the middle of its game.

A new user's first command must stop when told (target: within 1 s, with every part
closed). Each run starts the demo on a free port, waits until its page is up and
``--after`` seconds have passed (the game is being played), sends SIGINT and times
until the process has exited (``wait()``: a zombie left for a reaper does not count
as running). The exit status must be 130.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from benchmarks.common import ROOT, footer, header

TARGET_SECONDS = 1.0


def one_stop(after: float) -> float:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "PYTHONPATH": str(ROOT)}
        env.pop("DGT_BRIDGE_CONFIG", None)
        demo = subprocess.Popen(
            [sys.executable, "-m", "daemon", "demo", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=home,
            start_new_session=True,
        )
        started = time.monotonic()
        assert demo.stdout is not None
        for line in demo.stdout:
            if "live page at" in line:
                break
        time.sleep(max(0.0, after - (time.monotonic() - started)))
        demo.send_signal(signal.SIGINT)
        sent = time.monotonic()
        demo.wait(timeout=60)
        took = time.monotonic() - sent
        if demo.returncode != 130:
            raise SystemExit(f"demo exited {demo.returncode}, not 130")
        return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--after", type=float, default=5.0, help="seconds into the game")
    parser.add_argument("--quick", action="store_true", help="2 runs, 2 s into the game")
    args = parser.parse_args()
    runs, after = (2, 2.0) if args.quick else (args.runs, args.after)
    header("demo: SIGINT mid-game to exit")
    times = [one_stop(after) for _ in range(runs)]
    verdict = "met" if max(times) < TARGET_SECONDS else "MISSED"
    print(
        f"SIGINT to exit over {runs} runs, {after:g} s into the game: "
        f"median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms "
        f"(target < {TARGET_SECONDS * 1000:.0f} ms: {verdict})"
    )
    footer()


if __name__ == "__main__":
    main()
