"""A connection flood against the web server: what one client costs, what others see.

    python -m benchmarks.flood [--connections N] [--probes N] [--seconds S] [--quick]

The server (the daemon's ``Broadcaster``, one board, a move published every 0.2 s)
runs in its own process under ``ulimit -n 1024``, as systemd's default would give
it. The attacker (this process) opens N half-sent requests from 127.0.0.2 and keeps
them open; then it measures, while they are held:

1. a new viewer from 127.0.0.1: time to a ``/state.json`` answer (``--probes`` of
   them): the target is under 2 s; before the connection guard they timed out;
2. the established SSE viewer: delay from ``publish`` to its arrival of each move;
3. refusals: connections opened as fast as one client can for ``--seconds``, how
   many the server refused per second, and the server's CPU per refusal.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import sys
import time
from pathlib import Path

from benchmarks.common import footer, header, spread_ms

ATTACKER = "127.0.0.2"
PARTIAL = b"GET /state.json HTTP/1.1\r\nHost: x\r\nX-Slow: "


# -- the server's process -------------------------------------------------------------


async def serve(port_file: Path, limit: int) -> None:
    from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings

    settings = BroadcastSettings(address="127.0.0.1", port=0, boards=[BoardSettings()],
                                 max_connections=limit,
                                 max_connections_per_address=100_000)  # fmt: skip
    async with Broadcaster(settings, start_seq=0) as broadcaster:
        port_file.write_text(str(broadcaster.port))
        sent = 0
        while True:
            await asyncio.sleep(0.2)
            sent += 1
            broadcaster.publish("1", {"t": sent, "type": "notice", "code": "tick",
                                      "message": repr(time.time())})  # fmt: skip


def _limit_1024() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- the attacker -----------------------------------------------------------------------


async def hold(port: int, opened: list[int], stop: asyncio.Event) -> None:
    """One half-sent request, opened again 0.2 s after the server closes it.
    ``opened``: [opened in all, open now]."""
    while not stop.is_set():
        with contextlib.suppress(OSError):
            reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                           local_addr=(ATTACKER, 0))  # fmt: skip
            writer.write(PARTIAL)
            opened[0] += 1
            opened[1] += 1
            with contextlib.suppress(asyncio.TimeoutError, OSError):
                await asyncio.wait_for(reader.read(), 30)
            opened[1] -= 1
            writer.close()
        await asyncio.sleep(0.2)


async def probe(port: int, status: list[dict]) -> float:
    """A new viewer's ``/state.json``: seconds to the whole answer (kept in ``status``)."""
    started = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /state.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    line = await asyncio.wait_for(reader.readline(), 10)
    rest = await reader.read()
    writer.close()
    assert line.startswith(b"HTTP/1.1 200"), line
    status[:] = [json.loads(rest.split(b"\r\n\r\n", 1)[1])["status"]]
    return time.monotonic() - started


async def viewer(port: int, delays: list[float], stop: asyncio.Event) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    while not stop.is_set():
        line = await asyncio.wait_for(reader.readline(), 10)
        if line.startswith(b"data: ") and b'"tick"' in line:
            event = json.loads(line[6:])["event"]
            delays.append(time.time() - float(event["message"]))
    writer.close()


async def refusals(port: int, seconds: float) -> int:
    refused = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, asyncio.TimeoutError):
            reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                           local_addr=(ATTACKER, 0))  # fmt: skip
            try:  # a refusal comes at once; one admitted into a free slot waits: drop it
                reply = await asyncio.wait_for(reader.read(100), 0.5)
            except TimeoutError:
                reply = b""
            writer.close()
            refused += reply.startswith(b"HTTP/1.1 503")
    return refused


async def attack(args: argparse.Namespace) -> None:
    port_file = Path(f"/tmp/dgt-bridge-flood-{os.getpid()}.port")
    port_file.unlink(missing_ok=True)
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "benchmarks.flood", "--serve", str(port_file),
        "--limit", str(args.limit),
        preexec_fn=_limit_1024, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []
    try:
        for _ in range(300):
            if port_file.exists() and port_file.read_text():
                break
            await asyncio.sleep(0.1)
        port = int(port_file.read_text())
        delays: list[float] = []
        tasks.append(asyncio.create_task(viewer(port, delays, stop)))
        opened = [0, 0]
        tasks += [asyncio.create_task(hold(port, opened, stop)) for _ in range(args.connections)]
        deadline = time.monotonic() + 30
        while opened[0] < args.connections and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)
        probes = []
        status: list[dict] = []
        for _ in range(args.probes):
            probes.append(await probe(port, status))
            await asyncio.sleep(0.1)
        before = _cpu_seconds(server.pid)
        refused = await refusals(port, args.seconds)
        cpu = _cpu_seconds(server.pid) - before
        print(f"attack: {args.connections} half-sent requests from {ATTACKER} kept up "
              f"({opened[0]} opened in all, the server closing or refusing those beyond "
              "its limit), server under ulimit -n 1024")  # fmt: skip
        limits = status[0]["limits"]
        print(f"server: {status[0]['connections']} connections open of "
              f"{limits['max_connections']} allowed ({limits['descriptors']} files, "
              f"{limits['reserved_descriptors']} kept back)")  # fmt: skip
        print(f"new viewer /state.json: {spread_ms(probes)} (target < 2000 ms)")
        print(f"established SSE viewer, publish to arrival: {spread_ms(delays)}")
        rate = refused / args.seconds
        per = cpu / refused * 1e6 if refused else float("nan")
        print(f"refused: {refused} in {args.seconds:g} s ({rate:.0f}/s from one client), "
              f"server CPU {per:.0f} µs per refusal")  # fmt: skip
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        server.kill()
        await server.wait()
        port_file.unlink(missing_ok=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--connections", type=int, default=1100, help="half-open (1100)")
    parser.add_argument("--probes", type=int, default=20, help="new viewers timed (20)")
    parser.add_argument("--seconds", type=float, default=3.0, help="refusal run (3 s)")
    parser.add_argument(
        "--limit",
        type=int,
        default=1000,
        help="the server's max_connections (1000; lowered to the files)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="50 connections against a limit of 40, 3 probes, 1 s"
    )
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve(args.serve, args.limit))
        return 0
    if args.quick:
        args.connections, args.probes, args.seconds, args.limit = 50, 3, 1.0, 40
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.connections + 500)),
                                                hard))  # fmt: skip
    header("connection flood against the web server on 127.0.0.1")
    asyncio.run(attack(args))
    footer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
