"""A local stand-in for lichess's broadcast push endpoint, for the hall benchmark
(``benchmarks.pihall``): the daemon's ``broadcast.lichess`` pushes the round to it
as it would to lichess.org.

It answers as lichess documents the endpoint (``POST /api/broadcast/round/{id}/push``,
a Bearer token, the round's PGN as text; ``{"games": [...]}`` back) and keeps the
last PGN it took, which the features-alive check reads (``alive.lichess_check``).
It runs on a thread of the benchmark's process, outside the daemon's CPU group, as
lichess is another machine. Written from lichess's API documentation, like the
endpoint of ``tests/broadcast/test_broadcast_lichess.py`` (benchmarks never import
the tests).
"""

from __future__ import annotations

import asyncio
import threading

from aiohttp import web

ROUND_ID = "Hall2026"
TOKEN = "lip_benchmark_hall"


class LichessPoint:
    """The endpoint on 127.0.0.1 (``url``), started by ``start``; ``pushes`` taken,
    ``last`` the last PGN taken, ``refused`` requests it turned away."""

    def __init__(self) -> None:
        self.pushes = 0
        self.refused = 0
        self.last = ""
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def settings(self) -> dict[str, object]:
        """The daemon's ``broadcast.lichess`` keys that push here."""
        return {"enabled": True, "round_id": ROUND_ID, "token": TOKEN, "url": self.url}

    async def _push(self, request: web.Request) -> web.Response:
        if request.match_info["round"] != ROUND_ID:
            self.refused += 1
            return web.json_response({"error": "Not found"}, status=404)
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            self.refused += 1
            return web.json_response({"error": "No such token"}, status=401)
        self.last = await request.text()
        self.pushes += 1
        return web.json_response({"games": []})

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/api/broadcast/round/{round}/push", self._push)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        sockets = getattr(site._server, "sockets", None)
        assert sockets, "the endpoint did not listen"
        self.port = int(sockets[0].getsockname()[1])

    def start(self) -> LichessPoint:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(30)
        return self

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
