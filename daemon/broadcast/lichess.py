"""Pushing a round's live PGN to a lichess broadcast round.

Lichess fetches a broadcast's "source URL" only from its own servers, so a Pi
on a hall's LAN cannot be polled; it has to push. Lichess documents the push
endpoint: ``POST /api/broadcast/round/{roundId}/push`` with an OAuth token of
scope ``study:write`` as ``Authorization: Bearer``, the round's games as one
multi-game PGN in a ``text/plain`` body; it answers ``{"games": [...]}``, one
entry per game with its ``tags`` and either ``moves`` or an ``error``.

What the pusher guarantees:

- **Games lichess can match.** Lichess matches a pushed game to its chapter by
  its Event and Round tags and its players (FIDE ids, else the White and Black
  names), so every board's game is sent with the names set (a board whose names
  are unknown is "Board N White" / "Board N Black", never "?", which would make
  all such boards one game), Event and Round from the tournament, and a Board
  tag (lichess orders boards by it). At most ``MAX_GAMES`` games a push.
- **Rate limits respected.** One request at a time, at most one every
  ``interval`` seconds (lichess itself throttles a round's pushes to one every
  few seconds), only when the PGN changed (a clock tick changes no PGN); after
  a 429, a full minute's pause, as lichess's API documentation asks.
- **Retries after faults.** A network error, a time-out or a 5xx is retried
  with a growing pause (2, 4, 8... up to ``max_backoff`` seconds), always with
  the latest PGN; a refused token (401/403) or an unknown round (404) is said
  plainly in the log and retried only every ``max_backoff`` seconds.

- **The whole round in the first push.** A relay hears a round's boards one by
  one as it starts (each daemon's retained game counts once the board says it is
  live, within its heartbeat), and lichess makes a chapter of each game the first
  push brings, in its order: pushed at once, the first push held the one board
  that had moved (1 game of 12). A relay's pusher lets the round ``settle`` first
  (``RELAY_SETTLE``), so every running board is in it; the daemon's own boards
  are all there from the start and push at once.

The hub calls ``on_feed`` on the event loop; the pusher's own task does the
HTTP, so the rules core never waits for lichess.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import aiohttp

from daemon.broadcast.hub import Hub
from daemon.broadcast.settings import LichessSettings
from daemon.game.record import GameHeaders

log = logging.getLogger(__name__)

#: Games lichess takes in one round (a broadcast round holds 64 chapters).
MAX_GAMES = 64
#: The pause after a 429 (lichess: "wait a full minute before resuming").
RATE_LIMIT_PAUSE = 60.0
#: Seconds a relay waits after its start before its first push: every running
#: board's daemon says it is live at least every ``mqtt.HEARTBEAT`` (10 s), and
#: its game counts from then on; two more for the broker and the messages.
RELAY_SETTLE = 12.0


def lichess_names(hub: Hub, board_id: str) -> GameHeaders:
    """The board's headers as lichess needs them to match the game: both names
    set, never "?", and the Board tag."""
    headers = hub.boards[board_id].record.headers
    unknown = ("", "?")
    return GameHeaders(
        event=headers.event,
        site=headers.site,
        date=headers.date,
        round=headers.round,
        white=headers.white if headers.white not in unknown else f"Board {board_id} White",
        black=headers.black if headers.black not in unknown else f"Board {board_id} Black",
        extra={**headers.extra, "Board": board_id},
    )


def round_pgn(hub: Hub) -> str:
    """Every board's game as lichess gets it, in board order."""
    boards = hub.board_ids()
    if len(boards) > MAX_GAMES:
        log.error("lichess takes %d games a round: boards after %s are not pushed",
                  MAX_GAMES, boards[MAX_GAMES - 1])  # fmt: skip
    return "\n".join(
        hub.boards[board].record.pgn(lichess_names(hub, board)) for board in boards[:MAX_GAMES]
    )


class LichessPusher:
    """Pushes the hub's round to one lichess broadcast round; ``start`` on the
    hub's event loop."""

    def __init__(self, hub: Hub, settings: LichessSettings, *, settle: float = 0.0) -> None:
        self.hub = hub
        self.settings = settings
        self.settle = settle  # seconds after the start before the first push
        self.endpoint = f"{settings.url.rstrip('/')}/api/broadcast/round/{settings.round_id}/push"
        self.rate_limit_pause = RATE_LIMIT_PAUSE
        self.pushed: str | None = None  # the PGN lichess last took
        self.pushes = 0  # successful pushes
        self.failures = 0  # failed attempts (each retried)
        self.last_error = ""
        self.game_errors: list[str] = []  # what lichess said about games of the last push
        self._wake = asyncio.Event()
        #: what each board's PGN was made of when the round's was last made
        self._made_of: dict[str, tuple[Any, ...]] = {}
        self._task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None

    # -- life cycle -------------------------------------------------------------

    def start(self) -> None:
        problem = self.settings.problem()
        if problem:
            raise ValueError(problem)
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.settings.timeout),
            headers={"User-Agent": "dgt-bridge (live broadcast push)"},
        )
        self.hub.listeners.append(self.on_feed)
        self._task = asyncio.get_running_loop().create_task(self._run())
        self._wake.set()  # push what there is already

    async def stop(self) -> None:
        if self.on_feed in self.hub.listeners:
            self.hub.listeners.remove(self.on_feed)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    def status(self) -> dict[str, Any]:
        return {
            "round_id": self.settings.round_id,
            "pushes": self.pushes,
            "failures": self.failures,
            "up_to_date": self.pushed is not None and self.pushed == round_pgn(self.hub),
            "last_error": self.last_error or None,
            "game_errors": list(self.game_errors),
        }

    # -- the event loop -----------------------------------------------------------

    def on_feed(
        self,
        board_id: str,
        seq: int,
        event: dict[str, Any],
        state: Callable[[], dict[str, Any]],
    ) -> None:
        # Only a board's PGN changed since the round's was made wakes the pusher
        # (``GameRecord.pgn_key``, as MQTT's retained PGN): each wake made the whole
        # round's PGN again, and a hall's clocks tick some 20 times a second between
        # its moves (issue 28: a fifth of a Pi 4 core as 26 boards' games began).
        feed = self.hub.boards.get(board_id)
        if feed is not None and self._made_of.get(board_id) != feed.record.pgn_key():
            self._wake.set()  # cheap: the PGN is made at most once an interval

    async def _run(self) -> None:
        backoff = 0.0
        last_attempt = -float("inf")
        if self.settle > 0:  # the round's boards arrive first (a relay's start)
            await asyncio.sleep(self.settle)
        while True:
            await self._wake.wait()
            self._wake.clear()
            pause = max(backoff, last_attempt + self.settings.interval - time.monotonic())
            if pause > 0:
                await asyncio.sleep(pause)
            self._made_of = {
                board: feed.record.pgn_key() for board, feed in self.hub.boards.items()
            }
            pgn = round_pgn(self.hub)
            if pgn == self.pushed or not pgn:
                backoff = 0.0
                continue
            last_attempt = time.monotonic()
            outcome = await self._push(pgn)
            if outcome == "ok":
                backoff = 0.0
                continue
            self._wake.set()  # try again (with the latest PGN) after the pause
            if outcome == "rate_limited":
                backoff = self.rate_limit_pause
            elif outcome == "refused":
                backoff = self.settings.max_backoff
            else:
                backoff = min(self.settings.max_backoff, max(2.0, backoff * 2))

    async def _push(self, pgn: str) -> str:
        """One request: "ok", "rate_limited", "refused" (token, round) or "fault"."""
        assert self._session is not None
        headers = {
            "Authorization": f"Bearer {self.settings.token}",
            "Content-Type": "text/plain; charset=utf-8",
        }
        try:
            async with self._session.post(
                self.endpoint, data=pgn.encode(), headers=headers
            ) as response:
                body = await response.text()
                status = response.status
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            return self._failed(
                "fault", f"lichess could not be reached: {exc or type(exc).__name__}"
            )
        if status == 429:
            return self._failed("rate_limited", "lichess asked us to slow down (429): pausing")
        if status in (401, 403):
            return self._failed(
                "refused",
                f"lichess refused the token ({status}): it needs the study:write scope, "
                "of an account that contributes to the broadcast",
            )
        if status == 404:
            return self._failed(
                "refused", f"lichess knows no broadcast round {self.settings.round_id!r} (404)"
            )
        if status != 200:
            return self._failed("fault", f"lichess answered {status}: {body[:200]}")
        self.pushed = pgn
        self.pushes += 1
        self.last_error = ""
        self.game_errors = self._game_errors(body)
        for error in self.game_errors:
            log.warning("lichess did not take a game: %s", error)
        return "ok"

    def _failed(self, outcome: str, message: str) -> str:
        self.failures += 1
        if message != self.last_error:  # said once, not at every retry
            log.warning("lichess push: %s", message)
        self.last_error = message
        return outcome

    @staticmethod
    def _game_errors(body: str) -> list[str]:
        try:
            games = json.loads(body).get("games") or []
        except (ValueError, AttributeError):
            return []
        errors = []
        for game in games:
            if isinstance(game, dict) and game.get("error"):
                tags = game.get("tags") or {}
                errors.append(f"{tags.get('White', '?')} - {tags.get('Black', '?')} "
                              f"(board {tags.get('Board', '?')}): {game['error']}")  # fmt: skip
        return errors
