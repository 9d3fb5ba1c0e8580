"""Broadcast fan-out: many live-page viewers over SSE, many boards over MQTT.

    python -m benchmarks.fanout [--viewers N] [--boards N] [--moves N] [--quick]

1. SSE: the daemon's broadcaster (``daemon.broadcast.Broadcaster``, the web server
   ``dgt-bridge run`` starts) on 127.0.0.1; N viewers, each an SSE stream
   ``/events?state=1`` as the live page opens it, in separate client processes (so
   the viewers' parsing does not share the server's core). Measured per move: from
   ``publish`` to the last viewer having it. Target: p99 under 100 ms for 500 viewers.
2. MQTT: our own Mosquitto on a free loopback port; N boards, each a hub with the
   daemon's ``MqttPublisher`` (its paho client, its topics, QoS 1, the retained state
   and PGN with every move); one subscriber in another process on every board's
   events topic. Measured per move: from the board's ``publish`` to the subscriber.

Times on both sides are CLOCK_MONOTONIC, which all processes of the machine share.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess

from benchmarks.common import ROOT, footer, header, percentile, spread_ms
from daemon.game import events

MOSQUITTO = "/usr/sbin/mosquitto"
TOPIC_PREFIX = "dgt-bench"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def game_feed(moves: int) -> list[dict[str, Any]]:
    """Feed dicts of a game: a start, then ``moves`` moves (the first legal move each
    time, cycling through new games if one ends)."""
    board = chess.Board()
    feed: list[dict[str, Any]] = [events.GameStart(t=0, fen=board.fen()).to_dict()]
    for ply in range(1, moves + 1):
        if board.is_game_over():
            board = chess.Board()
        move = min(board.legal_moves, key=lambda m: m.uci())
        san = board.san(move)
        by = "white" if board.turn else "black"
        board.push(move)
        feed.append(
            events.Move(
                t=float(ply), ply=board.ply(), uci=move.uci(), san=san, fen=board.fen(), by=by,
                speech=san, clock={"white": 300.0, "black": 300.0},
            ).to_dict()
        )  # fmt: skip
    return feed


def spawn_worker(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "benchmarks.fanout", *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def wait_line(process: subprocess.Popen[str], expected: str, timeout: float) -> None:
    """Read the worker's stdout until ``expected`` (on a thread, with a time-out)."""
    found = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if line.strip() == expected:
                found.set()
                return

    threading.Thread(target=read, daemon=True).start()
    if not found.wait(timeout):
        process.kill()
        raise SystemExit(f"a worker did not say {expected!r} within {timeout:.0f} s")


def finish_worker(process: subprocess.Popen[str], last: str, timeout: float) -> Any:
    """Tell the worker what the last message is, and read its JSON answer."""
    try:
        out, _ = process.communicate(f"{last}\n", timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        raise SystemExit("a worker did not finish in time") from None
    return json.loads(out.strip().splitlines()[-1])


# ---------------------------------------------------------------------- SSE


async def sse_viewers(url: str, count: int) -> None:
    """Worker: ``count`` SSE viewers; per feed id, when the last of them had it."""
    import aiohttp

    latest: dict[int, list[float]] = {}  # seq -> [latest arrival, viewers that had it]
    ready = 0
    last_seq: int | None = None
    all_had_last = asyncio.Event()

    async def viewer(session: aiohttp.ClientSession) -> None:
        nonlocal ready
        async with session.get(url) as response:
            ready += 1
            async for line in response.content:
                if line.startswith(b"id: "):
                    now = time.monotonic()
                    seq = int(line[4:])
                    entry = latest.setdefault(seq, [now, 0])
                    entry[0] = max(entry[0], now)
                    entry[1] += 1
                    if seq == last_seq and entry[1] == count:
                        all_had_last.set()

    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=60)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        tasks = [asyncio.create_task(viewer(session)) for _ in range(count)]
        for _ in range(1200):
            if ready >= count:
                break
            await asyncio.sleep(0.05)
        print("ready", flush=True)
        line = await asyncio.to_thread(sys.stdin.readline)
        last_seq = int(line)
        if latest.get(last_seq, [0, 0])[1] < count:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(all_had_last.wait(), 60)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps({str(seq): entry for seq, entry in latest.items()}), flush=True)


async def sse_run(viewers: int, moves: int, interval: float, processes: int) -> dict[str, Any]:
    from daemon.broadcast.server import Broadcaster
    from daemon.broadcast.settings import BroadcastSettings

    # Every viewer comes from 127.0.0.1 here: lift the per-address limit (a hall's
    # viewers are as many addresses).
    settings = BroadcastSettings(
        address="127.0.0.1",
        port=0,
        max_connections_per_address=viewers + 64,
        max_viewers_per_address=viewers + 64,
    )
    broadcaster = Broadcaster(settings)
    await broadcaster.start()
    url = f"http://127.0.0.1:{broadcaster.port}/events?state=1"
    shares = [viewers // processes + (i < viewers % processes) for i in range(processes)]
    workers = [spawn_worker("--sse-worker", url, str(n)) for n in shares if n]
    try:
        for worker in workers:
            await asyncio.to_thread(wait_line, worker, "ready", 120)
        await asyncio.sleep(0.5)
        sent: dict[int, float] = {}
        cpu_before = time.process_time()
        for event in game_feed(moves):
            before = time.monotonic()
            broadcaster.publish("1", event)  # on the loop: numbered at once
            sent[broadcaster.hub.seq] = before
            await asyncio.sleep(interval)
        server_cpu = (time.process_time() - cpu_before) / len(sent)
        last = max(sent)
        answers = await asyncio.gather(
            *(asyncio.to_thread(finish_worker, w, str(last), 120) for w in workers)
        )
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
        await broadcaster.stop()
    delays, missing = [], 0
    for seq, at in sent.items():
        arrivals = [a[str(seq)] for a in answers if str(seq) in a]
        had = sum(int(a[1]) for a in arrivals)
        missing += viewers - had
        if arrivals:
            delays.append(max(a[0] for a in arrivals) - at)
    return {"delays": delays, "missing": missing, "server_cpu": server_cpu}


# ---------------------------------------------------------------------- MQTT


def mqtt_subscriber(port: int, boards: int) -> None:
    """Worker: every board's events; per (board, seq), when it arrived."""
    from daemon.broadcast.mqtt import new_client

    arrivals: dict[str, float] = {}
    subscribed = threading.Event()
    client = new_client(f"bench-subscriber-{port}")

    def on_connect(client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        client.subscribe(f"{TOPIC_PREFIX}/+/+/+/events", qos=1)

    def on_subscribe(*args: Any) -> None:
        subscribed.set()

    def on_message(client: Any, userdata: Any, message: Any) -> None:
        now = time.monotonic()
        payload = json.loads(message.payload)
        if payload["event"].get("type") == "move":
            arrivals.setdefault(f"{payload['board']}:{payload['seq']}", now)

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    client.connect("127.0.0.1", port, keepalive=30)
    client.loop_start()
    if not subscribed.wait(30):
        raise SystemExit("the subscriber could not subscribe")
    print("ready", flush=True)
    expected = int(sys.stdin.readline())
    deadline = time.monotonic() + 60
    while len(arrivals) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    client.disconnect()
    client.loop_stop()
    print(json.dumps(arrivals), flush=True)


def start_mosquitto(port: int, work: Path) -> subprocess.Popen[bytes]:
    config = work / "mosquitto.conf"
    config.write_text(
        f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
        f"max_queued_messages 100000\n"
    )
    broker = subprocess.Popen(
        [MOSQUITTO, "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for _ in range(100):
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return broker
        time.sleep(0.05)
    broker.kill()
    raise SystemExit(f"mosquitto did not listen on 127.0.0.1:{port}")


async def mqtt_run(boards: int, moves: int, spacing: float) -> dict[str, Any]:
    from daemon.broadcast.hub import Hub
    from daemon.broadcast.mqtt import MqttPublisher
    from daemon.broadcast.settings import BoardSettings, BroadcastSettings, MqttSettings

    # Each board says it lost the broker when the benchmark stops them: not news here.
    logging.getLogger("daemon.broadcast.mqtt").setLevel(logging.ERROR)
    work = Path(tempfile.mkdtemp(prefix="dgt-bench-mqtt-"))
    port = free_port()
    broker = start_mosquitto(port, work)
    subscriber = spawn_worker("--mqtt-worker", str(port), str(boards))
    publishers: list[tuple[str, Hub, MqttPublisher]] = []
    try:
        await asyncio.to_thread(wait_line, subscriber, "ready", 60)
        for number in range(1, boards + 1):
            board_id = f"b{number:03d}"
            settings = BroadcastSettings(
                address="127.0.0.1",
                port=0,
                round="1",
                boards=[BoardSettings(id=board_id)],
                mqtt=MqttSettings(
                    enabled=True, host="127.0.0.1", port=port, topic_prefix=TOPIC_PREFIX,
                    tournament="bench",
                ),
            )  # fmt: skip
            hub = Hub(settings)
            hub.bind_loop()
            publisher = MqttPublisher(settings, board_id, hub)
            publisher.start()
            publishers.append((board_id, hub, publisher))
        for _ in range(600):
            if all(p.connected for _, _, p in publishers):
                break
            await asyncio.sleep(0.05)
        else:
            raise SystemExit("not every board connected to the broker in 30 s")
        feed = game_feed(moves)
        for _, hub, _ in publishers:
            hub.publish(hub.board_ids()[0], feed[0])
        await asyncio.sleep(0.5)
        sent: dict[str, float] = {}
        for event in feed[1:]:
            for board_id, hub, _ in publishers:  # the boards' moves, spread over the round
                before = time.monotonic()  # paho may send before publish returns
                hub.publish(board_id, event)
                sent[f"{board_id}:{hub.seq}"] = before
                await asyncio.sleep(spacing)
        arrivals = await asyncio.to_thread(finish_worker, subscriber, str(len(sent)), 120)
    finally:
        if subscriber.poll() is None:
            subscriber.kill()
        for _, _, publisher in publishers:
            with contextlib.suppress(Exception):
                await publisher.stop(1.0)
        broker.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            broker.wait(10)
        if broker.poll() is None:
            broker.kill()
    delays = [arrivals[key] - at for key, at in sent.items() if key in arrivals]
    return {"delays": delays, "missing": len(sent) - len(delays)}


# ---------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=500, help="SSE viewers (500)")
    parser.add_argument("--processes", type=int, default=2, help="viewer processes (2)")
    parser.add_argument("--moves", type=int, default=60, help="moves per run (60)")
    parser.add_argument("--interval", type=float, default=0.2, help="s between SSE moves (0.2)")
    parser.add_argument("--boards", type=int, default=100, help="MQTT boards (100)")
    parser.add_argument("--mqtt-moves", type=int, default=10, help="moves per board (10)")
    parser.add_argument(
        "--spacing", type=float, default=0.01, help="s between two boards' moves (0.01)"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each (3)")
    parser.add_argument("--quick", action="store_true", help="a few viewers and boards")
    parser.add_argument("--sse-worker", nargs=2, metavar=("URL", "N"), help=argparse.SUPPRESS)
    parser.add_argument("--mqtt-worker", nargs=2, metavar=("PORT", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.sse_worker:
        asyncio.run(sse_viewers(args.sse_worker[0], int(args.sse_worker[1])))
        return 0
    if args.mqtt_worker:
        mqtt_subscriber(int(args.mqtt_worker[0]), int(args.mqtt_worker[1]))
        return 0
    if args.quick:
        args.viewers, args.moves, args.boards, args.mqtt_moves, args.runs = 6, 5, 3, 3, 1
    header("broadcast fan-out (SSE viewers, MQTT boards) on 127.0.0.1")
    failed = False
    p99s, cpus = [], []
    for run in range(1, args.runs + 1):
        result = asyncio.run(sse_run(args.viewers, args.moves, args.interval, args.processes))
        p99s.append(percentile(result["delays"], 0.99))
        cpus.append(result["server_cpu"])
        failed |= bool(result["missing"])
        print(
            f"SSE run {run}: {args.viewers} viewers, {len(result['delays'])} messages, publish to "
            f"last viewer: {spread_ms(result['delays'])}; missing deliveries {result['missing']}; "
            f"server CPU {result['server_cpu'] * 1e3:.1f} ms per message"
        )
    sse_p99 = statistics.median(p99s)
    print(
        f"SSE: median p99 {sse_p99 * 1e3:.1f} ms with {args.viewers} viewers "
        f"(target < 100 ms: {'meets' if sse_p99 < 0.1 else 'MISSES'}); the server's own CPU "
        f"time per message {statistics.median(cpus) * 1e3:.1f} ms (a floor for the delay, "
        f"whatever the load)"
    )
    p99s = []
    for run in range(1, args.runs + 1):
        result = asyncio.run(mqtt_run(args.boards, args.mqtt_moves, args.spacing))
        p99s.append(percentile(result["delays"], 0.99))
        failed |= bool(result["missing"])
        print(
            f"MQTT run {run}: {args.boards} boards x {args.mqtt_moves} moves, one every "
            f"{args.spacing * 1e3:.0f} ms: move to subscriber {spread_ms(result['delays'])}; "
            f"missing {result['missing']}"
        )
    print(f"MQTT: median p99 {statistics.median(p99s) * 1e3:.1f} ms with {args.boards} boards")
    if failed:
        print("WARNING: some messages never arrived (see above)")
    footer()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
