"""A real Mosquitto broker per test session, and a subscriber that records."""

from __future__ import annotations

import getpass
import json
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

MOSQUITTO = shutil.which("mosquitto") or (
    "/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_processes(*processes: subprocess.Popen | None) -> None:
    """Each process ended as systemd ends it (SIGTERM), killed if it hangs."""
    for process in processes:
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


def wait_until(condition, timeout: float = 20.0, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


class Broker:
    """Mosquitto on a loopback port with its own config and persistence directory."""

    def __init__(self, directory: Path) -> None:
        assert MOSQUITTO is not None
        self.directory = directory
        self.config = directory / "mosquitto.conf"
        self.use_port(free_port())

    def use_port(self, port: int) -> None:
        self.port = port
        self.config.write_text(
            f"listener {self.port} 127.0.0.1\n"
            "allow_anonymous true\n"
            # started as root, mosquitto would become user "mosquitto" and could
            # not write its persistence file here: stay who we are
            f"user {getpass.getuser()}\n"
            "persistence true\n"
            f"persistence_location {self.directory}/\n"
            f"log_dest file {self.directory}/mosquitto.log\n"
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        process = self.process

        def listening() -> bool:
            if process.poll() is not None:
                return True  # it exited (the port was taken): reported below
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return True
            except OSError:
                return False

        if not wait_until(listening, 20) or process.poll() is not None:
            self.stop()
            log = self.directory / "mosquitto.log"
            tail = log.read_text()[-500:] if log.exists() else "(no log)"
            raise RuntimeError(f"mosquitto did not start on port {self.port}: {tail}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
            self.process = None


class Recorder:
    """Subscribes to a topic filter and keeps every message, thread-safely."""

    def __init__(self, port: int, topic: str, *, client_id: str | None = None,
                 clean_session: bool = True) -> None:  # fmt: skip
        self.messages: list[tuple[str, bytes, bool]] = []
        self.lock = threading.Lock()
        self.client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2,
            client_id=client_id or f"recorder-{free_port()}",
            protocol=mqtt.MQTTv311,
            clean_session=clean_session,
        )
        self.client.reconnect_delay_set(1, 2)
        self.subscribed = threading.Event()
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(topic, qos=1)
        self.client.on_subscribe = lambda *args: self.subscribed.set()
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port, keepalive=10)
        self.client.loop_start()
        if not self.subscribed.wait(10):
            raise RuntimeError("the recorder could not subscribe")

    def _on_message(self, client: Any, userdata: Any, message: mqtt.MQTTMessage) -> None:
        with self.lock:
            self.messages.append((message.topic, bytes(message.payload), bool(message.retain)))

    def on(self, suffix: str) -> list[tuple[str, bytes, bool]]:
        with self.lock:
            return [m for m in self.messages if m[0].endswith(suffix)]

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(payload) for _, payload, _ in self.on("/events")]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
