"""What one bus command's Python costs, back to back and at a chain's pace.

    python -m benchmarks.bus_pace [--commands N] [--paced N] [--gaps 0.002,0.014] [--quick]

The bus poller (``drivers.dgt.bus.BusPoller``, as the daemon runs it) polls an idle
chain of 12 emulated boards (``benchmarks.bus_order``'s): each command chosen,
answered and its reply read, with no I/O. Timed first back to back (the code and its
data hot in the caches), then with the process asleep between two commands for each
``--gaps`` (14 ms: a 12-board chain at 9600 baud, a command and its reply), as the
daemon runs it. The same work costs several times as much at the chain's pace on this
machine (issue 28: 18 µs back to back, 200 µs at 14 ms): what a command costs the
daemon is mostly its start from cold, which is why taking the line off the event
loop (onto a thread of its own, into a process of its own) saved nothing, and why the
figure depends on what else the machine runs. A Pi's cores are not shared with other
machines' guests; how much colder its caches get between two commands is not
measured here.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from benchmarks.bus_order import SimulatedLine
from benchmarks.common import footer, header
from drivers.dgt.bus import BusTimings


class IdleChain:
    """12 boards, nothing moving; ``step()`` is one command of the poller's, answered,
    and the shell's two questions after each reply (what the reply lacks, when it
    times out)."""

    def __init__(self, boards: int = 12) -> None:
        self.line = SimulatedLine(BusTimings(discovery_interval=0), boards)

    def step(self) -> None:
        self.line.step(0.0)
        self.line.poller.awaited_bytes()
        self.line.poller.deadline()


def per_command(chain: IdleChain, count: int, gap: float) -> float:
    """Seconds of the process's time a command, asleep ``gap`` between two."""
    spent = 0.0
    for _ in range(count):
        if gap:
            time.sleep(gap)
        start = time.perf_counter()
        chain.step()
        spent += time.perf_counter() - start
    return spent / count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commands", type=int, default=20000, help="back to back")
    parser.add_argument("--paced", type=int, default=400, help="commands at each gap")
    parser.add_argument("--gaps", default="0.002,0.014", help="seconds asleep between two")
    parser.add_argument("--quick", action="store_true", help="a few commands (a smoke test)")
    args = parser.parse_args(argv)
    if args.quick:
        args.commands, args.paced = 2000, 40
    gaps = [float(g) for g in args.gaps.split(",") if g]
    header("bus_pace: one bus command's Python, back to back and at a chain's pace")
    chain = IdleChain()
    per_command(chain, 3000, 0.0)  # past the start: every board found and dumped
    hot = per_command(chain, args.commands, 0.0)
    print(f"back to back: {hot * 1e6:.1f} µs a command ({args.commands} commands)")
    for gap in gaps:
        paced = per_command(chain, args.paced, gap)
        print(
            f"asleep {gap * 1e3:.0f} ms between two: {paced * 1e6:.1f} µs a command "
            f"({paced / hot:.1f}x back to back; {args.paced} commands)"
        )
    footer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
