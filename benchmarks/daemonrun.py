"""``dgt-bridge run`` in its own process against the emulated board, and what its
drivers need: the fault trials (``benchmarks.faults``) and the daemon's restart,
outage and clock-sides tests start, read, kill and judge it the same way, so it is
written once, here (a benchmark may not import the tests; the tests import this).

The daemon runs as shipped (``python -m daemon run``, the default configuration,
no broadcast, no speech), with the settle time shrunk to the hands' speed; its
event feed is read by a thread, its stderr kept to look for a traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from benchmarks.common import ROOT
from daemon import resources
from drivers.sensors import ClockReport, SensorEvent

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
