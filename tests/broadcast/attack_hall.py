"""A hall as an organiser runs it, for the end-to-end attacks (issue 24): a real
Mosquitto with the shipped configuration and the logins ``make-logins.sh`` makes,
the real ``dgt-bridge relay`` process, and the real ``dgt-bridge run`` process
reading two boards of an emulated DGT bus chain, each playing a real game and
publishing with its own login. Also a bare MQTT client with any login, as an
attacker would have it, and the pages of both processes read over HTTP.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from hall_broker import SHIPPED, TOURNAMENT, HallBroker
from mqtt_helpers import free_port, wait_until

from daemon.broadcast.mqtt import new_client
from daemon.broadcast.settings import MqttSettings

ROOT = Path(__file__).resolve().parents[2]
ROUND = "3"
BASE = f"dgt-bridge/{TOURNAMENT}/{ROUND}"
#: The password of the daemon's boards (one Pi: ``SAME_PASSWORD=... make-logins.sh``).
PI_PASSWORD = "one-pi-two-boards"
TOKEN = "the-arbiter-s-token"


def command(*args: str, cwd: Path, name: str) -> subprocess.Popen[bytes]:
    """``dgt-bridge ARGS`` as the unit runs it (its configuration file only), its
    output in ``cwd/name.out``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(cwd)}
    for variable in list(env):
        if variable.startswith("DGT_BRIDGE_"):
            env.pop(variable)
    out = open(cwd / f"{name}.out", "wb")  # noqa: SIM115 (closed with the process)
    return subprocess.Popen([sys.executable, "-m", "daemon", *args], stdout=out,
                            stderr=subprocess.STDOUT, env=env, cwd=cwd)  # fmt: skip


def stop(process: subprocess.Popen[bytes] | None) -> None:
    """Ended as systemd ends it (SIGTERM), killed if it hangs."""
    if process is not None and process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


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


def make_logins(broker: HallBroker) -> dict[str, str]:
    """The hall's logins as the docs make them: one password for the daemon's two
    boards (one Pi), board 3 its own, the relay its own; and the ACL the script
    writes. Returns each login's password."""
    passwords = broker.directory / "passwords"
    env = {**os.environ, "PASSWORDS": str(passwords)}
    acl, logins = "", {}
    for first, last, same in (("1", "2", PI_PASSWORD), ("3", "3", "")):
        run_env = {**env, "SAME_PASSWORD": same} if same else env
        made = subprocess.run(["sh", str(SHIPPED / "make-logins.sh"), TOURNAMENT, first, last],
                              env=run_env, capture_output=True, text=True, check=True,
                              timeout=60)  # fmt: skip
        acl += made.stdout
        for line in made.stderr.splitlines():
            user, _, password = line.partition(" ")
            logins[user] = password
    (broker.directory / "acl").write_text(acl)
    return logins


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


class Spectator:
    """A viewer of a page's ``/events`` from start to end: every message it was
    sent (a forged move shown for a moment, and taken back by the next real
    event, would escape a page read now and then)."""

    def __init__(self, url: str) -> None:
        self.url = url + "/events"
        self._messages: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.ended: str | None = None
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

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

    def messages(self, since: int = 0) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._messages[since:])

    def __len__(self) -> int:
        with self._lock:
            return len(self._messages)


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


@dataclass
class Hall:
    """The running hall (see the module)."""

    directory: Path
    broker: HallBroker
    logins: dict[str, str]
    relay: Page
    daemon: Page
    feed: Path  # the daemon's --events
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    games: dict[str, Any] = field(default_factory=dict)  # board -> the PGN game it plays
    spectator: Spectator | None = None  # on the relay's /events from its start

    def login(self, user: str | None, *, certificate: bool = True) -> MqttSettings:
        settings = self.broker.login(user or "relay", certificate=certificate)
        settings.username = user
        settings.password = self.logins.get(user or "", "wrong") if user else None
        return settings

    def relay_status(self) -> dict[str, Any]:
        return self.relay.json("/relay.json")

    def rejected(self, board: str) -> dict[str, int]:
        return dict(self.relay_status()["boards"].get(board, {}).get("rejected") or {})

    def daemon_events(self) -> list[dict[str, Any]]:
        if not self.feed.exists():
            return []
        return [json.loads(line) for line in self.feed.read_text().splitlines() if line.strip()]

    def alive(self) -> None:
        for name, process in self.processes.items():
            assert process.poll() is None, f"{name} ended:\n{output(self.directory, name)}"

    def broker_rss_kib(self) -> int:
        assert self.broker.process is not None
        status = Path(f"/proc/{self.broker.process.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]

    def mosquitto_log(self) -> str:
        return (self.directory / "mosquitto.log").read_text(errors="replace")

    def connections_as(self, login: str) -> int:
        """How many times the broker let ``login`` in so far (its log)."""
        return self.mosquitto_log().count(f" as {login} (")


class Attacker:
    """A bare MQTT client of the hall with some login: connects, publishes, and
    says how the broker took it. It never reconnects by itself: with a board's
    own login, each connection knocks that board's daemon off (the broker binds
    the client id to the login), and a client that came back at once would keep
    it off."""

    def __init__(self, settings: MqttSettings, name: str = "attacker") -> None:
        self.outcome: object = None
        self.connected = threading.Event()
        self.dropped = threading.Event()
        self.client = new_client(f"{name}-{free_port()}", settings)
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
