"""What a hall's MQTT clients cost to make, over TLS: one a board, at the daemon's start
and after a restart, while the boards are already read.

    python -m benchmarks.mqtt_clients [--boards N] [--runs N] [--quick]

``--boards`` (26: the Pi 4 hall of issue 28) boards' ``MqttPublisher`` are made with
TLS, as the daemon's broadcast makes them, never connected (the handshakes come later,
each in its own turn of the loop). Twice: trusting a CA file (a hall's own CA, as the
benchmarks' brokers have: ``benchmarks/testca.py``), and trusting the system's CAs (a
broker with a certificate from a public CA, no ``mqtt.ca_file``). Each beside the old
way in the same run: each client's own context, made by paho's ``tls_set``, as the
daemon made them before the clients shared one (``daemon.broadcast.mqtt.tls_context``).

Timed with this thread's CPU clock, the median of ``--runs`` (5); the first client's
cost is the context's, once a run of the daemon (each run here starts afresh). The
broadcast now yields to the loop after each board's client: the figure to set against
a bus reply's wait is the longest turn, not the total.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from unittest import mock

import paho.mqtt.client as mqtt

from benchmarks.common import footer, header
from benchmarks.testca import has_openssl, make_test_ca
from daemon.broadcast import mqtt as mqtt_module
from daemon.broadcast.hub import Hub
from daemon.broadcast.mqtt import MqttPublisher
from daemon.broadcast.settings import BoardSettings, BroadcastSettings, MqttSettings


def _settings(boards: int, ca_file: str) -> BroadcastSettings:
    return BroadcastSettings(
        enabled=False,
        round="1",
        boards=[BoardSettings(id=str(n)) for n in range(1, boards + 1)],
        mqtt=MqttSettings(enabled=True, tls=True, ca_file=ca_file, tournament="bench"),
    )


def _each_own_context(client: mqtt.Client, settings: MqttSettings) -> None:
    """The old way: paho's ``tls_set``, a context (and the CA store read) per client."""
    client.tls_set(ca_certs=settings.ca_file or None)


def _hall(settings: BroadcastSettings) -> list[float]:
    """Each board's publisher made, its CPU in ms, with a fresh context cache."""
    mqtt_module._context_of.cache_clear()
    hub = Hub(settings)
    costs = []
    for board in settings.boards:
        start = time.thread_time()
        MqttPublisher(settings, board.id, hub)
        costs.append((time.thread_time() - start) * 1000)
    return costs


def _measure(settings: BroadcastSettings, runs: int, old: bool) -> tuple[float, float, float]:
    """Median over runs: the first client, each later one, the hall's total (ms)."""
    way = mock.patch.object(mqtt_module, "_set_tls", _each_own_context)
    with way if old else contextlib.nullcontext():
        halls = [_hall(settings) for _ in range(runs)]
    first = statistics.median(h[0] for h in halls)
    later = statistics.median(statistics.median(h[1:]) for h in halls if len(h) > 1)
    total = statistics.median(sum(h) for h in halls)
    return first, later, total


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=26, help="boards (26)")
    parser.add_argument("--runs", type=int, default=5, help="runs, the median shown (5)")
    parser.add_argument("--quick", action="store_true", help="3 boards, 1 run")
    args = parser.parse_args(argv)
    if args.quick:
        args.boards, args.runs = 3, 1
    if not has_openssl():
        raise SystemExit("this benchmark makes a test CA with openssl: apt-get install openssl")
    header(f"a hall's MQTT clients over TLS, made: {args.boards} boards, {args.runs} runs")
    with tempfile.TemporaryDirectory() as directory:
        make_test_ca(Path(directory))
        trusts = (("a CA file", str(Path(directory) / "ca.crt")), ("the system's CAs", ""))
        print("| trusting | clients | first client (ms CPU) | each later (ms CPU) | "
              "all (ms CPU) | all, old / now |")  # fmt: skip
        print("|---|---|---|---|---|---|")
        for name, ca_file in trusts:
            settings = _settings(args.boards, ca_file)
            old = _measure(settings, args.runs, old=True)
            now = _measure(settings, args.runs, old=False)
            for label, (first, later, total) in (("each its own (old)", old), ("one shared", now)):
                print(f"| {name} | {label} | {first:.2f} | {later:.3f} | {total:.1f} | "
                      f"{old[2] / now[2]:.0f}x |")  # fmt: skip
    footer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
