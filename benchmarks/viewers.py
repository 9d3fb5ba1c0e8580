"""A crowd of the live page's viewers in one process of its own (issue 28's hall: 100
phones and screens on the page), for ``benchmarks.pihall``'s features-alive check.

    python -m benchmarks.viewers URL COUNT RESULT.json

Each viewer comes from an address of its own (127.0.1.2, 127.0.1.3 ...: a hall's
phones each have one, and the daemon allows a few feeds per address), loads the page
(``/``, HTML) once and then follows ``/events``, noting each board's moves in the
order they came. When every viewer's stream is open it prints ``connected N``; on
SIGTERM (or SIGINT) it writes what each viewer had to RESULT (JSON: a list of
``{"page_ok", "moves": {board: [uci...]}, "error"}``) and ends. Outside the daemon's
CPU group, as the phones are; only lines naming a move are parsed, to stay light on
the machine the daemon shares.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from benchmarks.alive import moves_in
from benchmarks.common import ROOT


@dataclass
class Seen:
    """What one viewer had: the page, each board's moves, why it stopped early."""

    page_ok: bool = False
    moves: dict[str, list[str]] = field(default_factory=dict)
    error: str = ""


def address(index: int) -> str:
    """The viewer's own loopback address, 127.0.1.2 on (Linux has all of 127/8 here)."""
    return f"127.0.{1 + index // 200}.{2 + index % 200}"


async def view(url: str, index: int, seen: Seen, opened: asyncio.Event) -> None:
    connector = aiohttp.TCPConnector(local_addr=(address(index), 0))
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)
    try:
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            async with session.get(url + "/") as page:
                body = await page.read()
                seen.page_ok = page.status == 200 and b"<html" in body.lower()
            async with session.get(url + "/events") as stream:
                if stream.status != 200:
                    seen.error = f"/events answered {stream.status}"
                    return
                opened.set()
                async for raw in stream.content:
                    if b'"move"' not in raw or not raw.startswith(b"data:"):
                        continue
                    with contextlib.suppress(ValueError):
                        for board, uci in moves_in(json.loads(raw[5:])):
                            seen.moves.setdefault(board, []).append(uci)
    except (aiohttp.ClientError, OSError) as error:
        seen.error = str(error) or type(error).__name__
    finally:
        opened.set()


async def crowd(url: str, count: int, result: Path) -> None:
    seen = [Seen() for _ in range(count)]
    opened = [asyncio.Event() for _ in range(count)]
    tasks = [asyncio.create_task(view(url, i, seen[i], opened[i])) for i in range(count)]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await asyncio.gather(*(event.wait() for event in opened))
    print(f"connected {sum(not s.error for s in seen)}", flush=True)
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    result.write_text(json.dumps([asdict(s) for s in seen]))


class Crowd:
    """The crowd's process, started by the benchmark: ``start`` waits until every
    viewer follows the feed, ``stop`` ends it and returns what each viewer had."""

    def __init__(self, url: str, count: int, work: Path) -> None:
        self.result = work / f"viewers-{count}.json"
        self.result.unlink(missing_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.viewers", url, str(count), str(self.result)],
            stdout=subprocess.PIPE, text=True, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        self.count = count
        self.connected = 0

    def wait_connected(self, timeout: float) -> int:
        """Viewers following the feed (the crowd's ``connected N``; 0 if it never said)."""
        assert self.process.stdout is not None
        ready = threading.Event()

        def read() -> None:
            assert self.process.stdout is not None
            line = self.process.stdout.readline()
            if line.startswith("connected "):
                self.connected = int(line.split()[1])
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        ready.wait(timeout)
        return self.connected

    def stop(self) -> list[dict[str, Any]]:
        """Ends the crowd; each viewer's record (``page_ok``, ``moves``, ``error``)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        try:
            found = json.loads(self.result.read_text())
        except (OSError, ValueError):
            return []
        return found if isinstance(found, list) else []


def main(argv: list[str]) -> int:
    url, count, result = argv[0].rstrip("/"), int(argv[1]), Path(argv[2])
    asyncio.run(crowd(url, count, result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
