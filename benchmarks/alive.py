"""Is every shipped feature still alive in a budget run? (issue 28)

A budget figure counts only if the daemon measured under it still did its whole job:
issue 19's memory trick on ``ssl`` met its figures while plain MQTT died after a
dozen events. So a run of ``benchmarks/pibudget.py`` also carries, on its game, the
outputs a hall uses, and fails unless each delivered:

- **MQTT**: the daemon publishes to a real Mosquitto (plain, or with ``tls`` over
  TLS: a listener with a throw-away CA's certificate, ``benchmarks/testca.py``, the
  daemon and the relay checking it), and the real relay (``dgt-bridge relay``, its own
  process) holds every move of the game, in order;
- **the page**: a viewer opened the live page (``/``, HTML) before the game and had
  every move from its ``/events`` stream;
- **speech**: every move's phrase was heard (the first loud sample reached the
  daemon's player; the caller counts those, see ``pibudget._latencies``).

The broker, the relay and the viewer run outside the CPU group, as other machines
(or a phone) would. Pass/fail only: nothing here is timed.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.testca import has_openssl, make_test_ca

ROOT = Path(__file__).resolve().parent.parent
MOSQUITTO = shutil.which("mosquitto") or (
    "/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None
)
TOURNAMENT, ROUND = "pibudget", "1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return True
        time.sleep(0.05)
    return False


def event_in(message: dict[str, Any]) -> dict[str, Any]:
    """The event a feed message of the page carries: an envelope's, or the message."""
    inner = message.get("event")
    return inner if isinstance(inner, dict) else message


def moves_in(message: Any) -> list[tuple[str, str]]:
    """The (board, move) a feed message of the page carries (an envelope naming its
    board, or a bare event: board 1)."""
    if not isinstance(message, dict):
        return []
    event = event_in(message)
    if event.get("type") == "move" and isinstance(event.get("uci"), str):
        return [(str(message.get("board") or "1"), event["uci"])]
    return []


def _holds(got: dict[str, list[str]], games: dict[str, list[str]]) -> bool:
    return all(got.get(board) == moves for board, moves in games.items())


def _tally(got: dict[str, list[str]], games: dict[str, list[str]]) -> str:
    """ "30 of 30 moves" (one board), or "11 of 12 boards whole, 358 of 360 moves",
    and which boards hold moves that are not their game's."""
    have = sum(len(got.get(b) or []) for b in games)
    total = sum(len(m) for m in games.values())
    wrong = [b for b, m in games.items() if (got.get(b) or []) != m[: len(got.get(b) or [])]]
    whole = sum(got.get(b) == m for b, m in games.items())
    text = f"{have} of {total} moves"
    if len(games) > 1:
        text = f"{whole} of {len(games)} boards whole, {text}"
    return text + (f"; not the game's moves on board {', '.join(wrong)}" if wrong else "")


@dataclass
class Check:
    """One feature's verdict and what was seen."""

    feature: str
    alive: bool
    seen: str


@dataclass
class Viewer:
    """A browser's part, on a thread: the page's HTML once, then its event stream."""

    url: str
    page_ok: bool = False
    moves: dict[str, list[str]] = field(default_factory=dict)  # by board
    #: when each of those moves came (time.monotonic), by board
    times: dict[str, list[float]] = field(default_factory=dict)
    error: str = ""
    connected: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Viewer:
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def _run(self) -> None:
        try:
            with urllib.request.urlopen(self.url + "/", timeout=30) as response:
                body = response.read()
                self.page_ok = response.status == 200 and b"<html" in body.lower()
            with urllib.request.urlopen(self.url + "/events", timeout=3600) as stream:
                self.connected.set()
                for raw in stream:
                    line = raw.decode(errors="replace").rstrip("\r\n")
                    if line.startswith("data:"):
                        with contextlib.suppress(ValueError):
                            for board, uci in moves_in(json.loads(line[5:])):
                                self.moves.setdefault(board, []).append(uci)
                                self.times.setdefault(board, []).append(time.monotonic())
        except OSError as error:  # the daemon stopped, or never served
            self.error = str(error)
        finally:
            self.connected.set()


class Features:
    """The broker and the relay (started by ``start``), the daemon's settings that
    turn MQTT on towards them (``tls``: over TLS), a viewer of its page, and the
    verdicts."""

    def __init__(self, work: Path, *, tls: bool = False) -> None:
        self.work = work
        self.tls = tls
        self.port = free_port()
        self.relay_port = free_port()
        self.broker: subprocess.Popen[bytes] | None = None
        self.relay: subprocess.Popen[bytes] | None = None
        self.viewer: Viewer | None = None
        self.problem = "" if MOSQUITTO else "mosquitto is not installed"
        if tls and not self.problem and not has_openssl():
            self.problem = "openssl is not installed (the TLS broker's certificates)"

    def settings(self, tournament: str = TOURNAMENT) -> dict[str, Any]:
        """The ``broadcast:`` keys of the daemon's configuration (its page is on in the
        benchmark's own); another ``tournament``: MQTT as on, but not to the relay."""
        if self.problem:
            return {"round": ROUND}
        mqtt: dict[str, Any] = {"enabled": True, "host": "127.0.0.1", "port": self.port,
                                "tournament": tournament}  # fmt: skip
        if self.tls:
            mqtt.update(tls=True, ca_file=str(self.work / "ca.crt"))
        return {"round": ROUND, "mqtt": mqtt}

    def start(self) -> Features:
        if self.problem:
            return self
        config = self.work / "mosquitto.conf"
        # started as root, mosquitto would become user "mosquitto", who cannot read
        # the key in our temporary directory: it stays who we are
        text = (f"listener {self.port} 127.0.0.1\nallow_anonymous true\n"
                f"user {getpass.getuser()}\n")  # fmt: skip
        tls: list[str] = []
        if self.tls:  # the broker's certificate, checked by the daemon and the relay
            make_test_ca(self.work)
            text += "".join(
                f"{key} {self.work / name}\n"
                for key, name in (
                    ("cafile", "ca.crt"),
                    ("certfile", "broker.crt"),
                    ("keyfile", "broker.key"),
                )
            )
            tls = ["--tls", "--ca", str(self.work / "ca.crt")]
        config.write_text(text)
        self.broker = subprocess.Popen(
            [str(MOSQUITTO), "-c", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if not _listening(self.port, 20):
            self.problem = f"mosquitto did not listen on 127.0.0.1:{self.port}"
            return self
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.relay_log = self.work / "relay.log"
        with self.relay_log.open("wb") as log:
            self.relay = subprocess.Popen(
                [sys.executable, "-m", "daemon", "relay", "--broker", f"127.0.0.1:{self.port}",
                 "--tournament", TOURNAMENT, "--round", ROUND, "--address", "127.0.0.1",
                 "--port", str(self.relay_port), *tls],
                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.work,
            )  # fmt: skip
        if not _listening(self.relay_port, 60):
            self.problem = "the relay did not serve: " + self._relay_tail()
        return self

    def watch(self, page_port: int) -> None:
        """A viewer on the daemon's page (call once the page is up, before the game)."""
        self.viewer = Viewer(f"http://127.0.0.1:{page_port}").start()
        self.viewer.connected.wait(30)

    def relayed(self) -> dict[str, list[str]]:
        """Each board's moves on the relay's ``/state.json``."""
        boards = self._relay_boards("state.json") or {}
        return {
            str(board): [str(m.get("uci")) for m in (game or {}).get("moves") or []]
            for board, game in boards.items()
        }

    def checks(
        self,
        expected: list[str] | dict[str, list[str]],
        heard: int | None,
        wait: float = 15.0,
    ) -> list[Check]:
        """Each feature's verdict for the games ``expected`` (board 1's moves, or each
        board's), ``heard`` phrases of board 1's heard (None: no speech in this run);
        waits up to ``wait`` s for the relay and the viewer (both have a move after the
        feed: once it is on the card, the viewer at the next write-out)."""
        games = expected if isinstance(expected, dict) else {"1": expected}
        found = [self.mqtt_check(games, wait), self.page_check(games, wait)]
        if heard is not None:
            found.append(speech_check(heard, sum(len(m) for m in games.values())))
        return found

    def mqtt_check(self, games: dict[str, list[str]], wait: float = 15.0) -> Check:
        """The relay holds each board's game, waiting up to ``wait`` s for it."""
        deadline = time.monotonic() + wait
        relayed = self.relayed()
        while not self.problem and not _holds(relayed, games) and time.monotonic() < deadline:
            time.sleep(0.2)
            relayed = self.relayed()
        if self.problem:
            return Check("MQTT relay holds every move", False, self.problem)
        whole = _holds(relayed, games)
        seen = _tally(relayed, games) + ("" if whole else self._why_not(relayed, games))
        return Check("MQTT relay holds every move", whole, seen)

    def _relay_boards(self, page: str) -> dict[str, Any] | None:
        """The ``boards`` of one of the relay's JSON pages; None if it did not answer."""
        url = f"http://127.0.0.1:{self.relay_port}/{page}"
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                found = json.loads(response.read())
        except (OSError, ValueError):
            return None
        return (found.get("boards") or {}) if isinstance(found, dict) else {}

    def _why_not(self, relayed: dict[str, list[str]], games: dict[str, list[str]]) -> str:
        """What the relay says (``/relay.json``) of each board it does not hold whole:
        its sequence, messages held or rejected and why, a restart held."""
        boards = self._relay_boards("relay.json")
        if boards is None:
            return "; /relay.json did not answer"
        short = [b for b, moves in games.items() if relayed.get(b) != moves]
        return "".join(f"; relay on board {b}: {json.dumps(boards.get(b))}" for b in short)

    def page_check(self, games: dict[str, list[str]], wait: float = 15.0) -> Check:
        """The viewer was served the page and streamed each board's game, waiting up to
        ``wait`` s for it (a run's last move reached the relay before the viewer's next
        write-out, and the viewer was found one move short)."""
        deadline = time.monotonic() + wait
        viewer = self.viewer
        while (
            viewer is not None and not _holds(viewer.moves, games) and time.monotonic() < deadline
        ):
            time.sleep(0.1)
        return page_check(viewer, games)

    def _relay_tail(self) -> str:
        with contextlib.suppress(OSError):
            return " / ".join(self.relay_log.read_text(errors="replace").splitlines()[-3:])
        return "(no log)"

    def stop(self) -> None:
        for process in (self.relay, self.broker):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(5)


def page_check(viewer: Viewer | None, games: dict[str, list[str]]) -> Check:
    """The viewer was served the page and streamed every board's game."""
    if viewer is None:
        return Check("page served a viewer", False, "no viewer was started")
    streamed = _holds(viewer.moves, games)
    return Check(
        "page served a viewer",
        viewer.page_ok and streamed,
        f"page {'served' if viewer.page_ok else 'NOT served'}; streamed "
        + _tally(viewer.moves, games)
        + (f"; {viewer.error}" if viewer.error and not streamed else ""),
    )


def crowd_check(records: list[dict[str, Any]], count: int, games: dict[str, list[str]]) -> Check:
    """Each of the ``count`` viewers of a crowd (``benchmarks.viewers``) was served the
    page and streamed every board's whole game."""
    whole = [r for r in records if r.get("page_ok") and _holds(r.get("moves") or {}, games)]
    short = [r for r in records if r not in whole]
    seen = f"{len(whole)} of {count} viewers had the page and every board's whole game"
    if short:
        first = short[0]
        seen += (f"; one short: page {'served' if first.get('page_ok') else 'NOT served'}, "
                 + _tally(first.get("moves") or {}, games)
                 + (f", {first['error']}" if first.get("error") else ""))  # fmt: skip
    return Check(f"page served {count} viewers", len(whole) == count > 0, seen)


def speech_check(heard: int, moves: int, who: str = "") -> Check:
    """Every move's phrase was heard (``who``: whose earphone, in a hall)."""
    name = f"speech heard for every move{f' ({who})' if who else ''}"
    return Check(name, heard == moves > 0, f"{heard} of {moves} phrases heard")


def pushed_games(pgn: str) -> dict[str, list[str]]:
    """Each board's moves in a round's PGN as pushed to lichess (its ``Board`` tag)."""
    import io

    import chess.pgn

    found: dict[str, list[str]] = {}
    stream = io.StringIO(pgn)
    while (game := chess.pgn.read_game(stream)) is not None:
        found[game.headers.get("Board", "?")] = [m.uci() for m in game.mainline_moves()]
    return found


def lichess_check(last_push: str, pushes: int, games: dict[str, list[str]]) -> Check:
    """The last PGN the lichess endpoint took holds every board's whole game."""
    pushed = pushed_games(last_push)
    return Check("lichess push holds every move", pushes > 0 and _holds(pushed, games),
                 f"{pushes} pushes taken; the last: {_tally(pushed, games)}")  # fmt: skip
