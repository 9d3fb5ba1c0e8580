"""A kept file is written whole or not at all, and a writer killed mid-write (SIGKILL,
a power cut) leaves nothing behind for good: the next write sweeps its temporary
file away, while another daemon's, still writing, stays."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from daemon.files import cachedir

WRITER = """
import os, sys, time
with open(f"{sys.argv[1]}.{os.getpid()}.tmp", "wb") as handle:
    handle.write(b"half a file")
    handle.flush()
    print("writing", flush=True)
    time.sleep(60)
"""


def _writer(path: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)],
                             stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert child.stdout is not None and child.stdout.readline() == "writing\n"
    return child


def test_a_writer_killed_mid_write_leaves_no_file_behind(tmp_path: Path) -> None:
    path = tmp_path / "code" / "kept.marshal"
    path.parent.mkdir()
    killed, writing = _writer(path), _writer(path)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert cachedir.replace_file(str(path), b"whole")
        assert path.read_bytes() == b"whole"
        left = sorted(p.name for p in path.parent.iterdir())
        assert left == ["kept.marshal", f"kept.marshal.{writing.pid}.tmp"], left
    finally:
        writing.kill()
        writing.wait()
        killed.stdout.close()  # type: ignore[union-attr]
        writing.stdout.close()  # type: ignore[union-attr]


def test_a_file_that_cannot_be_written_is_not_kept_and_says_so(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    assert not cachedir.replace_file(str(blocked / "kept.marshal"), b"whole")
