"""The shipped Mosquitto example (config/mosquitto/) started for real: a test CA
made with openssl, logins made with mosquitto_passwd, the shipped ACL."""

from __future__ import annotations

import getpass
import shutil
import subprocess
from pathlib import Path

import pytest
from mqtt_helpers import Broker

from benchmarks import testca
from benchmarks.testca import has_openssl
from daemon.broadcast import MqttSettings

SHIPPED = Path(__file__).resolve().parents[2] / "config" / "mosquitto"
INSTALLED = "/etc/mosquitto/dgt-bridge/"
PASSWORDS = {"board-1": "pw-one", "board-2": "pw-two", "relay": "pw-relay"}
TOURNAMENT = "club-open"  # as in the shipped ACL


def make_test_ca(directory: Path) -> None:
    """ca.crt, broker.crt/key (for 127.0.0.1) and client.crt/key, all EC P-256 (the
    benchmarks' throw-away CA, ``benchmarks/testca.py``)."""
    if not has_openssl():
        pytest.skip("openssl is not installed")
    testca.make_test_ca(directory)


class HallBroker(Broker):
    """Mosquitto with the shipped dgt-bridge.conf and acl, on a loopback port."""

    def use_port(self, port: int) -> None:
        directory = self.directory
        if not (directory / "ca.crt").exists():
            make_test_ca(directory)
            passwd = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
            for user, password in PASSWORDS.items():
                flags = ["-b"] if (directory / "passwords").exists() else ["-c", "-b"]
                subprocess.run([passwd, *flags, str(directory / "passwords"), user, password],
                               check=True, capture_output=True, timeout=30)  # fmt: skip
            shutil.copy(SHIPPED / "acl", directory / "acl")
        self.port = port
        text = (SHIPPED / "dgt-bridge.conf").read_text()
        text = text.replace(INSTALLED, f"{directory}/")
        text = text.replace("persistence_location /var/lib/mosquitto/",
                            f"persistence_location {directory}/")  # fmt: skip
        assert "listener 8883\n" in text
        text = text.replace("listener 8883\n", f"listener {port} 127.0.0.1\n")
        # started as root, mosquitto would become user "mosquitto": stay who we are
        text += f"user {getpass.getuser()}\nlog_dest file {directory}/mosquitto.log\n"
        self.config.write_text(text)
        self.process = None

    def login(self, user: str, *, certificate: bool = True) -> MqttSettings:
        """The MQTT settings of a client of the hall (a board or the relay)."""
        directory = self.directory
        return MqttSettings(
            enabled=True, host="127.0.0.1", port=self.port, tournament=TOURNAMENT,
            username=user, password=PASSWORDS.get(user, "wrong"), tls=True,
            ca_file=str(directory / "ca.crt"),
            cert_file=str(directory / "client.crt") if certificate else "",
            key_file=str(directory / "client.key") if certificate else "",
        )  # fmt: skip
