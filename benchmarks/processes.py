"""The daemon's processes as the benchmarks see them, from ``/proc``: the tree, its
CPU and memory, free ports; shared by ``footprint``, ``pibudget`` and ``growth``."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT

#: The speech player the benchmarks give the daemon: no sound card, it notes when it ran.
RECORD_PLAYER = ROOT / "benchmarks" / "record_player.sh"
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """The process and all its children, grandchildren... (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children.get(current, [])
    return found


def proc_mb(pid: int, file: str, key: str) -> float:
    """A kB figure of ``/proc/PID/FILE`` (``VmRSS:`` in status, ``Pss:`` in
    smaps_rollup) in MB; 0 for a process already gone."""
    try:
        for line in Path(f"/proc/{pid}/{file}").read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def private_mb(pid: int) -> float:
    """The process's private memory (pages no other process maps), in MB."""
    return proc_mb(pid, "smaps_rollup", "Private_Clean:") + proc_mb(
        pid, "smaps_rollup", "Private_Dirty:"
    )


def rss_mb(pid: int) -> float:
    return proc_mb(pid, "status", "VmRSS:")


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def is_connected(event: dict[str, Any]) -> bool:
    """The board has been read: the first connection gives the start position's
    ``game_start`` (a ``connection`` event only follows a loss)."""
    kind = event.get("type")
    return kind in ("game_start", "game_resumed") or (
        kind == "connection" and event.get("state") == "connected"
    )


PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
_PRESENT, _FRAME = 1 << 63, (1 << 55) - 1


def page_frames(pid: int) -> set[int] | None:
    """The physical page frames the process has in memory (``/proc/PID/pagemap``), or
    None where the kernel hides them (frame numbers need CAP_SYS_ADMIN: they read 0)."""
    frames: set[int] = set()
    try:
        with open(f"/proc/{pid}/pagemap", "rb", buffering=0) as pagemap:
            for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
                if line.endswith("[vsyscall]"):
                    continue
                low, high = (int(x, 16) for x in line.split()[0].split("-"))
                pagemap.seek(low // PAGE_SIZE * 8)
                data = pagemap.read((high - low) // PAGE_SIZE * 8)
                for offset in range(0, len(data), 8):
                    entry = int.from_bytes(data[offset : offset + 8], "little")
                    if entry & _PRESENT:
                        frames.add(entry & _FRAME)
    except OSError:
        return None
    if frames == {0}:
        return None
    return frames


def own_pages_mb(pids: list[int]) -> float | None:
    """The memory of a group of processes counted as if no other program on the machine
    mapped the same files: each physical page any of them has, once. Their PSS summed
    would be this if they were alone; PSS divides a shared library's pages among every
    process of the machine that maps them (other Python programs share libpython here),
    so it moves with what else runs. None where the frames cannot be read."""
    frames: set[int] = set()
    for pid in pids:
        found = page_frames(pid)
        if found is None:
            return None
        frames |= found
    return len(frames) * PAGE_SIZE / 2**20
