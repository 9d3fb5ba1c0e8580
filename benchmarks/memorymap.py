"""A process's private dirty memory split by what holds it, from ``/proc/PID/smaps``.

A day's growth (``growth.py``) is read from the daemon's private memory; when it steps
up, this says where: glibc's main heap (``[heap]``), the arenas glibc gives other
threads (the synthesis thread's, the disk writer's: each a 64 MB reservation of which
only the part in use is writable), thread stacks, the other anonymous mappings (pymalloc's
1 MB arenas, blocks too large for a heap, libraries' own ``mmap``), and the pages of
mapped files written to (libraries' data). Linux only; an empty split elsewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: glibc's heaps for threads other than the main one are reserved at this alignment
#: (``HEAP_MAX_SIZE``, 2 x 32 MB on a 64-bit system) and made writable as they grow.
THREAD_HEAP_ALIGNMENT = 64 << 20

KINDS = ("main heap", "thread arenas", "stacks", "other anonymous", "files")

_HEADER = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$")


@dataclass
class Mapping:
    start: int
    end: int
    perms: str
    name: str
    dirty_kb: int = 0


def mappings(pid: int | str) -> list[Mapping]:
    """Each mapping of the process with its private dirty kB; [] if it is gone."""
    found: list[Mapping] = []
    try:
        text = Path(f"/proc/{pid}/smaps").read_text()
    except OSError:
        return found
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            start, end, perms, name = header.groups()
            found.append(Mapping(int(start, 16), int(end, 16), perms, name.strip()))
        elif line.startswith("Private_Dirty:") and found:
            found[-1].dirty_kb = int(line.split()[1])
    return found


def kind_of(maps: list[Mapping], index: int) -> str:
    """What the mapping at ``index`` holds (one of ``KINDS``)."""
    this = maps[index]
    if this.name == "[heap]":
        return "main heap"
    if this.name == "[stack]":
        return "stacks"
    if this.name.startswith("/"):
        return "files"
    after = maps[index + 1] if index + 1 < len(maps) else None
    before = maps[index - 1] if index else None
    if this.start % THREAD_HEAP_ALIGNMENT == 0 and _reserved(after, this.end):
        return "thread arenas"  # its writable part, the reserved rest following
    if (
        before is not None
        and _reserved(before, this.start, ends=True)
        and (before.end - before.start == 4096)
    ):
        return "stacks"  # a thread's stack, its guard page below it
    return "other anonymous"


def _reserved(mapping: Mapping | None, at: int, ends: bool = False) -> bool:
    """Whether ``mapping`` is anonymous, inaccessible, and begins (``ends``: ends) at
    ``at``: a reservation or a guard page beside a writable mapping."""
    return (
        mapping is not None
        and (mapping.end if ends else mapping.start) == at
        and mapping.perms.startswith("---")
        and not mapping.name
    )


def private_dirty_by_kind(pid: int | str = "self") -> dict[str, float]:
    """The process's private dirty memory by kind, MB (every kind present, 0 if none)."""
    maps = mappings(pid)
    split = dict.fromkeys(KINDS, 0.0)
    for index, mapping in enumerate(maps):
        split[kind_of(maps, index)] += mapping.dirty_kb / 1e3
    return split


def describe(split: dict[str, float]) -> str:
    return ", ".join(f"{kind} {mb:.2f}" for kind, mb in split.items())
