"""The daemon's processes as the benchmarks see them, from ``/proc``: the tree, its
threads, CPU and memory (RSS, PSS, the tree's own pages), free ports; shared by
``footprint``, ``pibudget``, ``growth`` and the CPU groups."""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import subprocess
import time
from collections import defaultdict
from collections.abc import Iterator
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
    return sum(user_system_seconds(pid))


def user_system_seconds(pid: int) -> tuple[float, float]:
    """The process's CPU seconds (all its threads) in user mode and in the kernel: the
    n-body calibration scales the interpreter's speed, which the kernel's share (system
    calls, a VM's exits on them) does not follow."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS  # utime, stime


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


def thread_states(pid: int) -> str:
    """Each thread's name, state and where the kernel has it waiting
    (``/proc/PID/task/TID/stat`` and ``wchan``): a hung daemon's threads all asleep in
    ``futex_wait`` is a deadlock, one running is a daemon that is busy."""
    found = []
    with contextlib.suppress(OSError):
        for task in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{pid}/task/{task}/stat").read_text()
                name, state = stat[stat.index("(") + 1 : stat.rindex(")")], stat.split(") ")[1][0]
                wchan = Path(f"/proc/{pid}/task/{task}/wchan").read_text().strip() or "-"
                found.append(f"{name} {state} {wchan}")
    return ", ".join(found) or "none"


def descendants(pid: int) -> list[int]:
    """The process and all its children, grandchildren... from
    ``/proc/PID/task/TID/children`` (no scan of all of /proc: the CPU groups and the
    sampler ask every few milliseconds)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{current}/task"):
                with contextlib.suppress(OSError):
                    todo += [int(c) for c in Path(f"/proc/{current}/task/{task}/children")
                             .read_text().split()]  # fmt: skip
    return found


def thread_name(pid: int, task: int | str) -> bytes:
    """The system name of ``pid``'s thread ``task`` (``/proc/PID/task/TID/comm``);
    OSError when it is gone."""
    return Path(f"/proc/{pid}/task/{task}/comm").read_bytes().strip()


def daemon_threads(pid: int) -> list[int]:
    """The thread ids of process ``pid`` (its main thread's is ``pid``); [] when gone."""
    with contextlib.suppress(OSError):
        return [int(task) for task in os.listdir(f"/proc/{pid}/task")]
    return []


def synthesis_threads(pid: int, tasks: list[int] | None = None) -> list[int]:
    """The thread ids of the daemon's pyttsx3 synthesis thread and of the threads it
    started (libespeak-ng's, which inherit its name), among ``tasks`` (default: all
    of ``pid``'s, ``daemon_threads``)."""
    from daemon.speech.synthesis import OS_THREAD_NAME

    found = []
    for task in daemon_threads(pid) if tasks is None else tasks:
        with contextlib.suppress(OSError):
            if thread_name(pid, task) == OS_THREAD_NAME:
                found.append(task)
    return found


# -- memory -----------------------------------------------------------------------------


def pss_mb(pid: int) -> float:
    return proc_mb(pid, "smaps_rollup", "Pss:")


def command_name(pid: int) -> str:
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    text = " ".join(a.decode(errors="replace") for a in args if a)
    if "record_stream_player" in text:
        return STAND_IN
    return "speech worker" if "pyttsx3_worker" in text else "daemon" if "daemon" in text else text


#: The benchmark's stand-in for the running player (Python: not what a Pi would run).
STAND_IN = "player stand-in"


@contextlib.contextmanager
def real_player() -> Iterator[int | None]:
    """A real ``aplay -D null`` fed raw PCM on a pipe, as the daemon runs it (its pid;
    None without aplay)."""
    argv = ["aplay", "-q", "-D", "null", "-t", "raw", "-f", "S16_LE", "-r", "22050", "-c", "1"]
    try:
        player = subprocess.Popen(argv, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        yield None
        return
    try:
        assert player.stdin is not None
        player.stdin.write(bytes(22050))
        player.stdin.flush()
        time.sleep(0.5)
        yield player.pid
    finally:
        player.kill()
        player.wait()


@functools.cache
def player_pss() -> float:
    """PSS of a real streaming ``aplay`` (the stand-in's replacement in the tree)."""
    with real_player() as pid:
        return 0.0 if pid is None else pss_mb(pid)


def tree_pss(pid: int) -> tuple[float, dict[str, float]]:
    """PSS summed over the process tree, and by process kind (each player's stand-in
    replaced by a real aplay's figure)."""
    parts: dict[str, float] = defaultdict(float)
    players = 0  # a hall's speaking boards have one each
    for member in descendants(pid):
        kind = command_name(member)
        if kind == STAND_IN:
            players += 1
        else:
            parts[kind] += pss_mb(member)
    if players:
        parts["player (aplay)"] = players * player_pss()
    return sum(parts.values()), dict(parts)


def tree_own_pages(pid: int) -> float | None:
    """The tree's memory with each physical page counted once (``own_pages_mb``):
    its PSS were it alone on the machine, as the daemon is on a Pi, where no other
    Python program shares libpython's pages with it. The stand-in is replaced by a
    real aplay, run meanwhile."""
    members = [m for m in descendants(pid) if command_name(m) != STAND_IN]
    with real_player() as player:
        return own_pages_mb(members + ([player] if player else []))


def task_schedstat(pid: int) -> dict[int, tuple[int, int]]:
    """Each thread of ``pid``: the nanoseconds it has run and the times it was run
    (``/proc/PID/task/TID/schedstat``)."""
    stats: dict[int, tuple[int, int]] = {}
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()
                stats[int(task)] = (int(fields[0]), int(fields[2]))
    return stats


def task_run_ns(pid: int) -> dict[int, int]:
    """Nanoseconds each thread of ``pid`` has run."""
    return {task: run_ns for task, (run_ns, _runs) in task_schedstat(pid).items()}


def cpu_share(pid: int, seconds: float) -> tuple[float, dict[str, float]]:
    """CPU seconds per second of the process tree over ``seconds``, and by process
    kind. From each thread's run time in ns (schedstat), not utime + stime: those
    count in 10 ms ticks, and an idle daemon at the Zero 2 W budget's 2% runs 0.14%
    of a core, 40 ms in a 30 s window: four ticks, read to +-1 per process."""
    family = descendants(pid)
    kinds = {member: command_name(member) for member in family}
    before = {member: task_run_ns(member) for member in family}
    started = time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - started
    parts: dict[str, float] = defaultdict(float)
    for member in family:
        old = before[member]
        ran = sum(ns - old.get(task, 0) for task, ns in task_run_ns(member).items())
        parts[kinds[member]] += ran / 1e9 / elapsed
    return sum(parts.values()), dict(parts)
