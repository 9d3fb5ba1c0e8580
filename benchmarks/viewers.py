"""A crowd of the live page's viewers in one process of its own (issue 28's hall: 100
phones and screens on the page), for ``benchmarks.pihall``'s features-alive check.

    python -m benchmarks.viewers URL COUNT RESULT.json [PAGE]

Each viewer comes from an address of its own (127.0.1.2, 127.0.1.3 ...: a hall's
phones each have one, and the daemon allows a few feeds per address) and does what a
browser showing the page (``PAGE``, default ``/?wall=fit``: the hall's wall screen,
every board at once) does, request for request:

- loads the page once, and every image the page's HTML names by address (``<img
  src="/...">``; a board drawn into the page itself costs no request);
- follows ``/events?state=1`` as the page's script does (every event carries its
  board's whole state);
- per message, fetches what the page's script fetches for it: a page whose script
  loads each board's picture from the daemon (``/board.svg?board=N&seq=S&size=360``,
  as the page did up to this round) has it fetched whenever a board's drawn position
  changes (its ``boardKey``: position, orientation, last move, marked squares), as
  the script's ``swapBoard`` does; a page that draws the boards itself fetches
  nothing. Up to 6 requests at once per viewer, a browser's connections to one host.

On SIGUSR1 every viewer closes its feed and opens it again at once (a Wi-Fi blip: the
page's ``EventSource`` reconnects with ``Last-Event-ID``, and is sent the events it
missed, or, where the daemon cannot tell them, every board's state anew); the moves a
reopened feed's snapshot brings are the viewer's from then.
It notes each board's moves in the order they came. When every viewer's stream is
open it prints ``connected N``; on SIGTERM (or SIGINT) it writes what each viewer had
to RESULT (JSON: a list of ``{"page_ok", "moves": {board: [uci...]}, "error", ...}``
with the page's size and time, the requests and bytes) and ends. Outside the daemon's
CPU group, as the phones are.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp

from benchmarks.alive import event_in, moves_in
from benchmarks.common import ROOT

#: What a browser opens to one host at once (Chromium, Firefox: 6).
BROWSER_CONNECTIONS = 6
#: The page's script fetching each board's picture from the daemon per move.
FETCHES_BOARDS = "/board.svg?board="
#: Seconds before a viewer opens a feed that ended again: the daemon's ``retry:``
#: (``daemon.broadcast.web``), which the page's EventSource waits.
FEED_RETRY = 1.0
IMAGE_SOURCE = re.compile(rb'<img\b[^>]*?\bsrc="(/[^"]+)"')


@dataclass
class Seen:
    """What one viewer had: the page, each board's moves, what it fetched, why it
    stopped early."""

    page_ok: bool = False
    page_bytes: int = 0
    page_seconds: float = 0.0
    moves: dict[str, list[str]] = field(default_factory=dict)
    #: when each move came (CLOCK_MONOTONIC, which the machine's processes share)
    moves_at: dict[str, list[float]] = field(default_factory=dict)
    messages: int = 0
    message_bytes: int = 0
    fetches: int = 0  # requests after the page: its images, then the script's
    fetch_bytes: int = 0
    fetch_errors: int = 0
    reconnects: int = 0  # feeds it opened again (storms, the daemon's restarts)
    error: str = ""


def address(index: int) -> str:
    """The viewer's own loopback address, 127.0.1.2 on (Linux has all of 127/8 here)."""
    return f"127.0.{1 + index // 200}.{2 + index % 200}"


def board_key(state: dict[str, Any]) -> str:
    """As the page's script's ``boardKey``: what a drawn board shows."""
    marked = ",".join((state.get("irregularity") or {}).get("squares") or [])
    last = state.get("last_move") or {}
    return f"{state.get('fen')}|{state.get('orientation')}|{last.get('uci', '')}|{marked}"


class Browser:
    """One viewer's requests beside its feed, at most ``BROWSER_CONNECTIONS`` at once."""

    def __init__(self, session: aiohttp.ClientSession, url: str, seen: Seen) -> None:
        self.session = session
        self.url = url
        self.seen = seen
        self.tasks: set[asyncio.Task[None]] = set()

    def fetch(self, path: str) -> None:
        task = asyncio.create_task(self._fetch(path))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _fetch(self, path: str) -> None:
        try:
            async with self.session.get(self.url + path) as response:
                body = await response.read()
                self.seen.fetches += 1
                self.seen.fetch_bytes += len(body)
                if response.status != 200:
                    self.seen.fetch_errors += 1
        except (aiohttp.ClientError, OSError):
            self.seen.fetch_errors += 1


@dataclass
class Scraped:
    """What the scrapers had: each read's seconds, and the reads that failed."""

    seconds: list[float] = field(default_factory=list)
    failed: int = 0


#: What a scraper reads in turn: what a broadcast site or a relay's page polls.
SCRAPED = ("/state.json", "/game.pgn")


def scraped_path(result: Path) -> Path:
    """Where the crowd's process writes what its scrapers had, beside ``result``."""
    return Path(f"{result}.scraped")


async def scrape(url: str, index: int, count: int, every: float, scraped: Scraped,
                 stop: asyncio.Event) -> None:  # fmt: skip
    """One scraper (its own address, after the viewers'): ``SCRAPED`` in turn, every
    ``every`` seconds, the scrapers spread over that time, until ``stop``."""
    connector = aiohttp.TCPConnector(local_addr=(address(1000 + index), 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every * index / count)
        turn = 0
        while not stop.is_set():
            started = time.monotonic()
            try:
                async with session.get(url + SCRAPED[turn % len(SCRAPED)]) as response:
                    await response.read()
                    scraped.failed += response.status != 200
            except (aiohttp.ClientError, OSError):
                scraped.failed += 1
            scraped.seconds.append(time.monotonic() - started)
            turn += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(0.0, every - (time.monotonic() - started)))


async def view(
    url: str, page: str, index: int, seen: Seen, opened: asyncio.Event, storms: asyncio.Event
) -> None:
    connector = aiohttp.TCPConnector(local_addr=(address(index), 0),
                                     limit_per_host=BROWSER_CONNECTIONS + 1)  # fmt: skip
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)
    try:
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            browser = Browser(session, url, seen)
            started = time.monotonic()
            async with session.get(url + page) as response:
                body = await response.read()
                seen.page_ok = response.status == 200 and b"<html" in body.lower()
            seen.page_seconds = time.monotonic() - started
            seen.page_bytes = len(body)
            for source in IMAGE_SOURCE.findall(body):
                browser.fetch(source.decode())
            fetches_boards = FETCHES_BOARDS.encode() in body
            drawn = drawn_keys(body, page)
            last_id = ""
            while True:  # again after each storm, or the feed's end: as EventSource does
                headers = {"Last-Event-ID": last_id} if last_id else {}
                storm: asyncio.Task[Any] | None = None
                done: set[asyncio.Task[Any]] = set()
                try:
                    async with session.get(url + "/events?state=1", headers=headers) as stream:
                        if stream.status not in (200, 503):  # 503: a daemon still starting
                            seen.error = f"/events answered {stream.status}"
                            return
                        if stream.status == 200:
                            opened.set()
                            reading = asyncio.create_task(
                                _follow(stream, seen, fetches_boards, drawn, browser)
                            )
                            storm = asyncio.create_task(storms.wait())
                            try:
                                done, _ = await asyncio.wait(
                                    {reading, storm}, return_when=asyncio.FIRST_COMPLETED
                                )
                            finally:
                                storm.cancel()
                                reading.cancel()
                            last_id = await reading or last_id
                except (aiohttp.ClientError, OSError):  # the daemon down (restarted)
                    pass
                if storm is None or storm not in done:  # it ended, or never opened: a retry
                    await asyncio.sleep(FEED_RETRY)
                seen.reconnects += 1
    except (aiohttp.ClientError, OSError) as error:
        seen.error = str(error) or type(error).__name__
    finally:
        opened.set()


async def _follow(
    stream: aiohttp.ClientResponse,
    seen: Seen,
    fetches_boards: bool,
    drawn: dict[str, str],
    browser: Browser,
) -> str:
    """Reads the feed until it ends (or is cancelled by a storm); the last event id."""
    last_id = ""
    with contextlib.suppress(asyncio.CancelledError):
        async for raw in stream.content:
            if raw.startswith(b"id:"):
                last_id = raw[3:].strip().decode()
            if not raw.startswith(b"data:"):
                continue
            seen.messages += 1
            seen.message_bytes += len(raw)
            if b'"snapshot"' in raw[:30]:
                with contextlib.suppress(ValueError):
                    _catch_up(seen, json.loads(raw[5:]))
            if not fetches_boards and b'"move"' not in raw:
                continue
            with contextlib.suppress(ValueError):
                message = json.loads(raw[5:])
                for board, uci in moves_in(message):
                    _keep_move(seen, board, uci, _ply(message))
                if fetches_boards:
                    _swap_boards(message, drawn, browser)
    return last_id


def _ply(message: dict[str, Any]) -> int | None:
    """The ply of a move message (an envelope's event, or a bare event)."""
    ply = event_in(message).get("ply")
    return ply if isinstance(ply, int) and ply > 0 else None


def _keep_move(seen: Seen, board: str, uci: str, ply: int | None) -> None:
    """A move as the page shows it, by its ply: one the viewer has already (a restarted
    daemon sends the game's moves again) is not a second move; one that differs
    replaces it and what followed (a correction)."""
    have = seen.moves.setdefault(board, [])
    times = seen.moves_at.setdefault(board, [])
    if ply is not None and ply <= len(have):
        if have[ply - 1] == uci:
            return
        del have[ply - 1 :], times[ply - 1 :]
    have.append(uci)
    times.append(time.monotonic())


def _catch_up(seen: Seen, snapshot: dict[str, Any]) -> None:
    """A reopened feed's snapshot: the moves made while it was closed are the
    viewer's now (the page draws them), as late as the snapshot came."""
    now = time.monotonic()
    for board, state in (snapshot.get("boards") or {}).items():
        moves = [
            str(m["uci"]) for m in state.get("moves") or [] if isinstance(m, dict) and m.get("uci")
        ]
        have = seen.moves.setdefault(board, [])
        if moves[: len(have)] == have:
            for uci in moves[len(have) :]:
                have.append(uci)
                seen.moves_at.setdefault(board, []).append(now)


def drawn_keys(body: bytes, page: str) -> dict[str, str]:
    """The boards the page's HTML already drew, by the key the script compares. A wall
    screen's script lays the cards out anew (the server's grid is not a wall's), and
    the old page's then fetched every board at once."""
    if "wall=" in page or b"data-wall=" in body:
        return {}
    keys = {}
    for card in body.split(b'<a class="card"')[1:]:
        board = re.search(rb'data-board="([^"]+)"', card)
        key = re.search(rb'data-key="([^"]*)"', card)
        if board and key:
            keys[html.unescape(board[1].decode())] = html.unescape(key[1].decode())
    return keys


def _swap_boards(message: dict[str, Any], drawn: dict[str, str], browser: Browser) -> None:
    """The old page's ``swapBoard``: each board whose drawn key changed is fetched."""
    states = message.get("boards") if message.get("kind") == "snapshot" else None
    if states is None and isinstance(message.get("state"), dict):
        states = {str(message.get("board")): message["state"]}
    for board, state in (states or {}).items():
        key = board_key(state)
        if drawn.get(board) != key:
            drawn[board] = key
            browser.fetch(f"/board.svg?board={quote(board)}&seq={state.get('seq')}&size=360")


async def follow(
    url: str,
    seen: list[Seen],
    page: str,
    storms: asyncio.Event,
    stop: asyncio.Event,
    connected: Callable[[int], None] = lambda _: None,
) -> None:
    """A viewer of ``page`` for each of ``seen`` (what it had) until ``stop``; each
    reopens its feed at every ``storms`` set. ``connected`` hears how many follow the
    feed, once all tried."""
    count = len(seen)
    opened = [asyncio.Event() for _ in range(count)]
    tasks = [
        asyncio.create_task(view(url, page, i, seen[i], opened[i], storms)) for i in range(count)
    ]
    await asyncio.gather(*(event.wait() for event in opened))
    connected(sum(not s.error for s in seen))
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def crowd(url: str, count: int, result: Path, page: str = "/?wall=fit",
                scrapers: int = 0, every: float = 1.0) -> None:  # fmt: skip
    """The crowd's process: SIGTERM ends it, SIGUSR1 is a storm (``follow``). Beside
    the viewers, ``scrapers`` poll the daemon (``scrape``); what they had goes to
    ``result`` with a ``.scraped`` suffix added."""
    storms, stop = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)

    def storm() -> None:  # every viewer's feed closed and reopened at once
        storms.set()
        loop.call_soon(storms.clear)

    loop.add_signal_handler(signal.SIGUSR1, storm)
    seen = [Seen() for _ in range(count)]
    scraped = Scraped()
    polling = [asyncio.create_task(scrape(url, i, scrapers, every, scraped, stop))
               for i in range(scrapers)]  # fmt: skip
    await follow(url, seen, page, storms, stop, lambda n: print(f"connected {n}", flush=True))
    await asyncio.gather(*polling, return_exceptions=True)
    result.write_text(json.dumps([asdict(s) for s in seen]))
    if scrapers:
        scraped_path(result).write_text(json.dumps(asdict(scraped)))


class Crowd:
    """The crowd's process, started by the benchmark: ``start`` waits until every
    viewer follows the feed, ``stop`` ends it and returns what each viewer had."""

    def __init__(self, url: str, count: int, work: Path, page: str = "/?wall=fit",
                 scrapers: int = 0, every: float = 1.0) -> None:  # fmt: skip
        self.result = work / f"viewers-{count}.json"
        self.result.unlink(missing_ok=True)
        scraped_path(self.result).unlink(missing_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.viewers", url, str(count), str(self.result), page,
             str(scrapers), str(every)],
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

    def storm(self) -> None:
        """Every viewer's feed closed and reopened at once, as after a Wi-Fi blip: each
        asks for the boards' whole state again (the page's ``/events?state=1``)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGUSR1)

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

    def scraped(self) -> Scraped | None:
        """What the scrapers had (after ``stop``); None without scrapers or a record."""
        try:
            found = json.loads(scraped_path(self.result).read_text())
            return Scraped(**found)
        except (OSError, ValueError, TypeError):
            return None


def page_lags(records: list[dict[str, Any]], shown: dict[str, list[float]]) -> list[float]:
    """Seconds from each move's line on the daemon's feed (``shown``: each board's moves'
    monotonic times, in order) to each viewer having it: the page's own share of a
    move's way (the wait for the card, the writes to the viewers, the network)."""
    lags = []
    for record in records:
        for board, times in (record.get("moves_at") or {}).items():
            lags += [t - at for t, at in zip(times, shown.get(board, []), strict=False)]
    return lags


def describe(records: list[dict[str, Any]]) -> str:
    """The crowd's traffic in one line: the page's size and time, the requests after
    it (images, the script's fetches) and the feed's messages, per viewer."""
    if not records:
        return "no viewer reported"
    count = len(records)
    seconds = sorted(float(r.get("page_seconds") or 0) for r in records)

    def total(key: str) -> float:
        return float(sum(r.get(key) or 0 for r in records))

    return (
        f"the page {total('page_bytes') / count / 1e3:.0f} kB each, loaded in "
        f"{seconds[count // 2]:.2f} s (median) / {seconds[-1]:.2f} s (slowest); "
        f"{total('fetches') / count:.0f} requests after it a viewer "
        f"({total('fetch_bytes') / count / 1e3:.0f} kB, {total('fetch_errors'):.0f} failed "
        f"in all); {total('messages') / count:.0f} feed messages a viewer "
        f"({total('message_bytes') / count / 1e6:.2f} MB)"
        + (f"; {total('reconnects') / count:.1f} reconnections a viewer (storms, restarts)"
           if total("reconnects") else "")
    )  # fmt: skip


def main(argv: list[str]) -> int:
    url, count, result = argv[0].rstrip("/"), int(argv[1]), Path(argv[2])
    page = argv[3] if len(argv) > 3 else "/?wall=fit"
    scrapers, every = (int(argv[4]), float(argv[5])) if len(argv) > 5 else (0, 1.0)
    asyncio.run(crowd(url, count, result, page, scrapers, every))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
