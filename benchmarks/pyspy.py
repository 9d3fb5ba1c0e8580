"""Where a running daemon's Python time goes: py-spy sampling it from outside.

``benchmarks.pihall --profile DIR`` samples the daemon's process over its games with
``py-spy record --gil`` (only the thread holding the interpreter's lock is sampled:
Python's own CPU, not threads waiting in ``select`` or ``fsync``), 100 times a second
and without stopping the process (``--nonblocking``), and keeps the collapsed stacks
(``DIR/pihall-<budget>.txt``, for a flame graph). ``summary`` prints the functions
with the largest share of the samples, counting each once per stack (inclusive).
py-spy is not one of the project's dependencies: ``pip install py-spy``.
"""

from __future__ import annotations

import collections
import contextlib
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

RATE = 100
#: The frames under every sample (the interpreter's start, the event loop's own
#: dispatch): left out of the summary, which is about what runs on them.
SCAFFOLD = ("<frozen runpy>", "runners.py", "base_events.py", "events.py", "__main__.py",
            "cli.py", "run.py", "threading.py")  # fmt: skip
_FRAME = re.compile(r"^(?P<name>.*?) \((?P<file>[^()]*?):(?P<line>\d+)\)$")


def py_spy() -> str | None:
    """The py-spy program (beside this interpreter, or on PATH), None if absent."""
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else shutil.which("py-spy")


class Profile:
    """``py-spy record`` of ``pid`` into ``out`` from ``start`` to ``stop``."""

    def __init__(self, pid: int, out: Path, seconds: float = 0.0) -> None:
        self.pid = pid
        self.out = out
        self.seconds = seconds  # 0: until ``stop``
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Profile:
        program = py_spy()
        if program is None:
            raise SystemExit("--profile needs py-spy: pip install py-spy")
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [program, "record", "--pid", str(self.pid), "--rate", str(RATE), "--gil",
             "--nonblocking", "--format", "raw", "--output", str(self.out)]
            + (["--duration", str(max(1, round(self.seconds)))] if self.seconds else []),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        return self

    def stop(self) -> None:
        """Ends the sampling (py-spy writes its file then); again: nothing."""
        if self.process is None:
            return
        if self.seconds:  # it ends by itself
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(self.seconds + 30)
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)  # py-spy writes its file on Ctrl-C
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def _function(frame: str) -> str:
    """``name (file)`` of a py-spy frame ``name (path/file.py:line)``."""
    found = _FRAME.match(frame)
    if found is None:
        return frame
    return f"{found['name']} ({found['file'].rsplit('/', 1)[-1]})"


def summary(path: Path, top: int = 30) -> list[str]:
    """The ``top`` functions by their inclusive share of the samples, as lines."""
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        return [f"no profile: {error}"]
    for line in lines:
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        samples = int(count)
        total += samples
        for function in {_function(frame) for frame in stack.split(";")}:
            if not function.endswith(tuple(f"({name})" for name in SCAFFOLD)):
                inclusive[function] += samples
    if not total:
        return ["no samples"]
    shown = [f"{total} samples ({total / RATE:.1f} s of Python holding the GIL)"]
    shown += [f"{100 * n / total:5.1f}%  {name}" for name, n in inclusive.most_common(top)]
    return shown
