"""What a feed event costs the daemon's loop with MQTT on: the hub and the publisher.

    python -m benchmarks.mqtt_publish_cost [--plies 80] [--runs 5] [--quick]

One board, no viewer, an MQTT publisher listening as in a hall (``Hub.publish`` ->
``MqttPublisher.on_feed``), over a game of random legal moves with three clock
reports a ply (two while the player thinks, one after the press), the game's own
time as the publisher's clock. paho is replaced by a client whose ``publish`` only
counts what it is handed, so the figure is our side alone: the event's envelope,
the board's page state and its JSON, the PGN when it changed. Best of ``--runs``, in
CPU time (``time.process_time``); the messages and bytes handed to paho.

To compare two trees, run the same file against each:
``PYTHONPATH=<tree> python benchmarks/mqtt_publish_cost.py``.
Numbers, not a test: the machine and its load decide them.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections.abc import Sequence
from typing import Any

import chess

from benchmarks.common import footer, header
from daemon.broadcast.hub import Hub
from daemon.broadcast.mqtt import MqttPublisher
from daemon.broadcast.settings import BoardSettings, BroadcastSettings, MqttSettings
from daemon.game import events


class _Handed:
    rc = 0
    mid = 1


class CountingClient:
    """paho's ``publish`` as the publisher calls it, counting and keeping nothing."""

    def __init__(self) -> None:
        self.messages = 0
        self.bytes = 0

    def publish(self, topic: str, payload: bytes, qos: int = 0, retain: bool = False) -> _Handed:
        self.messages += 1
        self.bytes += len(payload)
        return _Handed()


def game_with_clock(plies: int, seed: int = 1) -> list[dict[str, Any]]:
    """A game of random legal moves: two clock reports while each move is thought
    over, the move, and the report after the press."""
    rng = random.Random(seed)
    board = chess.Board()
    feed = [events.GameStart(t=0.0, fen=board.fen()).to_dict()]
    t, times = 0.0, {"white": 300.0, "black": 300.0}
    for ply in range(1, plies + 1):
        if board.is_game_over():
            break
        move = rng.choice(list(board.legal_moves))
        by = "white" if board.turn == chess.WHITE else "black"
        san = board.san(move)
        board.push(move)
        for _ in range(2):
            t += 1.0
            times[by] -= 1.0
            feed.append(events.ClockUpdate(t=t, running=by, **times).to_dict())
        t += 0.5
        feed.append(
            events.Move(
                t=t, ply=ply, uci=move.uci(), san=san, fen=board.fen(), by=by, speech=san,
                clock=dict(times),
            ).to_dict()
        )  # fmt: skip
        after = "black" if by == "white" else "white"
        feed.append(events.ClockUpdate(t=t + 0.05, running=after, **times).to_dict())
    return feed


async def measure(plies: int, runs: int) -> tuple[int, float, CountingClient]:
    settings = BroadcastSettings(
        enabled=False,
        round="1",
        boards=[BoardSettings(id="1", white="A", black="B")],
        mqtt=MqttSettings(enabled=True, host="127.0.0.1", port=1883, tournament="cost"),
    )
    feed = game_with_clock(plies)
    best = float("inf")
    client = CountingClient()
    for _ in range(runs):
        hub = Hub(settings)
        hub.bind_loop()  # the publisher's timers, as in the daemon
        publisher = MqttPublisher(settings, "1", hub)
        client = CountingClient()
        publisher.client = client  # type: ignore[assignment]  # paho's publish, counted
        publisher.connected = True
        hub.listeners.append(publisher.on_feed)
        now = [0.0]
        publisher.clock = lambda now=now: now[0]
        started = time.process_time()
        for event in feed:
            now[0] = event["t"]
            hub.publish("1", event)
        best = min(best, time.process_time() - started)
        await asyncio.sleep(0)
    return len(feed), best, client


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--plies", type=int, default=80)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="10 plies, 2 runs (a smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        args.plies, args.runs = 10, 2
    header("a feed event's CPU with MQTT on: the hub and the publisher, paho counting only")
    count, seconds, client = asyncio.run(measure(args.plies, args.runs))
    print(
        f"{count} feed events: {1e6 * seconds / count:.0f} µs of CPU an event (best of "
        f"{args.runs}); handed to paho: {client.messages} messages, {client.bytes / 1e6:.2f} MB"
    )
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
