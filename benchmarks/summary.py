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


def summary() -> str:
    parts = []
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
