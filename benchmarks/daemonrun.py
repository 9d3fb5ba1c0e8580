"""``dgt-bridge run`` in its own process against the emulated board, and what its
drivers need: the fault trials (``benchmarks.faults``) and the daemon's restart,
outage and clock-sides tests start, read, kill and judge it the same way, so it is
written once, here (a benchmark may not import the tests; the tests import this).
``BudgetDaemon`` runs it as the systemd unit does (its configuration file, its
environment, a warmed cache, in a CPU group) for ``pibudget``, ``footprint`` and
``growth``.

The daemon runs as shipped (``python -m daemon run``, the default configuration,
no broadcast, no speech), with the settle time shrunk to the hands' speed; its
event feed is read by a thread, its stderr kept to look for a traceback.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import chess
import chess.pgn

from benchmarks.common import ROOT
from benchmarks.cpugroups import CpuGroup, ProcessGroups, enter
from benchmarks.processes import descendants, free_port, thread_states
from daemon.files import resources
from drivers.sensors import ClockReport, SensorEvent
from drivers.simulators.handling import Timing

if TYPE_CHECKING:
    from drivers.simulators.emulator import BoardEmulator

Predicate = Callable[[dict[str, Any]], bool]


def daemon_env(settle_time: float, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a shipped daemon with ``rules.settle_time`` set (the hands
    play faster than real time, and the settle time shrinks alike)."""
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DGT_BRIDGE_CONFIG": str(resources.default_config_file()),
        "DGT_BRIDGE_BROADCAST__ENABLED": "false",
        "DGT_BRIDGE_RULES__SETTLE_TIME": str(settle_time),
        **(extra or {}),
    }


class FeedTimeout(AssertionError):
    """What was awaited never came in the daemon's feed (the message shows the feed)."""


class RunningDaemon:
    """``python -m daemon run --events -`` on ``port`` (or, ``config``, on the boards
    that configuration file lists); its feed read by a thread."""

    def __init__(
        self, port: str, storage: Path, env: dict[str, str], config: Path | None = None
    ) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed with the process)
        where = ["--config", str(config)] if config is not None else ["--port", port]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "daemon", "run", *where, "--events", "-",
             "--no-speech", "--storage", str(storage)],
            stdout=subprocess.PIPE, stderr=self.stderr, text=True, env=env, cwd=ROOT,
        )  # fmt: skip
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with contextlib.suppress(ValueError):
                self.events.put(json.loads(line))

    def find(self, predicate: Predicate, timeout: float = 30.0) -> dict[str, Any] | None:
        """The first feed event (seen before, or within ``timeout``) that matches;
        None when none came."""
        for event in self.seen:
            if predicate(event):
                return event
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                event = self.events.get(timeout=0.1)
            except queue.Empty:
                continue
            self.seen.append(event)
            if predicate(event):
                return event
        return None

    def wait_for(self, predicate: Predicate, timeout: float = 30.0) -> dict[str, Any]:
        """As ``find``, but what never came is a ``FeedTimeout`` showing the feed."""
        event = self.find(predicate, timeout)
        if event is not None:
            return event
        brief = [
            {k: v for k, v in e.items() if k not in ("fen", "speech", "clock")}
            for e in self.seen
            if e["type"] != "clock"
        ]
        clocks = [e for e in self.seen if e["type"] == "clock"]
        raise FeedTimeout(
            f"timed out; the feed since the (re)start: {brief}; "
            f"{len(clocks)} clock events, the last {clocks[-1] if clocks else None}"
        )

    def drain(self, seconds: float = 0.3) -> None:
        """Read the feed for ``seconds`` (what the daemon decided meanwhile)."""
        self.find(lambda e: False, seconds)

    def resumes_seen(self) -> int:
        """``game_resumed`` events in the feed so far (one per restart expected)."""
        self.drain(0.5)  # what the daemon had decided before a kill has reached us
        return sum(1 for e in self.seen if e["type"] == "game_resumed")

    def kill(self) -> None:
        """As a power cut would: no goodbye."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> int | None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.drain(0.2)
        return self.process.returncode

    def traceback(self) -> bool:
        self.stderr.seek(0)
        return b"Traceback" in self.stderr.read()


def press_indices(log: list[SensorEvent]) -> list[int]:
    """Indices just after each clock press in a sensor log: the moments between moves."""
    marks, running = [], None
    for index, event in enumerate(log):
        if isinstance(event, ClockReport) and event.running is not None:
            if running is not None and event.running != running:
                marks.append(index + 1)
            running = event.running
    return marks


#: Brisk human hands (a move in 0.5-1.5 s of thought, a press 0.2-0.5 s after it),
#: played ``PRESS_BY_PRESS_SPEED`` times faster: the restart trials' games.
BRISK = Timing(think=(0.5, 1.5), before_press=(0.2, 0.5))
PRESS_BY_PRESS_SPEED = 20.0


def play_press_by_press(
    emulator: BoardEmulator,
    daemon: RunningDaemon,
    log: list[SensorEvent],
    start: int,
    first_ply: int,
    speed: float = PRESS_BY_PRESS_SPEED,
) -> None:
    """Play ``log`` from ``start``, one move at a time: each move must be decided at
    its own press, before the next move is played (not a press late)."""
    cuts = [i for i in press_indices(log) if i > start] + [len(log)]
    ply = first_ply
    for cut in cuts:
        emulator.play(log[start:cut], speed=speed)
        assert emulator.wait_played(60)
        if cut != len(log):
            daemon.wait_for(lambda e, p=ply: e["type"] == "move" and e["ply"] == p, timeout=10)
            ply += 1
        start = cut


def killed_after(
    emulator: BoardEmulator,
    storage: Path,
    log: list[SensorEvent],
    ply: int,
    speed: float = PRESS_BY_PRESS_SPEED,
) -> RunningDaemon:
    """A daemon on ``emulator`` that decided the first ``ply`` moves of ``log`` (played
    ``speed`` times faster, the settle time shrunk alike), each at its press, and was
    then killed (SIGKILL): returned, to be stopped."""
    emulator.play(log[:1])
    emulator.wait_played(10)
    daemon = RunningDaemon(emulator.port_path, storage, daemon_env(0.6 / speed))
    try:
        daemon.wait_for(lambda e: e["type"] == "game_start")
        play_press_by_press(emulator, daemon, log[: press_indices(log)[ply - 1]], 1, 1, speed)
        daemon.wait_for(lambda e: e["type"] == "move" and e["ply"] == ply)
        time.sleep(0.3)
    finally:
        daemon.kill()
    return daemon


def clock_tick(played: list[SensorEvent], seconds: float) -> ClockReport | None:
    """The clock ``seconds`` after the last report played (a running DGT clock reports
    every second; the log-driven emulator only on change)."""
    last = next((e for e in reversed(played) if isinstance(e, ClockReport)), None)
    if last is None or last.running is None:
        return last
    return replace(last, **{last.running: getattr(last, last.running) - seconds})


def shipped_games() -> list[chess.pgn.Game]:
    """The demo's games (real games, shipped with the package)."""
    stream = io.StringIO(resources.demo_games_file().read_text())
    found = []
    while (game := chess.pgn.read_game(stream)) is not None:
        found.append(game)
    return found


def pgn_moves(journal: Path) -> list[str]:
    """The moves (UCI) of a game journal's PGN; none when it has no PGN."""
    pgn = journal.with_suffix(".pgn")
    if not pgn.exists():
        return []
    game = chess.pgn.read_game(io.StringIO(pgn.read_text()))
    return [m.uci() for m in game.mainline_moves()] if game else []


class BudgetDaemon:
    """``python -m daemon run`` in the CPU group (None: none), its feed read with
    wall-clock stamps: the one runner of the daemon's own process for the benchmarks
    (``footprint``, ``growth`` and this one)."""

    def __init__(
        self,
        group: CpuGroup | ProcessGroups | None,
        work: Path,
        *,
        port: str | None = None,
        config: Path | None = None,
        speech: bool = True,
        env: dict[str, str] | None = None,
        continues: BudgetDaemon | None = None,
    ) -> None:
        """``continues``: a daemon killed before this one, as systemd restarts it: the
        same page port, and this one's feed lines added to its ``events``."""
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify_path = work / f"notify-{time.monotonic_ns()}.sock"
        self.notify.bind(str(notify_path))
        self.player_log = work / "player.log"
        self.player_log.touch()
        self.http_port = continues.http_port if continues is not None else free_port()
        from benchmarks.latency import stream_player_setting  # the daemon's app: only here

        settings = {
            "speech": {
                "engine": "pyttsx3",
                "synthesis": SYNTHESIS[0],
                "device": "null",
                "stream_player": json.loads(stream_player_setting(self.player_log)),
            },
            "broadcast": {"address": "127.0.0.1", "port": self.http_port},
        }
        config = unit_config(work, config, settings)
        environment = unit_environment(work)
        warm_cache(config, environment)
        # ``env``: the benchmark's own additions (LD_PRELOAD of a slow SD card ...)
        environment.update(env or {}, NOTIFY_SOCKET=str(notify_path))
        command = [sys.executable, "-m", "daemon", "run", "--events", "-",
                   "--storage", str(work / "games")]  # fmt: skip
        if port:
            command += ["--port", port]
        command += ["--config", str(config)]
        if not speech:
            command.append("--no-speech")
        # The daemon's log, kept: a daemon that does not read its board says why there
        # (``log_tail``; a file, not a pipe that nobody drains while it runs)
        self.log_path = work / f"daemon-{time.monotonic_ns()}.log"
        self.started = time.monotonic()
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=environment,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                preexec_fn=functools.partial(enter, group),
            )
        self.group = group
        if isinstance(group, ProcessGroups):
            group.watch(self.process.pid)
        #: (wall time, monotonic time, event) of every feed line
        self.events: list[tuple[float, float, dict[str, Any]]] = []
        self.changed = threading.Condition()
        if continues is not None:
            self.events, self.changed = continues.events, continues.changed
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            wall, mono = time.time(), time.monotonic()
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                with self.changed:
                    self.events.append((wall, mono, event))
                    self.changed.notify_all()

    def wait_ready(self, timeout: float) -> float:
        self.notify.settimeout(timeout)
        while True:
            if "READY=1" in self.notify.recv(4096).decode().split("\n"):
                return time.monotonic() - self.started

    def wait_started(self, timeout: float) -> float:
        """Seconds from start until the speech and the live page, which start after
        READY, are up too (the STATUS= line no longer says "starting")."""
        self.notify.settimeout(timeout)
        while True:
            try:
                lines = self.notify.recv(4096).decode().split("\n")
            except TimeoutError:  # say why, from the daemon's own log
                raise TimeoutError(
                    f"no word from the daemon for {timeout:.0f} s while it started: "
                    + self.not_read()
                ) from None
            status = [line for line in lines if line.startswith("STATUS=")]
            if status and "starting" not in status[-1]:
                return time.monotonic() - self.started

    def wait_for(
        self, predicate: Any, timeout: float
    ) -> tuple[float, float, dict[str, Any]] | None:
        """The first (wall, monotonic, event) of the feed that ``predicate`` takes,
        waiting up to ``timeout``; None if none came."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                found = next((entry for entry in self.events if predicate(entry[2])), None)
                if found is not None:
                    return found
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.process.poll() is not None:
                    return None
                self.changed.wait(min(remaining, 0.5))

    def moves(self) -> list[str]:
        """The game's moves as the feed has them now (a take-back drops the later)."""
        played: dict[int, str] = {}
        with self.changed:
            for _, _, event in self.events:
                if event.get("type") == "move":
                    ply = int(event["ply"])
                    played = {p: u for p, u in played.items() if p < ply}
                    played[ply] = str(event["uci"])
        return [played[p] for p in sorted(played)]

    def boards_read(self, boards: int, timeout: float) -> int:
        """Waits until ``boards`` boards have been read (their first ``game_start``)."""
        deadline = time.monotonic() + timeout
        while True:
            with self.changed:
                read = {
                    str(e.get("board"))
                    for _, _, e in self.events
                    if e.get("type") in ("game_start", "game_resumed")
                }
            if len(read) >= boards or time.monotonic() > deadline:
                return len(read)
            time.sleep(0.2)

    def not_read(self) -> str:
        """Why the board was not read, for the notes: whether the daemon is still
        running (else its exit status), the last lines of its log and of its feed."""
        code = self.process.poll()
        age = f"{time.monotonic() - self.started:.0f} s after its start"
        state = (
            f"still running {age}; its threads: {thread_states(self.pid)}"
            if code is None
            else f"exited with status {code}, {age}"
        )
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()[-12:]
        except OSError:
            lines = ["(no log)"]
        with self.changed:
            feed = [json.dumps(e) for _, _, e in self.events[-5:]]
        return (
            f"the daemon never read the board ({state}); its log's last lines:\n      "
            + "\n      ".join(lines)
            + "\n    its feed's last events:\n      "
            + ("\n      ".join(feed) or "(none)")
        )

    def player_log_times(self) -> tuple[list[float], list[float]]:
        """When each phrase was first heard, and when each (but the last) ended."""
        from benchmarks.latency import read_player_log

        return read_player_log(self.player_log)

    def kill(self) -> None:
        """As a crash (or the OOM killer) would: SIGKILL, no goodbye; then what systemd
        does when a unit's main process dies: the processes left in its group (the
        speech's player) are killed too."""
        left = descendants(self.pid)
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)
        for pid in left[1:]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if isinstance(self.group, ProcessGroups):
            self.group.unwatch()

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        if isinstance(self.group, ProcessGroups):
            self.group.unwatch()
        self.notify.close()


def unit_config(work: Path, base: Path | None, settings: dict[str, dict[str, Any]]) -> Path:
    """The daemon's configuration file, as the unit reads one (``--config``): ``base``
    (else the shipped ``config/dgt-bridge.yaml``) with the benchmark's ``settings``
    merged in, section by section. Not ``DGT_BRIDGE_*`` environment overrides: the
    unit sets none, and an override makes the daemon import PyYAML (2.2 MB of PSS) to
    parse its value even when the file's parsed tree is cached."""
    import yaml

    base = base or ROOT / "config" / "dgt-bridge.yaml"
    tree = yaml.safe_load(base.read_text(encoding="utf-8")) or {}
    for section, keys in settings.items():
        tree[section] = {**(tree.get(section) or {}), **keys}
    path = work / f"dgt-bridge-{time.monotonic_ns()}.yaml"
    path.write_text(yaml.safe_dump(tree, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


#: The unit the Pi runs the daemon with.
UNIT = ROOT / "systemd" / "dgt-bridge.service"


def unit_settings() -> dict[str, str]:
    """The unit's ``Environment=`` variables (``PYTHONOPTIMIZE=2`` ...), read from
    the unit itself, so that the benchmark follows it when it changes."""
    found: dict[str, str] = {}
    for line in UNIT.read_text(encoding="utf-8").splitlines():
        if line.startswith("Environment="):
            name, _, value = line.removeprefix("Environment=").partition("=")
            found[name.strip()] = value.strip()
    return found


def unit_environment(work: Path) -> dict[str, str]:
    """The environment systemd/dgt-bridge.service gives the daemon: its
    ``Environment=`` lines, its cache directory (``CacheDirectory=``, where the
    parsed configuration is kept), no ``DGT_BRIDGE_*`` overrides."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("DGT_BRIDGE_")}
    # An installed daemon starts from bytecode (pip compiles it at install); this
    # tree's, compiled by compile_sources(), is read, not compiled at every start.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(unit_settings())
    env.update({"CACHE_DIRECTORY": str(work / "cache"), "PYTHONPATH": str(ROOT)})
    return env


#: The daemon's CLI, left at READY=1 (``os._exit``: nothing after it runs or is counted).
UNTIL_READY = """
import os, sys
from daemon.service import notify
notify.Notifier.ready = lambda self, status="": os._exit(0)
from daemon.cli import main
main(sys.argv[1:])
"""


def warm_cache(config: Path, env: dict[str, str]) -> None:
    """Starts the daemon of ``config`` once, as far as READY, as the Pi's daemon did at
    its first start: the configuration (and its vocabulary) is parsed into the cache
    directory and the dataclasses' code compiled into it, and every later start reads
    both back (daemon/files/yamlcache.py, daemon/files/codecache.py). READY comes
    before a board's port is opened, so no board is touched. Outside the CPU group."""
    with tempfile.TemporaryDirectory(prefix="dgt-warm-") as games:
        subprocess.run(
            [sys.executable, "-c", UNTIL_READY, "run", "--config", str(config), "--storage", games],
            cwd=ROOT, env=env, capture_output=True, timeout=120, check=True,
        )  # fmt: skip


#: ``speech.synthesis`` of the daemons started (``--synthesis``: thread or process).
SYNTHESIS = ["thread"]


def compile_sources() -> None:
    """Compiles the daemon's modules to bytecode (``__pycache__``), plain and for
    ``-OO`` (the unit's ``PYTHONOPTIMIZE=2``), and the venv's for ``-OO``, as
    ``pip install`` and ``systemd/install.sh`` do for an installed daemon: without it
    (``PYTHONDONTWRITEBYTECODE`` is set here) every start compiled some 70 modules
    from source, 0.1 s of CPU at full speed, which a Pi's installed daemon does not
    spend."""
    import compileall
    import importlib.util

    for package in ("daemon", "drivers"):
        compileall.compile_dir(ROOT / package, quiet=1, optimize=[0, 2])
    for library in DAEMON_LIBRARIES:
        spec = importlib.util.find_spec(library)
        if spec is not None and spec.origin:
            origin = Path(spec.origin)
            if origin.name == "__init__.py":
                compileall.compile_dir(origin.parent, quiet=1, optimize=2)
            else:
                compileall.compile_file(origin, quiet=1, optimize=2)


#: The libraries the daemon and its worker import (their -OO bytecode is compiled).
DAEMON_LIBRARIES = (
    "aiohappyeyeballs", "aiohttp", "aiosignal", "attr", "chess", "frozenlist", "idna",
    "multidict", "paho", "propcache", "pyttsx3", "serial", "typing_extensions", "yaml",
    "yarl",
)  # fmt: skip
