"""One test, again and again, under a load that makes timing bugs show (issue 28).

    python -m benchmarks.flaky NODEID [--runs N] [--copies K] [--load LOAD]
                               [--out DIR] [--max-seconds S] [--quick] [-- PYTEST ARGS]

Each run is ``pytest -n 0 NODEID`` in a process of its own; its whole output (with
the load average before it and its exit status) is kept in ``DIR/cC-rR.txt``, so a
failure keeps its cause. ``--copies`` loops run side by side. ``LOAD``:

- ``none``: whatever else the machine runs;
- ``cpu:N``: N busy loops (``yes >/dev/null``) beside the runs, on any core;
- ``pinned:N``: each run and N busy loops on one core (the run gets a share of
  1/(N+1) of one core: a small machine with a busy day, without taking both cores);
- ``pause:MAX:GAP``: a run's processes are frozen at random (SIGSTOP, then SIGCONT
  after up to MAX seconds, every GAP seconds on average), as a host that is short of
  CPU freezes a process now and then. It costs no CPU, and it stalls a test's
  emulator threads together with the daemon they feed, where a time-out is most
  easily crossed.

No new run starts after ``--max-seconds`` (600: the machine is shared). The last
line is the summary: runs, failed, and each failure's first ``E`` line.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.common import ROOT, footer, header, load_average


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (read from /proc)."""
    found = [pid]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
            for child in children:
                found += _tree(int(child))
    except OSError:
        pass
    return found


def _freeze_at_random(pid: int, longest: float, gap: float, log: list[str]) -> None:
    """Until ``pid`` ends: every ``gap`` seconds on average, one of its processes is
    stopped for up to ``longest`` seconds."""
    rng = random.Random()
    started = time.monotonic()
    while _alive(pid):
        time.sleep(rng.expovariate(1 / gap))
        victim = rng.choice(_tree(pid))
        pause = rng.uniform(0.02, longest)
        try:
            os.kill(victim, signal.SIGSTOP)
        except OSError:
            continue
        try:
            time.sleep(pause)
        finally:
            with contextlib.suppress(OSError):
                os.kill(victim, signal.SIGCONT)
        log.append(f"{time.monotonic() - started:7.2f} s: froze {victim} for {pause:.3f} s")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _burners(count: int, core: int | None) -> list[subprocess.Popen[bytes]]:
    pin = ["taskset", "-c", str(core)] if core is not None else []
    return [subprocess.Popen([*pin, "yes"], stdout=subprocess.DEVNULL) for _ in range(count)]


def _one_run(node: str, extra: Sequence[str], out: Path, load: str, core: int | None) -> int:
    command = [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "-rA"]
    command += [*extra, node]
    if core is not None:
        command = ["taskset", "-c", str(core), *command]
    freezes: list[str] = []
    with out.open("w") as handle:
        handle.write(f"load average before: {load_average()}\n$ {' '.join(command)}\n")
        handle.flush()
        process = subprocess.Popen(command, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT)
        freezer = None
        if load.startswith("pause:"):
            _, longest, gap = load.split(":")
            freezer = threading.Thread(
                target=_freeze_at_random,
                args=(process.pid, float(longest), float(gap), freezes),
                daemon=True,
            )
            freezer.start()
        status = process.wait()
        if freezer is not None:
            freezer.join()
        handle.write("".join(f"{line}\n" for line in freezes))
        handle.write(f"exit status {status}; load average after: {load_average()}\n")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in args_list:
        at = args_list.index("--")
        args_list, extra = args_list[:at], args_list[at + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("node", help="the test, as pytest names it")
    parser.add_argument("--runs", type=int, default=10, help="runs per copy")
    parser.add_argument("--copies", type=int, default=1, help="loops side by side")
    parser.add_argument("--load", default="none", help="none, cpu:N, pinned:N, pause:MAX:GAP")
    parser.add_argument("--out", default="/tmp/dgt-flaky", help="where each run's output goes")
    parser.add_argument("--max-seconds", type=float, default=600.0)
    parser.add_argument("--quick", action="store_true", help="one run, one copy")
    args = parser.parse_args(args_list)
    if args.quick:
        args.runs, args.copies = 1, 1
    kind, _, amount = args.load.partition(":")
    if kind not in ("none", "cpu", "pinned", "pause"):
        parser.error(f"--load {args.load}: none, cpu:N, pinned:N or pause:MAX:GAP")
    header(f"flaky: {args.node}, {args.copies} x {args.runs} runs, load {args.load}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    burners: list[subprocess.Popen[bytes]] = []
    cores: list[int | None] = [None] * args.copies
    if kind == "cpu":
        burners = _burners(int(amount), None)
    elif kind == "pinned":
        pinned = [copy % (os.cpu_count() or 1) for copy in range(args.copies)]
        for core in sorted(set(pinned)):
            burners += _burners(int(amount), core)
        cores = list(pinned)
    results: dict[str, int] = {}

    def loop(copy: int) -> None:
        for run in range(1, args.runs + 1):
            if time.monotonic() - started > args.max_seconds:
                return
            name = f"c{copy + 1}-r{run}.txt"
            results[name] = _one_run(args.node, extra, out / name, args.load, cores[copy])

    threads = [threading.Thread(target=loop, args=(c,)) for c in range(args.copies)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    failed = sorted(name for name, status in results.items() if status != 0)
    for name in failed:
        lines = (out / name).read_text(errors="replace").splitlines()
        first = next((line for line in lines if line.startswith("E ")), "(no E line)")
        print(f"FAILED {out / name}: {first[:300]}")
    elapsed = time.monotonic() - started
    print(f"{len(results)} runs in {elapsed:.0f} s, {len(failed)} failed; outputs in {out}")
    footer()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
