"""The daemon's targets on a Raspberry Pi's CPU budget, simulated with a cgroup quota.

    python -m benchmarks.pibudget [--plies N] [--boards N] [--quick] [--budgets full,pi4,zero2w]
                                  [--mqtt plain,tls]

Nobody here has a Pi, so ``dgt-bridge run`` (``python -m daemon run``, with the speech
worker, the player and everything else it starts: its whole process tree) runs in a
cgroup-v1 CPU group (``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``; ``cpu.max`` on
cgroup v2) that grants it the fraction of ONE core of this machine that a Pi's core is
worth. The board emulator, the clock and this script run outside the group, at full
speed, as a real board would. Every budget is measured in the same run, one after the
other, so that the machine's load (shared with other developers) is the same for all
and the figures can be read as ratios side by side.

How the fractions are derived (and how uncertain they are):

- **Pi 4 (Cortex-A72, 1.5 GHz).** Published single-thread Python figure: the n-body
  benchmark (5 bodies, 5,000,000 steps) took 158.26 s in CPython on a Raspberry Pi 4
  Model B at 1.5 GHz, performance governor, not throttled
  (https://chaitanyamehta.github.io/projects/performance-analysis-of-programming-languages).
  This script runs the same n-body (written here from the Computer Language Benchmarks
  Game's specification: Sun, Jupiter, Saturn, Uranus, Neptune, dt 0.01, advance
  ``--calibrate-steps`` steps) on this machine and takes its CPU time per step; the
  Pi 4's fraction of one of our cores is (ours per step) / (the Pi's per step). **Ours
  is timed in the Pi's interpreter, not the daemon's**: the figure is dated 2020-01-28,
  when Raspbian Buster had CPython 3.7.3 and 2.7.16, and 3.11 runs the n-body 1.4-1.5x
  faster than either (``benchmarks/nbody.py``; ``--calibration-python``). Until
  2026-12-07 it was timed in 3.11, and every budget was that much too small. The
  published program is not known line by line (an n-body written differently can differ
  by 20-30%), nor which of the two interpreters ran it (the faster here is taken: the
  smaller budget). Hence "Pi 4 budget" is accurate to perhaps +-30%, and it prices a
  machine by floats in a loop, which the daemon does not do: this Xeon VM runs the
  n-body 1.6x faster than the AMD EPYC VM of earlier runs, and the daemon no faster.
- **Pi Zero 2 W (Cortex-A53, 1.0 GHz).** No published CPython figure for the Zero 2 W
  against an x86 machine was found. It is the Pi 3's core (Cortex-A53, 64-bit) at 1.0
  GHz instead of 1.2-1.4 GHz; Gamess & Hernandez, "Performance evaluation of different
  Raspberry Pi models" (Electronics, 2022; https://digitalcommons.jsu.edu/fac_res/209)
  found the Zero 2 W (overclocked) on a par with the Pi 3B/3B+, and the Pi 4 is
  commonly measured 2-3x a Pi 3 per core on CPU-bound code (the A72 is out-of-order and
  wider, the A53 in order). Zero 2 W at 1.0 GHz = Pi 3B+ (1.4 GHz) / 1.4, so a Pi 4 core
  is worth about 2 x 1.4 = 2.8 to 2.5 x 1.4 = 3.5 Zero 2 W cores: this script takes
  ``ZERO2W_PER_PI4 = 3.0`` (the range gives +-17% on top of the Pi 4's uncertainty).

The group has ``cpu.shares`` 8192 (8x the default weight): a quota is only a ceiling,
and on a machine busy with other programs a group of the default weight gets less
than its quota; with the high weight it gets its whole quota first. The 1-minute load
average when each measure ended is printed beside it (``@L``).

What the quota does and does not simulate: the group gets ``quota`` µs of CPU in every
``period`` (10 ms here, 17 ms for the Zero 2 W as the kernel's smallest quota is 1 ms;
not the default 100 ms: a 100 ms period lets the daemon run at
full speed for its share and then stand still for the rest, 80-90 ms stalls that a slow
Pi does not have; at 10-17 ms the stall is at most ~9-16 ms, which is still added to a
latency sometimes). The whole process tree shares ONE slow core, though a Pi Zero 2 W
has four: the speech synthesis (thread or worker) competes with the daemon here and would not
there (pessimistic). Memory bandwidth, caches, the SD card's fsync and the serial line
are not simulated (the journal's fsync is done on this machine's disk; the pty has no
baud rate except in the bus chain's emulator, which keeps 9600 baud). Nor is a Pi's
idle: this machine is a VM whose CPUs halt when nothing runs, and a daemon that sleeps
between two bus commands wakes with cold caches and pays about twice a busy CPU's
price a command, which the n-body calibration (never idle) does not see.
``--keep-awake`` keeps the CPUs spinning at the lowest priority instead
(``benchmarks/keepawake.py`` has the figures); each run prints which it measured.

Measured at each budget (the ``full`` budget is this machine without a quota):

- start -> READY=1 (sd_notify, a socket of ours standing in for systemd), median;
- idle CPU beside a board (board still, no viewers), as a share of the budget;
- PSS (proportional set size, ``/proc/PID/smaps_rollup``) summed over the daemon's
  process tree, idle and after the game, and the daemon and speech worker apart; and
  the tree's own pages (``/proc/PID/pagemap``: each physical page any of its processes
  has, counted once), which is what its PSS would be were it alone on the machine. PSS
  splits a shared library's pages among every process that maps it: here libpython,
  libcrypto and libespeak-ng are shared with the other developers' Python programs and
  speech workers, so the PSS falls as the machine gets busier (31-33 MB for the
  daemon in a loaded run, 35 MB on an idle machine, the same code); on a Pi nothing
  else maps libpython. The daemon is run as ``systemd/dgt-bridge.service`` runs it: a
  configuration file (no ``DGT_BRIDGE_*`` overrides), ``CACHE_DIRECTORY`` warmed by one
  ``check-config`` (the Pi's daemon has parsed its file at its first start, so PyYAML is
  not imported), ``PYTHONOPTIMIZE=2``, ``PYTHONUNBUFFERED=1``;
- a real game with a DGT clock, every move completed by a press: press (the clock's
  time message written to the emulator's pty) -> the ``move`` event's JSON line read
  from the daemon's ``--events -`` standard output (includes the pipe: the event is
  written after the journal's append, before speech and broadcast), and press -> the
  first loud sample of the move's phrase heard, with the real pyttsx3 engine
  streaming into the daemon's running player (``speech.stream_player`` is
  ``benchmarks/record_stream_player.py``: no sound card; it notes when the first loud
  sample it was fed would be played, by a player that plays what it gets at once and
  then in real time; a real aplay adds one period, 25 ms, and the card's delay). The
  stand-in is a Python process: its PSS is left out of the tree's, and a real
  ``aplay -D null`` streaming is measured instead and added (``player_pss``);
- the emulator and the time stamps run in this process at nice -10 (if allowed), the
  daemon at the usual priority: a real board is never slowed down by other programs,
  and on this shared machine the emulator's thread was (at load 10 a bus chain's
  replies came too late for the poller's 80 ms and boards were lost);
- with ``--boards N``: one daemon with N boards on one DGT bus chain (9600 baud), a
  different real game each at blitz pace (3+2), every move exact, press -> ``move``
  event p99 per budget;
- every shipped feature alive (``benchmarks/alive.py``; pass/fail, not timed): the
  one-board daemons run with the page and MQTT on (to a real Mosquitto, as a hall
  runs them; ``--mqtt plain,tls``, the default, measures each budget twice, MQTT plain
  and MQTT over TLS, side by side, and a verdict holds only if met in both), and in
  the game the real relay (``dgt-bridge relay``) must hold
  every move, a viewer of the page must have had every move from ``/events``, and
  every move's phrase must have been heard; the bus chain's daemon (no speech) runs
  with the page and MQTT on too, and the relay and a viewer must have every board's
  whole game. A budget whose games miss any of these fails the run (exit status 1),
  whatever its figures: issue 19's ``ssl`` trick met its figures with plain MQTT dead.

Targets (at the Pi Zero 2 W budget): press -> move p99 < 50 ms; press -> speech p99
< 250 ms; READY < 5 s; idle CPU < 2% of the budget; 12 bus boards exact with lag p99
< 500 ms; PSS of the whole tree < 45 MB (memory does not depend on the CPU budget).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess

from benchmarks import alive
from benchmarks.alive import Check, Features
from benchmarks.common import GAMES_PGN, footer, header, load_average, percentile
from benchmarks.cpugroups import Budget, ProcessGroups, can_use_cgroups, cpu_group
from benchmarks.daemonrun import SYNTHESIS, BudgetDaemon, compile_sources, unit_config
from benchmarks.keepawake import add_option as add_keep_awake
from benchmarks.keepawake import describe as describe_idle
from benchmarks.keepawake import kept_awake
from benchmarks.latency import (
    StampingEmulator,
    first_game_with,
    plan_game,
)
from benchmarks.nbody import add_options as add_calibration_options
from benchmarks.nbody import (
    calibration_pythons,
    interpreter_name,
    nbody_seconds_per_step,
    seconds_per_step,
)
from benchmarks.processes import cpu_share, is_connected, tree_own_pages, tree_pss
from benchmarks.treesampler import TreeSampler, describe_window

#: Published: CPython n-body, 5,000,000 steps, Raspberry Pi 4 at 1.5 GHz (see above).
PI4_NBODY_SECONDS = 158.26
PI4_NBODY_STEPS = 5_000_000
#: A Pi 4 core is worth about this many Pi Zero 2 W cores (2.8-3.5, see above).
ZERO2W_PER_PI4 = 3.0
#: A budget's name with this ending gives each process of the tree its own group (and
#: the daemon's synthesis thread one, its other threads one beside its loop's:
#: ``cpugroups.ProcessGroups``).
CORES = "-cores"
#: How the daemon's MQTT reaches the broker in a run (``--mqtt``).
MQTT_MODES = ("plain", "tls")


# -- the measures -----------------------------------------------------------------------


@dataclass
class Figures:
    budget: Budget
    #: MQTT to the broker: plain or tls (``--mqtt``)
    mqtt: str = "plain"
    #: the column's name with the MQTT mode (several modes measured)
    named_with_mqtt: bool = False
    readies: list[float] = field(default_factory=list)
    idle_cpu: float = float("nan")  # share of one core of this machine
    idle_parts: dict[str, float] = field(default_factory=dict)  # by process kind
    pss_idle: float = float("nan")
    pss_idle_parts: dict[str, float] = field(default_factory=dict)
    pss_after: float = float("nan")
    pss_after_parts: dict[str, float] = field(default_factory=dict)
    #: the tree's own pages, each counted once (tree_own_pages), idle / after the game
    own_idle: float | None = None
    own_after: float | None = None
    to_event: list[float] = field(default_factory=list)
    to_speech: list[float] = field(default_factory=list)
    #: press -> speech of the moves pressed when the previous phrase had ended (the
    #: daemon's own latency), and of those pressed while it was still heard, with
    #: how long it still sounded after the press (the wait, by issue 14's design)
    speech_free: list[float] = field(default_factory=list)
    speech_behind: list[tuple[float, float]] = field(default_factory=list)
    #: one line per move slower than the targets (or the slowest): where the time went
    slow: list[str] = field(default_factory=list)
    wrong: int = 0
    unspoken: int = 0
    bus_exact: str = ""
    bus_lag: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the 1-minute load average when each measure ended, by measure
    loads: dict[str, float] = field(default_factory=dict)
    #: each shipped feature's verdict on the game (benchmarks.alive): MQTT, page, speech
    alive: list[Check] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The table's column: the budget, and the MQTT mode when both are measured."""
        return f"{self.budget.name} {self.mqtt}" if self.named_with_mqtt else self.budget.name

    def noted(self, measure: str) -> None:
        """Notes the machine's load beside ``measure`` (the figures depend on it)."""
        self.loads[measure] = os.getloadavg()[0]

    def at(self, measure: str) -> str:
        load = self.loads.get(measure)
        return "" if load is None else f" @{load:.1f}"


def measure_single(budget: Budget, figures: Figures, plies: int, starts: int, idle: float) -> None:
    """Start-up, idle CPU, PSS and a game with a clock, one board; every daemon with
    the page and MQTT on (a real Mosquitto; ``figures.mqtt`` tls: over TLS), as a hall
    runs it, and the game's checked for every feature delivered (``benchmarks.alive``)."""
    emulator = StampingEmulator().start()
    work = Path(tempfile.mkdtemp(prefix="dgt-pibudget-alive-"))
    features = Features(work, tls=figures.mqtt == "tls").start()
    if features.problem:
        figures.notes.append(f"features: {features.problem}")

    def configured(tmp: str, tournament: str) -> Path:
        """The shipped configuration with the broadcast's MQTT towards the broker."""
        return unit_config(Path(tmp), None, {"broadcast": features.settings(tournament)})

    try:
        with cpu_group(budget) as group:
            for _ in range(starts):
                with tempfile.TemporaryDirectory(prefix="dgt-pibudget-") as tmp:
                    # MQTT as in the game, on a topic the relay does not read (each
                    # start is a new game of its own)
                    config = configured(tmp, "pibudget-starts")
                    daemon = BudgetDaemon(group, Path(tmp), port=emulator.port_path,
                                          config=config)  # fmt: skip
                    try:
                        figures.readies.append(daemon.wait_ready(120))
                        figures.noted("ready")
                        if not daemon.wait_for(is_connected, 60):
                            figures.notes.append(daemon.not_read())
                    finally:
                        daemon.stop()
            game = first_game_with(plies)
            plan = plan_game(game, plies, True, seed=7)
            expected = [m.uci() for m in list(game.mainline_moves())[:plies]]
            with tempfile.TemporaryDirectory(prefix="dgt-pibudget-") as tmp:
                config = configured(tmp, alive.TOURNAMENT)
                daemon = BudgetDaemon(group, Path(tmp), port=emulator.port_path, config=config)
                try:
                    daemon.wait_ready(120)
                    if not daemon.wait_for(is_connected, 60):
                        figures.notes.append(daemon.not_read())
                        return
                    daemon.wait_started(120)  # idle: with speech and page up
                    features.watch(daemon.http_port)  # a viewer, as the game begins
                    time.sleep(5.0)  # the speech worker's start, the first clock reports
                    figures.idle_cpu, figures.idle_parts = cpu_share(daemon.pid, idle)
                    figures.noted("idle")
                    figures.pss_idle, figures.pss_idle_parts = tree_pss(daemon.pid)
                    figures.own_idle = tree_own_pages(daemon.pid)
                    paths = (
                        group.paths if isinstance(group, ProcessGroups)
                        else [group.path] if group is not None else []
                    )  # fmt: skip
                    with TreeSampler(daemon.pid, paths) as sampler:
                        emulator.play(plan.events)
                        emulator.wait_played(plan.events[-1].t - plan.events[0].t + 60)
                        daemon.wait_for(
                            lambda e: e.get("type") == "move" and int(e["ply"]) == plies, 30
                        )
                        time.sleep(3.0)  # the last announcement
                    figures.pss_after, figures.pss_after_parts = tree_pss(daemon.pid)
                    figures.own_after = tree_own_pages(daemon.pid)
                    figures.noted("game")
                    _latencies(figures, daemon, emulator, plan, expected, sampler)
                    figures.alive = features.checks(expected, heard=len(figures.to_speech))
                finally:
                    daemon.stop()
    finally:
        features.stop()
        shutil.rmtree(work, ignore_errors=True)
        emulator.stop()


#: A move's line is printed (``slow``) if it took longer than this to the event or to
#: the first sound (the targets' order), besides the slowest of each.
SLOW_EVENT, SLOW_SPEECH = 0.020, 0.200


@dataclass
class Timed:
    """One move's times (one clock, any): its press, its ``move`` event, the first loud
    sample of its phrase heard, and how long the phrase before still sounded after the
    press (0: it had ended)."""

    ply: int
    pressed: float
    event_at: float
    heard: float
    still: float

    @property
    def to_event(self) -> float:
        return self.event_at - self.pressed

    @property
    def to_speech(self) -> float:
        return self.heard - self.pressed


def timed_moves(
    expected: list[str],
    seen: dict[int, tuple[str, float]],
    presses: dict[int, float],
    starts: list[float],
    ends: list[float],
) -> tuple[list[Timed], int, int]:
    """Each move's times, from its press (``presses[ply]``), its first ``move`` event
    (``seen[ply]``: uci, time) and the player's log (phrases' first samples heard,
    ``starts``, and ends); and the moves wrong or missed, and unspoken (no phrase heard
    between its event and the next move's)."""
    rows: list[Timed] = []
    wrong = unspoken = 0
    for ply in range(1, len(expected) + 1):
        got = seen.get(ply)
        pressed = presses.get(ply)
        if got is None or got[0] != expected[ply - 1] or pressed is None:
            wrong += 1
            continue
        following = seen.get(ply + 1, ("", float("inf")))[1]
        spoken = [s for s in starts if pressed <= s < following]
        if not spoken:
            unspoken += 1
            continue
        # The phrase before this one: still sounding at the press if it ended after it.
        before = [e for e in ends if e < spoken[0]]
        still = max(0.0, before[-1] - pressed) if before else 0.0
        rows.append(Timed(ply, pressed, got[1], spoken[0], still))
    return rows, wrong, unspoken


def _latencies(figures: Figures, daemon: BudgetDaemon, emulator: Any, plan: Any,
               expected: list[str], sampler: TreeSampler | None = None) -> None:  # fmt: skip
    seen: dict[int, tuple[str, float]] = {}
    with daemon.changed:
        for wall, _, event in daemon.events:
            if event.get("type") == "move":
                seen.setdefault(int(event["ply"]), (str(event["uci"]), wall))
            elif event.get("type") == "notice" and "speech" in str(event.get("code")):
                # an engine that failed: the phrases after it are another engine's
                figures.notes.append(f"speech: {event.get('message')}")
    starts, ends = daemon.player_log_times()
    presses = {
        ply: emulator.applied_at[id(event)]
        for ply, event in plan.deciding.items()
        if id(event) in emulator.applied_at
    }
    rows, wrong, unspoken = timed_moves(expected, seen, presses, starts, ends)
    figures.wrong += wrong
    figures.unspoken += unspoken
    for row in rows:
        figures.to_event.append(row.to_event)
        figures.to_speech.append(row.to_speech)
        if row.still > 0:
            figures.speech_behind.append((row.to_speech, row.still))
        else:
            figures.speech_free.append(row.to_speech)
    if not rows:
        return
    slowest_event = max(rows, key=lambda r: r.to_event)
    slowest_speech = max(rows, key=lambda r: r.to_speech)
    for row in rows:
        if not (row.to_event > SLOW_EVENT or row.to_speech > SLOW_SPEECH
                or row.ply in (slowest_event.ply, slowest_speech.ply)):  # fmt: skip
            continue
        behind = f", the previous phrase sounded {row.still * 1e3:.0f} ms more" if row.still else ""
        figures.slow.append(
            f"ply {row.ply}: press -> move {row.to_event * 1e3:.1f} ms "
            f"[{describe_window(sampler, row.pressed, row.event_at)}]; -> heard "
            f"{row.to_speech * 1e3:.1f} ms{behind} "
            f"[{describe_window(sampler, row.pressed, row.heard)}]"
        )


def measure_bus(budget: Budget, figures: Figures, boards: int, plies: int) -> None:
    """One daemon, ``boards`` boards on one bus chain, a real game each at blitz pace."""
    from benchmarks.hall import _final, _lags
    from drivers.simulators.gamelogs import distinct_openings
    from drivers.simulators.handling import human_sensor_log

    games = distinct_openings(GAMES_PGN, boards, plies)
    logs = [
        human_sensor_log(
            chess.Board(), g, seed=1 + i, with_clock=True, clock_seconds=180, increment=2
        )
        for i, g in enumerate(games)
    ]
    with tempfile.TemporaryDirectory(prefix="dgt-pibudget-bus-") as tmp:
        work = Path(tmp)
        # MQTT and the page on, as a hall runs; every board's game checked on both
        features = Features(work, tls=figures.mqtt == "tls").start()
        if features.problem:
            figures.notes.append(f"bus features: {features.problem}")
        # The shipped storage.pgn_every (0: the PGN rewritten after every move, as a
        # live PGN reader needs it), now that a rewrite costs one move's SAN.
        chain, config = bus_chain(work, boards, "3+2", broadcast=features.settings())
        try:
            with cpu_group(budget) as group:
                daemon = BudgetDaemon(group, work, config=config, speech=False)
                try:
                    daemon.wait_ready(120)
                    read = daemon.boards_read(boards, 60)
                    if read < boards:
                        figures.notes.append(f"bus: only {read} of {boards} boards read")
                    daemon.wait_started(120)  # the page is up
                    features.watch(daemon.http_port)
                    for i, log in enumerate(logs):
                        chain.play_on(i, log, speed=1.0)
                    chain.wait_played(3600)
                    expected = {str(i + 1): [m.uci() for m in g] for i, g in enumerate(games)}
                    moves: dict[str, list[tuple[int, str, float]]] = defaultdict(list)
                    wait_until = time.monotonic() + 30
                    while True:
                        moves.clear()
                        with daemon.changed:
                            for _, mono, event in daemon.events:
                                if event.get("type") == "move":
                                    moves[str(event.get("board"))].append(
                                        (int(event["ply"]), str(event["uci"]), mono)
                                    )
                        done = all(_final(moves[b]) == expected[b] for b in expected)
                        if done or time.monotonic() > wait_until:
                            break
                        time.sleep(0.2)
                    figures.alive += [
                        Check(f"bus {check.feature}", check.alive, check.seen)
                        for check in features.checks(expected, heard=None)
                    ]
                finally:
                    daemon.stop()
        finally:
            features.stop()
            chain.stop()
    figures.noted("bus")
    exact = sum(_final(moves[b]) == expected[b] for b in expected)
    figures.bus_exact = f"{exact}/{boards}"
    _, figures.bus_lag = _lags(chain.applied, defaultdict(list), moves)


def bus_chain(
    work: Path,
    boards: int,
    time_control: str = "",
    pgn_every: int | None = None,
    broadcast: dict[str, Any] | None = None,
) -> tuple[Any, Path]:
    """An emulated DGT bus chain of ``boards`` boards (started) and the configuration
    of one daemon reading them all (``storage.pgn_every`` and ``broadcast:`` keys if
    given)."""
    from benchmarks.hall import TimedChain

    serials = [f"{1025 + i:05d}" for i in range(boards)]
    chain = TimedChain(work, serials=serials, seed=1).start()
    config = work / "hall.yaml"
    clock = f"clock:\n  time_control: {time_control}\n" if time_control else ""
    config.write_text(
        clock
        + "storage:\n  fsync: false\n"
        + (f"  pgn_every: {pgn_every}\n" if pgn_every else "")
        + (f"broadcast: {json.dumps(broadcast)}\n" if broadcast else "")  # YAML's flow map
        + "boards:\n"
        + "".join(
            f'  - {{id: "{i + 1}", bus_port: "{chain.port_path}", bus_serial: "{s}"}}\n'
            for i, s in enumerate(serials)
        ),
        encoding="utf-8",
    )
    return chain, config


def board_memory(counts: Sequence[int]) -> dict[int, float]:
    """PSS of one daemon's tree (no speech) reading N bus boards, idle, for each N."""

    found: dict[int, float] = {}
    for count in counts:
        with tempfile.TemporaryDirectory(prefix="dgt-pibudget-mem-") as tmp:
            work = Path(tmp)
            chain, config = bus_chain(work, count)
            try:
                daemon = BudgetDaemon(None, work, config=config, speech=False)
                try:
                    daemon.wait_ready(120)
                    daemon.boards_read(count, 60)
                    time.sleep(3.0)
                    found[count] = tree_pss(daemon.pid)[0]
                finally:
                    daemon.stop()
            finally:
                chain.stop()
    return found


def calibrated_budgets(
    names: str,
    steps: int,
    zero2w_pinned: float = 0.0,
    pi4_pinned: float = 0.0,
    pythons: str = "era",
) -> list[Budget]:
    """The budgets ``names`` (full,pi4,zero2w, each also with -cores) at the fractions
    of one of this machine's cores the n-body calibration gives (``zero2w_pinned``,
    ``pi4_pinned``: the Zero 2 W's, the Pi 4's in % instead), each single group checked
    with the n-body; printed. The n-body is timed in ``pythons``
    (``benchmarks.nbody.calibration_pythons``), the fastest of them setting the budgets,
    and in this interpreter for the groups' checks."""
    ours, ours_wall = nbody_seconds_per_step(steps)
    pi4_step = PI4_NBODY_SECONDS / PI4_NBODY_STEPS
    print(
        f"calibration: n-body {steps} steps here, in this interpreter "
        f"({interpreter_name(sys.executable)}): {ours * 1e6:.2f} µs CPU per step "
        f"({ours_wall * 1e6:.2f} µs wall), for the groups' checks; set against the Pi's "
        f"figure, as before 2026-12-07, it would make a Pi 4 core {ours / pi4_step * 100:.1f}%"
        f" of one of ours (load {load_average()})"
    )
    pi4 = ours / pi4_step
    to_set = {n.removesuffix(CORES) for n in names.split(",")} - {"full"}
    to_set -= {"pi4"} if pi4_pinned else set()
    to_set -= {"zero2w"} if zero2w_pinned else set()
    if to_set:  # a budget the calibration sets: timed in the Pi's interpreters
        timed = {p: seconds_per_step(p, steps) for p in calibration_pythons(pythons)}
        for python, step in timed.items():
            print(
                f"calibration: in {interpreter_name(python)} ({python}): "
                f"{step * 1e6:.2f} µs CPU per step (median of 3)"
            )
        pi4 = min(timed.values()) / pi4_step
        # Printed only when it sets a budget: the line above is this interpreter's, and
        # a log of a full-speed or pinned run must not read as a model it did not use.
        print(
            f"calibration: Pi 4 (published, 2020): {pi4_step * 1e6:.2f} µs per step -> a "
            f"Pi 4 core = {pi4 * 100:.1f}% of one of ours (this machine {1 / pi4:.1f}x "
            f"faster); Pi Zero 2 W = Pi 4 / {ZERO2W_PER_PI4:g} = "
            f"{pi4 / ZERO2W_PER_PI4 * 100:.1f}% (load {load_average()})"
        )
    zero = pi4 / ZERO2W_PER_PI4
    if zero2w_pinned:  # pinned: runs at another time compare at the same budget
        zero = zero2w_pinned / 100
        print(f"Pi Zero 2 W budget pinned at {zero * 100:.1f}% (--zero2w-fraction)")
    if pi4_pinned:
        pi4 = pi4_pinned / 100
        print(f"Pi 4 budget pinned at {pi4 * 100:.1f}% (--pi4-fraction)")
    fractions = {"full": None, "pi4": pi4, "zero2w": zero}
    budgets = [
        Budget(n, fractions[n.removesuffix(CORES)], per_process=n.endswith(CORES))
        for n in names.split(",")
        if n.removesuffix(CORES) in fractions and n != "full" + CORES
    ]
    for budget in budgets:
        if budget.fraction is None or budget.per_process:  # the same group's check
            continue
        with cpu_group(budget) as group:
            _, wall = nbody_seconds_per_step(max(1000, steps // 10), group)
        print(
            f"check of the {budget.name} group: n-body {wall * 1e6:.2f} µs wall per step = "
            f"{ours / wall * 100:.1f}% of full speed (asked {budget.fraction * 100:.1f}%; "
            f"load {load_average()})"
        )
    return budgets


def judged_columns(all_figures: list[Figures], preferred: Sequence[str]) -> list[Figures]:
    """The columns of the first budget in ``preferred`` that was measured (one per MQTT
    mode): where the verdicts are taken."""
    for name in preferred:
        found = [f for f in all_figures if f.budget.name == name]
        if found:
            return found
    return []


# -- the report -------------------------------------------------------------------------


def ms(values: list[float], fraction: float) -> str:
    return f"{percentile(values, fraction) * 1e3:.1f}" if values else "n/a"


def verdict(value: float, target: float) -> str:
    if value != value:  # NaN
        return "n/a"
    return "meets" if value < target else "MISSES"


def is_alive(figures: Figures) -> bool:
    """Every shipped feature delivered in the budget's game (none checked: the game
    did not run, which fails too)."""
    return bool(figures.alive) and all(check.alive for check in figures.alive)


def _short(feature: str) -> str:
    """MQTT, page, speech; bus MQTT, bus page."""
    words = feature.split(" ")
    return " ".join(words[:2]) if words[0] == "bus" else words[0]


def features_cell(figures: Figures) -> str:
    if not figures.alive:
        return "not checked (no game)"
    dead = [_short(check.feature) for check in figures.alive if not check.alive]
    return "alive" if not dead else "DEAD: " + ", ".join(dead)


def worst(judged: list[Figures], value: Any) -> float:
    """The worst (largest) of ``value(f)`` over the judged columns (one per MQTT mode):
    a target is met only if met in each; NaN when none has the figure."""
    found = [v for f in judged if (v := value(f)) == v]
    return max(found) if found else float("nan")


def p99(values: list[float]) -> float:
    return percentile(values, 0.99) if values else float("nan")


def ready_median(f: Figures) -> float:
    return statistics.median(f.readies) if f.readies else float("nan")


def own_after(f: Figures) -> float:
    return f.own_after if f.own_after is not None else float("nan")


def report(all_figures: list[Figures], judged: list[Figures]) -> None:
    """The table, every column side by side; the verdicts at the judged budget's
    columns (each MQTT mode), then each column's details."""
    print()
    names = [f.name for f in all_figures]
    print("(@L: the 1-minute load average of this 2-core machine when the measure ended)")
    where = judged[0].budget.name if judged else "zero2w"
    print("| measure | " + " | ".join(names) + f" | target (at {where}) | verdict |")
    print("|---|" + "---|" * len(names) + "---|---|")

    def row(measure: str, cells: list[str], target: str, ok: str) -> None:
        print(f"| {measure} | " + " | ".join(cells) + f" | {target} | {ok} |")

    row(
        "press -> move event p50 / p99 (ms)",
        [f"{ms(f.to_event, 0.5)} / {ms(f.to_event, 0.99)}{f.at('game')}" for f in all_figures],
        "p99 < 50 ms",
        verdict(worst(judged, lambda f: p99(f.to_event)), 0.050),
    )
    row(
        "press -> first sample of speech heard p50 / p99 (ms)",
        [f"{ms(f.to_speech, 0.5)} / {ms(f.to_speech, 0.99)}{f.at('game')}" for f in all_figures],
        "p99 < 250 ms",
        verdict(worst(judged, lambda f: p99(f.to_speech)), 0.250),
    )
    row(
        "... moves pressed after the previous phrase ended: n; p50 / p99 (ms)",
        [f"{len(f.speech_free)}; {ms(f.speech_free, 0.5)} / {ms(f.speech_free, 0.99)}"
         for f in all_figures],
        "p99 < 250 ms",
        verdict(worst(judged, lambda f: p99(f.speech_free)), 0.250),
    )  # fmt: skip

    def behind(f: Figures) -> str:
        if not f.speech_behind:
            return "0"
        heard = [h for h, _ in f.speech_behind]
        waits = [w for _, w in f.speech_behind]
        return (f"{len(heard)}; {ms(heard, 0.5)} / {ms(heard, 0.99)}; "
                f"wait {ms(waits, 0.5)} / {ms(waits, 0.99)}")  # fmt: skip

    row(
        "... pressed while it still sounded: n; p50 / p99 (ms); its rest p50 / p99 (ms)",
        [behind(f) for f in all_figures],
        "(the wait: by design)",
        "-",
    )
    row(
        "moves wrong or missed / unspoken",
        [f"{f.wrong} / {f.unspoken}" for f in all_figures],
        "0 / 0",
        "meets" if judged and not any(f.wrong or f.unspoken for f in judged) else "MISSES",
    )
    row(
        "features alive: MQTT relay holds every move, page served a viewer, speech heard "
        "(bus boards: MQTT and page)",
        [features_cell(f) for f in all_figures],
        "all alive (pass/fail, not timed)",
        "pass" if all(is_alive(f) for f in all_figures) else "FAIL",
    )
    row(
        "start -> READY=1, median (min-max) (s)",
        [
            f"{statistics.median(f.readies):.2f} ({min(f.readies):.2f}-{max(f.readies):.2f})"
            f"{f.at('ready')}"
            if f.readies
            else "n/a"
            for f in all_figures
        ],
        "< 5 s",
        verdict(worst(judged, ready_median), 5.0),
    )

    def idle_share(f: Figures) -> float:
        return f.idle_cpu / (f.budget.fraction or 1.0)

    row(
        "idle CPU, % of the budget (% of our core)",
        [f"{idle_share(f) * 100:.2f} ({f.idle_cpu * 100:.2f}){f.at('idle')}" for f in all_figures],
        "< 2%",
        verdict(worst(judged, idle_share), 0.02),
    )
    row(
        "PSS of the process tree idle / after the game (MB)",
        [f"{f.pss_idle:.1f} / {f.pss_after:.1f}{f.at('game')}" for f in all_figures],
        "< 45 MB",
        verdict(worst(all_figures, lambda f: f.pss_after), 45.0),
    )

    def mb(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1f}"

    row(
        "the tree's own pages, each counted once, idle / after the game (MB)",
        [f"{mb(f.own_idle)} / {mb(f.own_after)}{f.at('game')}" for f in all_figures],
        "< 45 MB (alone on the machine)",
        verdict(worst(all_figures, own_after), 45.0),
    )
    if any(f.bus_exact for f in all_figures):

        def bus_ok(f: Figures) -> bool:
            done, _, boards = f.bus_exact.partition("/")
            return bool(f.bus_exact) and done == boards and p99(f.bus_lag) < 0.5

        row("bus boards: games exact; press -> move p99 (ms)",
            [f"{f.bus_exact}; {ms(f.bus_lag, .99)}{f.at('bus')}" for f in all_figures],
            "all exact, p99 < 500 ms",
            "meets" if judged and all(bus_ok(f) for f in judged) else "MISSES")  # fmt: skip
    print()
    for f in all_figures:
        parts = ", ".join(f"{k} {v:.1f}" for k, v in sorted(f.pss_after_parts.items()))
        print(f"{f.name}: PSS after the game by process (MB): {parts}")
        share = f.budget.fraction or 1.0
        idle = ", ".join(f"{k} {v / share * 100:.2f}" for k, v in sorted(f.idle_parts.items()))
        print(f"{f.name}: idle CPU by process (% of the budget): {idle}")
        for check in f.alive:
            state = "alive" if check.alive else "DEAD"
            print(f"{f.name}: {check.feature}: {state} ({check.seen})")
        for note in f.notes:
            print(f"{f.name}: NOTE {note}")
    print("\nslow moves (ms run + ms waiting to run, per process, in the window):")
    for f in all_figures:
        for line in f.slow:
            print(f"{f.name}: {line}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, default=30, help="plies of the one-board game (30)")
    parser.add_argument("--starts", type=int, default=3, help="start-up measurements (3)")
    parser.add_argument("--idle", type=float, default=20.0, help="idle CPU window, s (20)")
    parser.add_argument("--boards", type=int, default=12, help="bus boards (12; 0: none)")
    parser.add_argument("--bus-plies", type=int, default=30, help="plies per bus game (30)")
    parser.add_argument(
        "--budgets",
        default="full,pi4,zero2w,zero2w" + CORES,
        help="full,pi4,zero2w,zero2w-cores (a name ending -cores: one group per process, "
        "the Pi's cores, and the daemon's helper threads one beside its loop's; the "
        "others: one group for the whole tree)",
    )
    add_calibration_options(parser)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks the plumbing")
    parser.add_argument(
        "--zero2w-fraction",
        type=float,
        default=0.0,
        help="the Zero 2 W's budget in %% of a core, instead of the calibration's (which "
        "moves by +-15%% between runs on a shared machine): to compare two runs",
    )
    parser.add_argument(
        "--board-memory",
        default="1,2,12",
        help="bus chain sizes whose idle PSS is measured, no speech (1,2,12; '': none)",
    )
    parser.add_argument("--mqtt", default="plain,tls",
                        help="MQTT to the broker in each budget's runs, each measured: "
                        "plain, tls or both (plain,tls: the default)")  # fmt: skip
    parser.add_argument("--synthesis", choices=("thread", "process"), default="thread",
                        help="speech.synthesis: pyttsx3 in the daemon's thread (thread) or "
                        "in its worker process (process)")  # fmt: skip
    add_keep_awake(parser)
    args = parser.parse_args(argv)
    SYNTHESIS[0] = args.synthesis
    # A SIGTERM unwinds like Ctrl-C: the daemons are stopped and the groups removed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    # The emulator stands in for hardware, which other processes never slow down, and
    # this process notes the times: on a loaded machine it runs before them (the
    # daemon, started at the usual priority, is niced back to 0).
    with contextlib.suppress(OSError):
        os.nice(-10)
    if args.quick:
        args.plies, args.starts, args.idle, args.boards = 4, 1, 2.0, 2
        args.bus_plies, args.calibrate_steps = 4, 5_000
    header("the daemon on a Raspberry Pi's CPU budget (cgroup CPU quota)")
    print(describe_idle(args.keep_awake))
    with kept_awake(args.keep_awake):
        return _measure(parser, args)


def _measure(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """The calibration, then each budget's figures, then the verdicts (main's work)."""
    problem = can_use_cgroups()
    if problem:
        print(f"cannot run: {problem}")
        return 2
    compile_sources()
    budgets = calibrated_budgets(
        args.budgets,
        args.calibrate_steps,
        args.zero2w_fraction,
        pythons=args.calibration_python,
    )
    modes = [m for m in args.mqtt.split(",") if m]
    if not modes or any(m not in MQTT_MODES for m in modes):
        parser.error(f"--mqtt: a comma-separated list of {', '.join(MQTT_MODES)}")
    all_figures = []
    for budget in budgets:
        for mode in modes:
            figures = Figures(budget, mqtt=mode, named_with_mqtt=len(modes) > 1)
            what = f"{budget.label()}, MQTT {mode}"
            print(f"-- {what}: one board with a clock, {args.plies} plies ...", flush=True)
            measure_single(budget, figures, args.plies, args.starts, args.idle)
            if args.boards:
                print(f"-- {what}: {args.boards} boards on one bus ...", flush=True)
                measure_bus(budget, figures, args.boards, args.bus_plies)
            all_figures.append(figures)
            # The figures are in the table at the end; this says the run is alive.
            print(
                f"{figures.name} done (load at each measure: "
                + ", ".join(f"{k} {v:.2f}" for k, v in figures.loads.items())
                + ")",
                flush=True,
            )
    counts = [int(n) for n in args.board_memory.split(",") if n] if not args.quick else [1, 2]
    if counts:
        memory = board_memory(counts)
        base = memory[min(memory)]
        print(
            "PSS by boards on one bus (one daemon, no speech, idle): "
            + ", ".join(f"{n}: {mb:.1f} MB" for n, mb in sorted(memory.items()))
            + "; per extra board: "
            + ", ".join(
                f"{(mb - base) / (n - min(memory)):.2f} MB ({min(memory)}->{n})"
                for n, mb in sorted(memory.items())
                if n > min(memory)
            )
            + " (target < 10 MB)"
        )
    # The verdict: at the Zero 2 W's four cores if measured (the Pi's model), else at
    # its budget with the whole tree on one core; in every MQTT mode measured.
    judged = judged_columns(all_figures, ("zero2w" + CORES, "zero2w"))
    if judged:
        print(f"\nverdicts at {judged[0].budget.label()}, MQTT {' and '.join(modes)}")
    report(all_figures, judged)
    footer()
    failed = any(f.wrong or f.unspoken or not is_alive(f) for f in all_figures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
