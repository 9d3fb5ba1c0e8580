"""Whether this computer serves the boards configured in time: a word to the organiser
before the round, not a limit.

One daemon reads every board of a hall, so the computer beside the chain sets how soon
a press reaches the page and a blind player's earphone. On a Pi's CPU budget (modelled,
``benchmarks.pihall``; ``docs/tournament.md``, "Which computer for how many boards") a
Pi Zero 2 W keeps a chain of up to 8 boards and one blind player's board within its
targets; with 12 it keeps every move but a press now and then shows 0.6-0.9 s late,
and the blind player's first sound up to 0.3 s late. A Pi 4 was measured with two
chains of 12 boards and two blind players. Beyond what was measured on the computer
the daemon runs on, ``check-config`` and every start say so (``run`` logs it), so that
an organiser who set up a dozen boards on a Zero hears it before the round, not from
the arbiter.

The computer is named by the Pi's device tree (``/proc/device-tree/model``); on any
other computer (a PC, a Pi 5) nothing is said.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from daemon.config.sections import BoardEntry, Settings
from drivers.records import FrozenRecord

MODEL_FILE = Path("/proc/device-tree/model")


@dataclass(eq=False, repr=False)
class Measured(FrozenRecord):
    """The largest hall measured within its targets on one kind of computer."""

    name: str
    boards_on_a_chain: int
    chains: int
    speaking_boards: int


#: By the text the device tree's model starts with (the first that matches).
MEASURED: tuple[tuple[str, Measured], ...] = (
    ("Raspberry Pi Zero 2", Measured("a Pi Zero 2 W", 8, 1, 1)),
    ("Raspberry Pi 4", Measured("a Pi 4", 12, 2, 2)),
    ("Raspberry Pi Compute Module 4", Measured("a Pi 4", 12, 2, 2)),
)


def this_computer(model_file: Path | None = None) -> str | None:
    """The Pi's model as its device tree names it; None on any other computer."""
    try:
        return (model_file or MODEL_FILE).read_bytes().rstrip(b"\0\n").decode(
            errors="replace"
        ) or None
    except OSError:
        return None


def capacity_warnings(boards: Sequence[BoardEntry], model: str | None) -> list[str]:
    """What an organiser should hear about ``boards`` on the computer ``model``: one
    line for each measure past the largest hall measured on it (none elsewhere)."""
    measured = next((m for prefix, m in MEASURED if model and model.startswith(prefix)), None)
    if measured is None or len(boards) <= 1:
        return []
    chains = Counter(entry.bus_port for entry in boards if entry.bus_port)
    speaking = sum(entry.speak for entry in boards)
    where = (
        f"this computer is {measured.name} ({model}), measured with up to "
        f"{_count(measured.boards_on_a_chain, 'board')} on a chain, "
        f"{_count(measured.chains, 'chain')} and "
        f"{_count(measured.speaking_boards, 'speaking board')}"
    )
    advice = (
        "beyond that, presses may show late on the page and in a blind player's "
        'earphone (docs/tournament.md, "Which computer for how many boards")'
    )
    warnings = []
    for port, count in sorted(chains.items()):
        if count > measured.boards_on_a_chain:
            warnings.append(f"{count} boards on the chain at {port}: {where}; {advice}")
    if len(chains) > measured.chains:
        warnings.append(f"{len(chains)} chains: {where}; {advice}")
    if speaking > measured.speaking_boards:
        warnings.append(f"{speaking} speaking boards: {where}; {advice}")
    return warnings


def warnings_here(settings: Settings) -> list[str]:
    """``capacity_warnings`` for the hall ``settings`` configures (``boards:``), on this
    computer. A single board (``board:``) is never past a measure: its start reads no
    device tree."""
    if len(settings.boards) <= 1:
        return []
    return capacity_warnings(settings.boards, this_computer())


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")
