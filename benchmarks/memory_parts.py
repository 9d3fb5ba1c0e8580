"""Where the daemon's memory goes: PSS and private memory added by each part, in order.

    python -m benchmarks.memory_parts [--quick]

A fresh interpreter run as the unit runs the daemon (``PYTHONOPTIMIZE=2``; ``ssl``
left out, as ``dgt-bridge run`` does without TLS; ``CACHE_DIRECTORY`` holding the
parsed configuration, as the unit's ``CacheDirectory=`` does after the first start, so
no PyYAML) imports the daemon's parts in the order ``dgt-bridge run`` does, pyttsx3's
synthesis in its thread last (``speech.synthesis: thread``), and notes
``/proc/self/smaps_rollup`` after each: what each part costs (its modules, its
libraries, its tables). Then PyYAML's cost with a cold cache, and the pyttsx3 worker
of ``speech.synthesis: process`` (a second interpreter, espeak-ng's voice loaded).
PSS counts a shared library's pages shared with other processes on this machine in
part only, so the private figure (pages only this process has) is the steadier.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from benchmarks.common import ROOT, footer, header

DAEMON_PARTS = [
    ("the interpreter (python -OO, site)", "pass"),
    ("python-chess (its attack tables)", "import chess"),
    ("configuration: daemon.config and load(), with the rules core's modules",
     "from daemon.config import load; settings = load(None, {})"),
    ("asyncio (without ssl), concurrent.futures", "import asyncio"),
    ("daemon.app: pipeline, journal, PGN writer (chess.pgn: chess.engine, chess.svg)",
     "import daemon.app, chess.pgn"),
    ("board link and DGT clock (pyserial)", "import drivers.dgt.link, drivers.clock.dgt3000"),
    ("speech: announcer, schedule, engines", "import daemon.speech.announcer"),
    ("speech synthesis in the daemon's thread: pyttsx3, libespeak-ng, a German voice",
     "from daemon.speech.pyttsx3_worker import Synthesizer; Synthesizer().use('de', 1.0)"),
    ("live page: daemon.broadcast.server (aiohttp, yarl, multidict)",
     "import daemon.broadcast.server"),
]  # fmt: skip

#: Imported only when the configuration's parsed tree is not in the cache (the first
#: start after an edit or an upgrade; daemon/files/yamlcache.py).
COLD_CACHE = [("the interpreter", "pass"), ("PyYAML", "import yaml")]

WORKER_PARTS = [
    ("the interpreter (python -P)", "pass"),
    ("json, wave", "import json, wave"),
    ("pyttsx3 and its espeak binding (libespeak-ng)",
     "import pyttsx3; from pyttsx3.drivers import _espeak"),
    ("espeak-ng's voice loaded (pyttsx3.init, a German voice)",
     "e = pyttsx3.init('espeak'); e.setProperty('voice', 'gmw/de'); e.runAndWait()"),
]  # fmt: skip

MEASURE = """
import sys
def figures():
    pss = private = 0
    for line in open('/proc/self/smaps_rollup'):
        key, value = line.split()[:2]
        if key == 'Pss:':
            pss = int(value)
        elif key in ('Private_Clean:', 'Private_Dirty:'):
            private += int(value)
    return pss / 1024, private / 1024
for code in sys.argv[1:]:
    exec(code)
    print(*figures(), flush=True)
"""


def measure(
    parts: list[tuple[str, str]], flags: list[str], prelude: str, cache: str = ""
) -> list[tuple[float, float]]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("DGT_BRIDGE_")}
    env.update(PYTHONPATH=str(ROOT), CACHE_DIRECTORY=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    codes = [prelude + code if i == 0 else code for i, (_, code) in enumerate(parts)]
    done = subprocess.run([sys.executable, *flags, "-c", MEASURE, *codes], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True, timeout=300)  # fmt: skip
    return [(float(a), float(b)) for a, b in (line.split() for line in done.stdout.splitlines())]


def table(title: str, parts: list[tuple[str, str]], rows: list[tuple[float, float]]) -> None:
    print(f"\n{title}\n| part | PSS added (MB) | private added (MB) |\n|---|---|---|")
    last = (0.0, 0.0)
    for (name, _), (pss, private) in zip(parts, rows, strict=True):
        print(f"| {name} | {pss - last[0]:.1f} | {private - last[1]:.1f} |")
        last = (pss, private)
    print(f"| **total** | **{rows[-1][0]:.1f}** | **{rows[-1][1]:.1f}** |")


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the same (it is quick)")
    parser.parse_args(argv)
    header("where the daemon's memory goes, part by part")
    from benchmarks.daemonrun import compile_sources

    compile_sources()
    with tempfile.TemporaryDirectory(prefix="dgt-memory-parts-") as cache:
        # As the unit runs it: its CacheDirectory= holds the parsed configuration
        # since the first start, so no PyYAML (2.2 MB) is imported.
        env = dict(os.environ, CACHE_DIRECTORY=cache, PYTHONPATH=str(ROOT))
        shipped = str(ROOT / "config" / "dgt-bridge.yaml")
        subprocess.run([sys.executable, "-m", "daemon", "check-config", shipped], cwd=ROOT,
                       env=env, capture_output=True, check=True, timeout=120)  # fmt: skip
        daemon = measure(DAEMON_PARTS, ["-OO"], "sys.modules['ssl'] = None\n", cache)
    table(
        "the daemon (dgt-bridge run as the unit runs it: -OO, the configuration's cache "
        "warm, pyttsx3 in its thread)",
        DAEMON_PARTS,
        daemon,
    )
    cold = measure(COLD_CACHE, ["-OO"], "")
    print(
        f"\nwith the configuration's cache cold (the first start after an edit): "
        f"PyYAML {cold[1][0] - cold[0][0]:.1f} MB of PSS more "
        f"({cold[1][1] - cold[0][1]:.1f} private)"
    )
    worker = measure(WORKER_PARTS, ["-P", "-OO"], "")
    table("the pyttsx3 worker (speech.synthesis: process; none with thread)", WORKER_PARTS, worker)
    print(
        "\n(the running daemon adds its game, queues and buffers: 1-3 MB more, see "
        "pibudget's PSS of the tree)"
    )
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
