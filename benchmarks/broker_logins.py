"""The hall's broker with one login per board: Mosquitto's memory (issue 24).

    python -m benchmarks.broker_logins [--boards 24,100,200] [--state-bytes 4000]

For each N: the shipped ``config/mosquitto/dgt-bridge.conf`` (TLS with client
certificates, no anonymous client, ``use_username_as_clientid``, the limits), its
passwords and ACL made by the shipped ``make-logins.sh`` for boards 1..N, on a
loopback port. Measured: the broker's resident memory (VmRSS) just started with
the N logins, then with N boards connected (each its own login, certificate and
connection, as a hall Pi gives each board), each having published its retained
status, state (``--state-bytes``, a mid-game state is 2-6 KB) and PGN, and a
relay subscribed to the round. A test CA is made with openssl for the run.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt

from benchmarks.common import ROOT, footer, header
from benchmarks.testca import make_test_ca

SHIPPED = ROOT / "config" / "mosquitto"
TOURNAMENT = "club-open"
CHUNK = 200  # boards per client process


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _logins(directory: Path, boards: int) -> dict[str, str]:
    """The shipped make-logins.sh for boards 1..N: passwords and the ACL."""
    done = subprocess.run(
        ["sh", str(SHIPPED / "make-logins.sh"), TOURNAMENT, "1", str(boards)],
        env={**os.environ, "PASSWORDS": str(directory / "passwords")},
        capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    (directory / "acl").write_text(done.stdout)
    return dict(line.split(" ", 1) for line in done.stderr.splitlines() if " " in line)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _config(directory: Path, port: int) -> Path:
    text = (SHIPPED / "dgt-bridge.conf").read_text()
    text = text.replace("/etc/mosquitto/dgt-bridge/", f"{directory}/")
    text = text.replace("/var/lib/mosquitto/", f"{directory}/")
    text = text.replace("listener 8883\n", f"listener {port} 127.0.0.1\n")
    text += f"user {getpass.getuser()}\nlog_dest file {directory}/mosquitto.log\n"
    path = directory / "mosquitto.conf"
    path.write_text(text)
    return path


def _more_files() -> None:
    """The broker may hold 4096 descriptors (a shell's soft limit is often 1024;
    systemd's default for a service is 1024 too: see RESULTS.md)."""
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))


def _client(directory: Path, port: int, user: str, password: str) -> mqtt.Client:
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=user,
                         protocol=mqtt.MQTTv311)  # fmt: skip
    client.username_pw_set(user, password)
    client.tls_set(ca_certs=str(directory / "ca.crt"), certfile=str(directory / "client.crt"),
                   keyfile=str(directory / "client.key"))  # fmt: skip
    connected = threading.Event()
    client.on_connect = lambda c, u, f, reason, p: connected.set()
    client.connect("127.0.0.1", port, 60)
    client.loop_start()
    if not connected.wait(30):
        raise RuntimeError(f"{user} could not connect")
    return client


def measure(boards: int, state_bytes: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="broker-logins-") as name:
        directory = Path(name)
        make_test_ca(directory)
        started = time.monotonic()
        passwords = _logins(directory, boards)
        made = time.monotonic() - started
        port = _free_port()
        broker = subprocess.Popen(["mosquitto", "-c", str(_config(directory, port))],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  preexec_fn=_more_files)  # fmt: skip
        clients: list[mqtt.Client] = []
        workers: list[subprocess.Popen[str]] = []
        try:
            time.sleep(1.0)
            idle = _rss_kib(broker.pid)
            relay = _client(directory, port, "relay", passwords["relay"])
            relay.subscribe(f"dgt-bridge/{TOURNAMENT}/1/+/#", qos=1)
            clients.append(relay)
            (directory / "passwords.json").write_text(json.dumps(passwords))
            for first in range(1, boards + 1, CHUNK):  # paho selects: < 1024 fds a process
                last = min(boards, first + CHUNK - 1)
                worker = subprocess.Popen(
                    [sys.executable, "-m", "benchmarks.broker_logins", "--worker",
                     f"{directory},{port},{first},{last},{state_bytes}"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
                )  # fmt: skip
                workers.append(worker)
                assert worker.stdout is not None
                if worker.stdout.readline().strip() != "ready":
                    raise RuntimeError(f"boards {first}-{last} could not connect")
            time.sleep(1.0)
            loaded = _rss_kib(broker.pid)
        except RuntimeError:
            log = directory / "mosquitto.log"
            print(log.read_text()[-800:] if log.exists() else "(no broker log)")
            raise
        finally:
            for client in clients:
                client.disconnect()
                client.loop_stop()
            for worker in workers:
                worker.communicate(timeout=60)  # stdin closed: it disconnects and ends
            broker.terminate()
            broker.wait(10)
    return {"boards": boards, "logins_s": made, "idle_mib": idle / 1024,
            "loaded_mib": loaded / 1024}  # fmt: skip


def _worker(spec: str) -> int:
    """Boards FIRST..LAST connected and published, until stdin closes."""
    name, port, first, last, state_bytes = spec.split(",")
    directory = Path(name)
    passwords = json.loads((directory / "passwords.json").read_text())
    state = json.dumps({"board": "x", "moves": [], "pad": "x" * int(state_bytes)})
    clients = []
    for number in range(int(first), int(last) + 1):
        user = f"board-{number}"
        client = _client(directory, int(port), user, passwords[user])
        clients.append(client)
        base = f"dgt-bridge/{TOURNAMENT}/1/{number}"
        client.publish(f"{base}/status", b'{"online":true}', qos=1, retain=True)
        client.publish(f"{base}/state", state.encode(), qos=1, retain=True)
        info = client.publish(f"{base}/pgn", b"1. e4 e5 *" * 50, qos=1, retain=True)
        info.wait_for_publish(10)
    print("ready", flush=True)
    sys.stdin.read()
    for client in clients:
        client.disconnect()
        client.loop_stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default="24,100,200", help="N values, comma-separated")
    parser.add_argument("--state-bytes", type=int, default=4000)
    parser.add_argument("--quick", action="store_true", help="3 boards: seconds")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker(args.worker)
    if args.quick:
        args.boards = "3"
    if shutil.which("mosquitto") is None or shutil.which("openssl") is None:
        print("needs mosquitto, mosquitto_passwd and openssl")
        return 2
    header("The hall's broker with one login per board (issue 24)")
    print(f"{'boards':>6} {'make-logins.sh s':>17} {'broker started MiB':>19} "
          f"{'N connected MiB':>16} {'per board KiB':>14}")  # fmt: skip
    for count in (int(n) for n in args.boards.split(",")):
        row = measure(count, args.state_bytes)
        per = (row["loaded_mib"] - row["idle_mib"]) * 1024 / max(1, count)
        print(f"{count:>6} {row['logins_s']:>17.1f} {row['idle_mib']:>19.1f} "
              f"{row['loaded_mib']:>16.1f} {per:>14.0f}", flush=True)  # fmt: skip
    footer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
