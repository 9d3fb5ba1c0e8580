"""A hall as an organiser runs it, for the end-to-end attacks (issue 24): a real
Mosquitto with the shipped configuration and the logins ``make-logins.sh`` makes,
the real ``dgt-bridge relay`` process, and the real ``dgt-bridge run`` process
reading two boards of an emulated DGT bus chain, each playing a real game and
publishing with its own login. Also a bare MQTT client with any login, as an
attacker would have it, the pages of both processes read over HTTP, and a
spectator of the relay's feed who says whether it was ever sent anything but the
real games.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import paho.mqtt.client as mqtt
from hall_broker import SHIPPED, TOURNAMENT, HallBroker
from mqtt_helpers import free_port, wait_until
from mqtt_helpers import stop_processes as stop

from daemon.broadcast.mqtt import new_client
from daemon.broadcast.settings import MqttSettings

ROOT = Path(__file__).resolve().parents[2]
ROUND = "3"
BASE = f"dgt-bridge/{TOURNAMENT}/{ROUND}"
NEXT_ROUND = "4"
NEXT_BASE = f"dgt-bridge/{TOURNAMENT}/{NEXT_ROUND}"
EVENT = "Club Open"
#: The password of the daemon's boards (one Pi: ``SAME_PASSWORD=... make-logins.sh``).
PI_PASSWORD = "one-pi-two-boards"
TOKEN = "the-arbiter-s-token"
#: The daemon's page holds at most this many connections (the WebSocket flood).
MAX_CONNECTIONS = 60
#: No clock of the hall's games shows more (90 minutes, 30 s a move).
CLOCK_SHOWN = 3 * 3600.0


# -- processes ---------------------------------------------------------------------------


def command(*args: str, cwd: Path, name: str) -> subprocess.Popen[bytes]:
    """``dgt-bridge ARGS`` as the unit runs it (its configuration file only), its
    output in ``cwd/name.out``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(cwd)}
    for variable in list(env):
        if variable.startswith("DGT_BRIDGE_"):
            env.pop(variable)
    with open(cwd / f"{name}.out", "wb") as out:  # the child keeps its own copy
        return subprocess.Popen([sys.executable, "-m", "daemon", *args], stdout=out,
                                stderr=subprocess.STDOUT, env=env, cwd=cwd)  # fmt: skip


def output(cwd: Path, name: str) -> str:
    path = cwd / f"{name}.out"
    return path.read_text(errors="replace") if path.exists() else ""


def found_in_output(cwd: Path, name: str, pattern: str, timeout: float) -> re.Match[str]:
    match: list[re.Match[str]] = []

    def seen() -> bool:
        found = re.search(pattern, output(cwd, name))
        if found:
            match.append(found)
        return found is not None

    assert wait_until(seen, timeout), f"{name} never said {pattern!r}:\n{output(cwd, name)}"
    return match[0]


# -- logins --------------------------------------------------------------------------------


@dataclass
class Logins:
    """The hall's broker logins as the docs make them (``make-logins.sh``): one
    password for the daemon's two boards (one Pi), board 3 its own, the relay its
    own; the script's ACL is the broker's."""

    broker: HallBroker
    passwords: dict[str, str] = field(default_factory=dict)

    def make(self) -> Logins:
        env = {**os.environ, "PASSWORDS": str(self.broker.directory / "passwords"),
               "ROUNDS": f"{ROUND} {NEXT_ROUND}"}  # the evening's rounds  # fmt: skip
        acl = ""
        for first, last, same in (("1", "2", PI_PASSWORD), ("3", "3", "")):
            made = subprocess.run(
                ["sh", str(SHIPPED / "make-logins.sh"), TOURNAMENT, first, last],
                env={**env, "SAME_PASSWORD": same} if same else env,
                capture_output=True, text=True, check=True, timeout=60,
            )  # fmt: skip
            acl += made.stdout
            for line in made.stderr.splitlines():
                user, _, password = line.partition(" ")
                self.passwords[user] = password
        (self.broker.directory / "acl").write_text(acl)
        return self

    def login(self, user: str | None, *, certificate: bool = True) -> MqttSettings:
        """A client of the hall (a certificate of its CA) with ``user``'s login,
        or none."""
        settings = self.broker.login("relay", certificate=certificate)
        settings.username = user
        settings.password = self.passwords.get(user, "wrong") if user else None
        return settings


class Attacker:
    """A bare MQTT client of the hall with some login: connects, publishes, and
    says how the broker took it. It never reconnects by itself: with a board's
    own login, each connection knocks that board's daemon off (the broker binds
    the client id to the login), and a client that came back at once would keep
    it off."""

    def __init__(self, settings: MqttSettings, client_id: str | None = None) -> None:
        self.outcome: object = None
        self.connected = threading.Event()
        self.dropped = threading.Event()
        self.client = new_client(client_id or f"attacker-{free_port()}", settings)
        self.client.reconnect_delay_set(600, 600)

        def on_connect(client, userdata, flags, reason, properties):
            self.outcome = reason
            self.connected.set()

        def on_disconnect(client, userdata, flags, reason, properties):
            self.outcome = self.outcome if self.connected.is_set() else reason
            self.dropped.set()
            self.connected.set()  # whoever waits for the CONNACK: there will be none

        self.client.on_connect = on_connect
        self.client.on_disconnect = on_disconnect

    def connect(self, port: int) -> bool:
        """True when the broker let this login in."""
        try:
            self.client.connect("127.0.0.1", port, 10)
        except (OSError, ssl.SSLError) as exc:
            self.outcome = exc
            return False
        self.client.loop_start()
        self.connected.wait(20)
        return getattr(self.outcome, "is_failure", None) is False and not self.dropped.is_set()

    def send(self, topic: str, payload: object, *, retain: bool = False,
             timeout: float = 10) -> bool:  # fmt: skip
        """Publish with QoS 1; True once the broker acknowledged it, False when it
        did not within ``timeout`` or closed the connection first."""
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        info = self.client.publish(topic, data, qos=1, retain=retain)
        deadline = time.monotonic() + timeout
        while not info.is_published() and not self.dropped.is_set():
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        return info.is_published()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.disconnect()
        self.client.loop_stop()


def plain_connection_refused(port: int) -> bool:
    """A client speaking plain MQTT to the TLS port gets nowhere."""
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"plain-{free_port()}")
    client.username_pw_set("relay", "guess")
    answered, accepted = threading.Event(), []
    client.on_connect = lambda c, u, f, reason, p: (accepted.append(not reason.is_failure),
                                                    answered.set())  # fmt: skip
    client.on_disconnect = lambda *args: answered.set()
    client.reconnect_delay_set(600, 600)
    try:
        client.connect("127.0.0.1", port, 5)
        client.loop_start()
        answered.wait(10)
        return accepted != [True]
    except OSError:
        return True
    finally:
        client.loop_stop()
        with contextlib.suppress(Exception):
            client.disconnect()


# -- pages -----------------------------------------------------------------------------------


def _request(url: str, *, data: bytes | None = None, headers: dict[str, str] | None = None,
             timeout: float = 10) -> tuple[int, bytes]:  # fmt: skip
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def first_sse_message(url: str, timeout: float = 10) -> dict[str, Any]:
    """The first ``data:`` of an SSE feed (the snapshot), then the feed is closed."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        assert response.status == 200
        for raw in response:
            line = raw.decode().strip()
            if line.startswith("data:"):
                return json.loads(line[5:])
    raise AssertionError(f"{url} sent no message")


@dataclass
class Page:
    """A process's web app, read over HTTP."""

    url: str  # http://127.0.0.1:PORT

    def get(self, path: str) -> tuple[int, bytes]:
        return _request(self.url + path)

    def json(self, path: str) -> Any:
        status, body = self.get(path)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)

    def post(self, path: str, body: dict[str, Any], *, token: str | None = TOKEN,
             headers: dict[str, str] | None = None) -> tuple[int, bytes]:  # fmt: skip
        sent = {"Content-Type": "application/json", **(headers or {})}
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        return _request(self.url + path, data=json.dumps(body).encode(), headers=sent)

    def boards(self) -> dict[str, dict[str, Any]]:
        return self.json("/state.json")["boards"]


def game_of(state: dict[str, Any] | None) -> dict[str, Any]:
    """What a spectator is shown of one board: every move (with its SAN, position
    and clock), the result, the clock, the players."""
    if state is None:
        return {"moves": [], "result": None, "clock": None, "players": None}
    clock = state.get("clock") or {}
    return {
        "moves": [(m["uci"], m["san"], m["fen"], m.get("clock")) for m in state["moves"]],
        "result": state.get("result"),
        "clock": {k: clock.get(k) for k in ("white", "black", "running")} if clock else None,
        "players": (state["headers"].get("white"), state["headers"].get("black")),
    }


class Spectator:
    """A viewer of a page's ``/events`` from start to end: every message it was
    sent (a forged move shown for a moment, and taken back by the next real
    event, would escape a page read now and then)."""

    def __init__(self, url: str) -> None:
        self.url = url + "/events"
        self._messages: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.ended: str | None = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            with urllib.request.urlopen(self.url, timeout=600) as response:
                for raw in response:
                    line = raw.decode()
                    if line.startswith("data:"):
                        with self._lock:
                            self._messages.append(json.loads(line[5:]))
            self.ended = "the feed ended"
        except Exception as exc:  # the relay stopped, or the feed broke: said by ended
            self.ended = repr(exc)

    def __len__(self) -> int:
        with self._lock:
            return len(self._messages)

    def not_real(self, moves: dict[str, list[str]], results: dict[str, str], *,
                 since: int = 0, floor: dict[str, int] | None = None) -> list[str]:  # fmt: skip
        """What this viewer was sent (from its message ``since``) that is not the
        real games (``moves`` and ``results`` per board; read after the messages,
        so never behind them): another move, a move taken back, a new game, a
        penalty, a result not given, a clock beyond any real one, another board.
        ``floor``: the plies each board had shown before ``since``."""
        with self._lock:
            seen = list(self._messages[since:])
        plies, starts, problems = dict(floor or {}), Counter[str](), []

        def clock(board: str, shown: object, where: str) -> None:
            if isinstance(shown, dict) and any(
                isinstance(shown.get(s), int | float) and shown[s] > CLOCK_SHOWN
                for s in ("white", "black")
            ):
                problems.append(f"{where}: board {board}'s clock {shown}")

        def game(board: str, state: dict[str, Any], where: str) -> None:
            ucis = [m["uci"] for m in state["moves"]]
            if ucis != moves.get(board, [])[: len(ucis)]:
                problems.append(f"{where}: board {board} shown {ucis}")
            if len(ucis) < plies.get(board, 0):
                problems.append(f"{where}: board {board} shown {len(ucis)} plies after "
                                f"{plies[board]}")  # fmt: skip
            plies[board] = max(plies.get(board, 0), len(ucis))
            if state.get("result") not in (None, results.get(board)):
                problems.append(f"{where}: board {board} shown the result {state['result']}")
            if state.get("start_fen") not in (None, chess.STARTING_FEN):
                problems.append(f"{where}: board {board} shown from {state['start_fen']}")
            clock(board, state.get("clock"), where)

        for message in seen:
            if message.get("kind") == "snapshot":
                for board, state in message["boards"].items():
                    if board in moves:
                        game(board, state, "a snapshot")
                    else:
                        problems.append(f"a snapshot shows board {board}")
            elif message.get("kind") == "event":
                board, event = str(message["board"]), message["event"]
                kind = event.get("type")
                where = f"a {kind} event"
                if board not in moves or kind in ("takeback", "penalty"):
                    problems.append(f"{where} of board {board}: {event}")
                elif kind == "move":
                    ply = event["ply"]
                    if moves[board][ply - 1 : ply] != [event["uci"]]:
                        problems.append(f"{where}: board {board} ply {ply} {event['uci']}")
                    plies[board] = max(plies.get(board, 0), ply)
                    clock(board, event.get("clock"), where)
                elif kind == "game_start":
                    starts[board] += 1
                    if starts[board] > 1 or plies.get(board, 0) > 0:
                        problems.append(f"{where}: board {board}'s game shown wiped")
                elif kind == "game_end" and event.get("result") != results.get(board):
                    problems.append(f"{where}: board {board} shown the result "
                                    f"{event.get('result')}")  # fmt: skip
                elif kind == "clock":
                    clock(board, event, where)
        return problems


# -- the hall --------------------------------------------------------------------------------


@dataclass
class Hall:
    """The running hall (see the module)."""

    directory: Path
    broker: HallBroker
    logins: Logins
    games: dict[str, chess.pgn.Game]  # board -> the game its emulated board plays
    relay: Page
    spectator: Spectator  # on the relay's /events from its start
    daemon: Page
    processes: dict[str, subprocess.Popen[bytes]]

    @property
    def feed(self) -> Path:
        return self.directory / "feed.jsonl"  # the daemon's --events

    def login(self, user: str | None, *, certificate: bool = True) -> MqttSettings:
        return self.logins.login(user, certificate=certificate)

    def relay_status(self) -> dict[str, Any]:
        return self.relay.json("/relay.json")

    def daemon_events(self) -> list[dict[str, Any]]:
        if not self.feed.exists():
            return []
        return [json.loads(line) for line in self.feed.read_text().splitlines() if line.strip()]

    def real_games(self) -> tuple[dict[str, list[str]], dict[str, str]]:
        """Each board's moves and result as the daemon decided them (its feed)."""
        moves: dict[str, list[str]] = {board: [] for board in self.games}
        results: dict[str, str] = {}
        for event in self.daemon_events():
            board = str(event.get("board"))
            if event.get("type") == "move":
                moves.setdefault(board, [])[event["ply"] - 1 :] = [event["uci"]]
            elif event.get("type") == "game_end":
                results[board] = event["result"]
        return moves, results

    def alive(self) -> None:
        for name, process in self.processes.items():
            assert process.poll() is None, f"{name} ended:\n{output(self.directory, name)}"

    def broker_rss_kib(self) -> int:
        assert self.broker.process is not None
        status = Path(f"/proc/{self.broker.process.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]

    def mosquitto_log(self) -> str:
        return (self.directory / "mosquitto.log").read_text(errors="replace")

    def start_relay(self, round_: str) -> Page:
        """``dgt-bridge relay`` of ``round_`` as the docs start it (its login, a
        password file, TLS), its output in ``relay-ROUND.out``."""
        self.relay = start_relay(self.directory, self.broker.port, self.logins, round_,
                                 self.processes)  # fmt: skip
        return self.relay


def start_relay(directory: Path, port: int, logins: Logins, round_: str,
                processes: dict[str, subprocess.Popen[bytes]]) -> Page:  # fmt: skip
    login = logins.login("relay")
    password = directory / "relay.pw"
    password.write_text(logins.passwords["relay"] + "\n")
    name = f"relay-{round_}"
    processes[name] = command(
        "relay", "--broker", f"127.0.0.1:{port}", "--tournament", TOURNAMENT,
        "--round", round_, "--event", EVENT, "--address", "127.0.0.1", "--port", "0",
        "--username", "relay", "--password-file", str(password), "--ca", login.ca_file,
        "--cert", login.cert_file, "--key", login.key_file, cwd=directory, name=name,
    )  # fmt: skip
    return Page(found_in_output(directory, name, r"page (http://127\.0\.0\.1:\d+)", 30).group(1))


def _daemon_config(directory: Path, port: int, logins: Logins, chain: str,
                   games: dict[str, chess.pgn.Game]) -> Path:  # fmt: skip
    """The daemon's configuration: the chain's boards named as in their games, a
    token, the page's connections lowered, MQTT over TLS with ``board-{board}``."""
    boards = "".join(
        line.replace("}", f", white: {json.dumps(g.headers['White'])}, "
                          f"black: {json.dumps(g.headers['Black'])}}}") + "\n"
        for line, g in zip(chain.splitlines(), games.values(), strict=True)
    )  # fmt: skip
    tls = logins.login("board-1")
    config = directory / "dgt-bridge.yaml"
    config.write_text(
        "broadcast:\n  enabled: true\n  address: 127.0.0.1\n  port: 0\n"
        f"  token: {TOKEN}\n  event: {EVENT}\n  round: '{ROUND}'\n"
        f"  max_connections: {MAX_CONNECTIONS}\n"
        "  mqtt:\n    enabled: true\n    host: 127.0.0.1\n"
        f"    port: {port}\n    keepalive: 5\n    tournament: {TOURNAMENT}\n"
        f"    username: 'board-{{board}}'\n    password: {PI_PASSWORD}\n"
        f"    ca_file: {tls.ca_file}\n    cert_file: {tls.cert_file}\n"
        f"    key_file: {tls.key_file}\n"
        "boards:\n" + boards
    )
    return config


@contextlib.contextmanager
def running_hall(directory: Path, games: dict[str, chess.pgn.Game], *, speed: float,
                 before: Callable[[Logins], None]) -> Iterator[Hall]:  # fmt: skip
    """The broker (with ``make-logins.sh``'s logins), then ``before(logins)``, the
    relay of ``ROUND`` and a spectator of it, the emulated chain playing ``games``
    (board 1, board 2) at ``speed``, and the daemon reading it. Stopped as
    systemd stops them; none may have written a traceback."""
    pgn = directory / "games.pgn"
    pgn.write_text("\n\n".join(str(g) for g in games.values()) + "\n")
    broker = HallBroker(directory)
    logins = Logins(broker).make()
    broker.start()
    processes: dict[str, subprocess.Popen[bytes]] = {}
    try:
        before(logins)
        relay = start_relay(directory, broker.port, logins, ROUND, processes)
        spectator = Spectator(relay.url)
        processes["emulator"] = command(
            "emulate", "--bus", str(len(games)), "--pgn", str(pgn), "--speed", str(speed),
            "--delay", "1", "--dir", str(directory / "chain"), cwd=directory, name="emulator",
        )  # fmt: skip
        listed = rf"boards:\n((?:  - .*\n){{{len(games)}}})"
        chain = found_in_output(directory, "emulator", listed, 30)
        config = _daemon_config(directory, broker.port, logins, chain.group(1), games)
        processes["daemon"] = command(
            "run", "--config", str(config), "--no-speech", "--storage", str(directory / "games"),
            "--events", str(directory / "feed.jsonl"), cwd=directory, name="daemon",
        )  # fmt: skip
        page = found_in_output(directory, "daemon", r"live page on (http://127\.0\.0\.1:\d+)", 60)
        yield Hall(directory, broker, logins, games, relay, spectator, Page(page.group(1)),
                   processes)  # fmt: skip
    finally:
        for name in ("daemon", "emulator", *processes):
            stop(processes.get(name))
        broker.stop()
    for name in processes:
        assert "Traceback" not in output(directory, name), output(directory, name)
