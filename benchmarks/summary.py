"""The key lines of each benchmark's last output, for RESULTS.md.

    python -m benchmarks.summary [--write]

Reads ``benchmarks/results/<name>.txt`` (written by ``benchmarks/run_all.sh``) and
prints, per benchmark, the lines that carry its verdicts, the load it ran under and
the command that reproduces it. ``--write`` puts them into RESULTS.md between the
``figures`` markers, so the document says what the last run said, word for word.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"

#: Per benchmark, the lines worth quoting (matched at the start, after blanks).
KEY_LINES = {
    "accuracy": (
        r"games:",
        r"all styles mixed",
        r"moves recognised exactly",
        r"games fully exact",
        r"irregularities right",
        r"false alarms",
        r"corrections",
    ),
    "core": (r"logs:", r"throughput", r"wall per call", r"CPU per call", r"target", r"a Pi 3"),
    "latency": (r"game:", r".*median of the runs", r".*journal", r".*without the journal", "WARN"),
    "footprint": (
        r"daemon:",
        r"start-up",
        r"idle:",
        r"playing",
        r"after a",
        r"with \d+",
        "largest",
    ),
    "fanout": (r"SSE:", r"SSE run", r"MQTT:", r"MQTT run", "WARN"),
}


def key_lines(name: str, text: str) -> list[str]:
    patterns = [re.compile(p) for p in KEY_LINES[name]]
    wanted = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("load average", "reproduce", "machine")) or any(
            p.match(stripped) for p in patterns
        ):
            wanted.append(stripped)
    return wanted


Judge = tuple[int, str, float] | None  # (group, "<" or "==", threshold): meets when true
#: Per benchmark: (what, pattern, how to show the match, target, how to judge it).
TABLE: dict[str, list[tuple[str, str, str, str, Judge]]] = {
    "accuracy": [
        (
            "moves recognised exactly",
            r"moves recognised exactly:\s+([\d.]+)% of (\d+)",
            "{0}% of {1}",
            "100.00%",
            (0, "==", 100.00),
        ),
        (
            "games fully exact",
            r"games fully exact:\s+([\d.]+)% of (\d+)",
            "{0}% of {1}",
            "100%",
            (0, "==", 100.00),
        ),
        (
            "irregularities, right kind and article",
            r"irregularities right kind/art:\s+([\d.]+)% of (\d+)",
            "{0}% of {1}",
            "100%",
            (0, "==", 100.00),
        ),
        ("false alarms", r"false alarms:\s+(\d+)", "{0}", "0", (0, "==", 0)),
        (
            "corrections of an announced move, with a clock",
            r"corrections \(with a clock\):\s+(\d+)",
            "{0}",
            "0",
            (0, "==", 0),
        ),
    ],
    "core": [
        ("sensor events per second", r"throughput: (\d+) sensor events/s", "{0}", "", None),
        (
            "per event p50 / p99 / max (wall)",
            r"wall per call: p50\s+(\d+) µs, p99\s+(\d+) µs, max\s+(\d+) µs",
            "{0} / {1} / {2} µs",
            "p99 < 1 ms",
            (1, "<", 1000),
        ),
        (
            "per event p99 (CPU)",
            r"CPU per call:\s+p50\s+\d+ µs, p99\s+(\d+) µs",
            "{0} µs",
            "",
            None,
        ),
    ],
    "latency": [
        (
            "with clock: press to move event, p99",
            r"with clock.*median of the runs' p99: to event ([\d.]+) ms",
            "{0} ms",
            "< 20 ms",
            (0, "<", 20),
        ),
        (
            "with clock: press to speech player started, p99",
            r"with clock.*median of the runs' p99:.*to speech ([\d.]+) ms",
            "{0} ms",
            "< 150 ms",
            (0, "<", 150),
        ),
        (
            "no clock: settle to move event, p99",
            r"without clock.*median of the runs' p99: to event ([\d.]+) ms",
            "{0} ms",
            "< 20 ms",
            (0, "<", 20),
        ),
        (
            "no clock: settle to speech player started, p99",
            r"without clock.*median of the runs' p99:.*to speech ([\d.]+) ms",
            "{0} ms",
            "< 150 ms",
            (0, "<", 150),
        ),
    ],
    "footprint": [
        (
            "start-up to READY=1 (median)",
            r"start-up: median READY=1 ([\d.]+) s",
            "{0} s",
            "< 1.5 s",
            (0, "<", 1.5),
        ),
        (
            "RSS idle (daemon / with speech worker)",
            r"idle: RSS ([\d.]+) MB \(with speech worker ([\d.]+) MB\)",
            "{0} / {1} MB",
            "< 60 MB",
            (0, "<", 60),
        ),
        (
            "RSS after the game",
            r"after a (\d+)-ply game: RSS ([\d.]+) MB \(with speech "
            r"worker ([\d.]+) MB\)",
            "{1} / {2} MB ({0} plies)",
            "< 60 MB",
            (1, "<", 60),
        ),
        (
            "RSS with live-page clients",
            r"with (\d+) of \d+ live-page clients: RSS ([\d.]+) MB \(with speech worker "
            r"([\d.]+) MB\)",
            "{1} / {2} MB ({0} clients)",
            "< 60 MB",
            (1, "<", 60),
        ),
        (
            "CPU while idle",
            r"idle: .*CPU [\d.]+% of a core \(([\d.]+)% with children\)",
            "{0}% of a core",
            "< 1%",
            (0, "<", 1),
        ),
    ],
    "fanout": [
        (
            "SSE: publish to last viewer, p99",
            r"SSE: median p99 ([\d.]+) ms with (\d+) viewers",
            "{0} ms ({1} viewers)",
            "< 100 ms",
            (0, "<", 100),
        ),
        (
            "SSE: server CPU per message",
            r"server's own CPU time per message ([\d.]+) ms",
            "{0} ms",
            "",
            None,
        ),
        (
            "MQTT: move to subscriber, p99",
            r"MQTT: median p99 ([\d.]+) ms with (\d+) boards",
            "{0} ms ({1} boards)",
            "",
            None,
        ),
    ],
}


def load_of(text: str) -> str:
    found = re.search(r"load average at start: ([\d.]+)", text)
    return found.group(1) if found else "?"


def table() -> str:
    rows = ["| benchmark | measure | figure | target | verdict | load at start |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    for name, checks in TABLE.items():
        path = HERE / "results" / f"{name}.txt"
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        for what, pattern, shown, target, judge in checks:
            found = re.search(pattern, text)
            if not found:
                rows.append(f"| {name} | {what} | not measured | {target} | | |")
                continue
            groups = found.groups()
            verdict = ""
            if judge is not None:
                index, op, threshold = judge
                value = float(groups[index])
                meets = value < threshold if op == "<" else value == threshold
                verdict = "meets" if meets else "**misses**"
            rows.append(
                f"| {name} | {what} | {shown.format(*groups)} | {target} | {verdict} "
                f"| {load_of(text)} |"
            )
    return "\n".join(rows) + "\n"


def summary() -> str:
    parts = [table()]
    for name in KEY_LINES:
        path = HERE / "results" / f"{name}.txt"
        if not path.exists():
            parts.append(f"### {name}\n\nnot run yet (`benchmarks/run_all.sh {name}`)\n")
            continue
        stamp = datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M UTC")
        lines = "\n".join(key_lines(name, path.read_text(encoding="utf-8")))
        parts.append(
            f"### {name} (finished {stamp}; full output: `results/{name}.txt`)\n\n"
            f"```\n{lines}\n```\n"
        )
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update RESULTS.md in place")
    args = parser.parse_args(argv)
    text = summary()
    if not args.write:
        print(text)
        return 0
    document = RESULTS.read_text(encoding="utf-8")
    if START not in document or END not in document:
        print(f"{RESULTS} has no {START} ... {END} section", file=sys.stderr)
        return 1
    head, rest = document.split(START, 1)
    _, tail = rest.split(END, 1)
    RESULTS.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
    print(f"{RESULTS} updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
