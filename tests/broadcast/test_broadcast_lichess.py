"""Pushing the round to lichess, against a local server implementing lichess's
documented endpoint (POST /api/broadcast/round/{id}/push, Bearer token, PGN
body, {"games": [...]} answer), with faults: a 500, a dropped connection, a
429, a wrong token."""

from __future__ import annotations

import asyncio
import io
import time

import chess.pgn
from aiohttp import web
from broadcast_feed import OPERA_GAME, game_feed
from mqtt_helpers import wait_until
from pgn_check import validated_games

from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings, LichessSettings
from daemon.broadcast.lichess import LichessPusher

ROUND_ID = "AbCd1234"
TOKEN = "lip_test_token"


class FakeLichess:
    """The push endpoint as lichess documents it, and a script of faults."""

    def __init__(self, faults: list[str] | None = None) -> None:
        self.faults = list(faults or [])
        self.attempts: list[float] = []  # monotonic time of every request
        self.accepted: list[str] = []  # the PGN bodies taken
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def push(self, request: web.Request) -> web.StreamResponse:
        self.attempts.append(time.monotonic())
        if request.match_info["round"] != ROUND_ID:
            return web.json_response({"error": "Not found"}, status=404)
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return web.json_response({"error": "No such token"}, status=401)
        fault = self.faults.pop(0) if self.faults else None
        if fault == "500":
            return web.Response(status=500, text="oops")
        if fault == "drop":
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)
        if fault == "429":
            return web.json_response({"error": "Too many requests"}, status=429)
        body = await request.text()
        assert request.content_type == "text/plain"
        games = []
        handle = io.StringIO(body)
        while (game := chess.pgn.read_game(handle)) is not None:
            tags = dict(game.headers)
            if "?" in (tags.get("White"), tags.get("Black")):
                games.append({"tags": tags, "error": "Missing player names"})
            else:
                games.append({"tags": tags, "moves": len(list(game.mainline_moves()))})
        self.accepted.append(body)
        return web.json_response({"games": games})

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/api/broadcast/round/{round}/push", self.push)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _settings(lichess: FakeLichess, **overrides) -> BroadcastSettings:
    return BroadcastSettings(
        enabled=False, event="Club Open 2026", round="3",
        boards=[BoardSettings(id="1", white="Morphy", black="Duke"),
                BoardSettings(id="2")],  # names unknown at board 2
        lichess=LichessSettings(enabled=True, round_id=ROUND_ID, token=TOKEN,
                                url=lichess.url, interval=0.4, max_backoff=0.5,
                                **overrides),
    )  # fmt: skip


async def _until(condition, timeout: float = 20.0) -> bool:
    return await asyncio.to_thread(wait_until, condition, timeout)


async def test_the_round_reaches_lichess_through_faults_and_rate_limits():
    lichess = FakeLichess(faults=["500", "drop", "429"])
    await lichess.start()
    broadcaster = Broadcaster(_settings(lichess))
    await broadcaster.start()
    pusher: LichessPusher = broadcaster.lichess
    pusher.rate_limit_pause = 1.0  # lichess asks a minute; the test a second
    try:
        feeds = {"1": game_feed(OPERA_GAME, result="1-0"), "2": game_feed(OPERA_GAME[:6])}
        for board, feed in feeds.items():
            for event in feed:  # a whole game at once: a handful of pushes, not hundreds
                broadcaster.publish(board, event)
        assert await _until(lambda: lichess.accepted and "1-0" in lichess.accepted[-1]
                            and pusher.pushed == lichess.accepted[-1])  # fmt: skip
        games = validated_games(lichess.accepted[-1], 2)
        assert [g.headers["Board"] for g in games] == ["1", "2"]
        assert [(g.headers["White"], g.headers["Black"]) for g in games] == [
            ("Morphy", "Duke"), ("Board 2 White", "Board 2 Black")], "never '?'"  # fmt: skip
        assert {g.headers["Event"] for g in games} == {"Club Open 2026"}
        assert {g.headers["Round"] for g in games} == {"3"}
        assert games[0].headers["Result"] == "1-0"
        assert len(list(games[0].mainline_moves())) == len(OPERA_GAME)
        assert "[%clk" in lichess.accepted[-1], "clock times for lichess's clocks"

        gaps = [b - a for a, b in zip(lichess.attempts, lichess.attempts[1:], strict=False)]
        assert all(gap >= 0.4 - 0.05 for gap in gaps), f"faster than the interval: {gaps}"
        assert gaps[2] >= 1.0 - 0.05, "a 429 is followed by the rate-limit pause"
        assert len(lichess.attempts) <= 8, "one push per change at most, not one per event"
        assert pusher.failures == 3 and pusher.status()["up_to_date"]

        # Nothing changes: nothing is pushed. A clock tick changes no PGN either.
        before = len(lichess.attempts)
        broadcaster.publish("2", {"type": "clock", "t": 999.0, "white": 200.0, "black": 190.0,
                                  "running": "white"})  # fmt: skip
        await asyncio.sleep(1.0)
        assert len(lichess.attempts) == before
        # Names set mid-round reach lichess with the next push.
        broadcaster.hub.set_players("2", white="Anderssen", black="Kieseritzky")
        broadcaster.hub.changed("2")
        assert await _until(lambda: "Kieseritzky" in lichess.accepted[-1])
    finally:
        await broadcaster.stop()
        await lichess.stop()


async def test_clock_ticks_do_not_make_the_round_s_pgn_again(monkeypatch):
    """A hall's clocks tick many times a second between moves: the pusher must not
    make every board's PGN again for each tick (it did, whenever the round had not
    changed since the last push)."""
    from daemon.broadcast import lichess as lichess_module

    made: list[float] = []
    real = lichess_module.round_pgn
    monkeypatch.setattr(lichess_module, "round_pgn",
                        lambda hub: made.append(time.monotonic()) or real(hub))  # fmt: skip
    lichess = FakeLichess()
    await lichess.start()
    broadcaster = Broadcaster(_settings(lichess))
    await broadcaster.start()
    try:
        for event in game_feed(OPERA_GAME[:2]):
            broadcaster.publish("1", event)
        assert await _until(lambda: lichess.accepted and " e5 " in lichess.accepted[-1]
                            and broadcaster.lichess.pushed == lichess.accepted[-1])  # fmt: skip
        await asyncio.sleep(0.5)  # past the interval: the pusher waits for news
        before = len(made)
        for tick in range(40):
            broadcaster.publish(
                str(1 + tick % 2),
                {
                    "type": "clock",
                    "t": 100.0 + tick,
                    "white": 200.0 - tick,
                    "black": 190.0,
                    "running": "white",
                },
            )
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)
        assert len(made) == before, f"{len(made) - before} round PGNs made for 40 clock ticks"
        for event in game_feed(OPERA_GAME[:3])[-2:]:  # a move: pushed
            broadcaster.publish("1", event)
        assert await _until(lambda: " Nf3 " in lichess.accepted[-1])
    finally:
        await broadcaster.stop()
        await lichess.stop()


async def test_a_wrong_token_is_said_plainly_and_retried_slowly(caplog):
    lichess = FakeLichess()
    await lichess.start()
    settings = _settings(lichess)
    settings.lichess.token = "lip_wrong"
    broadcaster = Broadcaster(settings)
    await broadcaster.start()
    try:
        broadcaster.publish("1", game_feed(OPERA_GAME[:2])[0])
        assert await _until(lambda: len(lichess.attempts) >= 2, 10)
        status = broadcaster.lichess.status()
        assert "refused the token (401)" in status["last_error"]
        assert not lichess.accepted and not status["up_to_date"]
        said = [r.message for r in caplog.records if "refused the token" in r.message]
        assert len(said) == 1, "said once, not at every retry"
    finally:
        await broadcaster.stop()
        await lichess.stop()


async def test_settings_that_cannot_push_are_refused_at_start(caplog):
    unusable = LichessSettings(enabled=True, round_id="short", token="x")
    broadcaster = Broadcaster(BroadcastSettings(enabled=False, lichess=unusable))
    await broadcaster.start()
    try:
        assert broadcaster.lichess is None
        assert any("LICHESS PUSH NOT AVAILABLE" in r.message and "8-character" in r.message
                   for r in caplog.records)  # fmt: skip
    finally:
        await broadcaster.stop()


def test_the_relay_command_takes_the_lichess_round_and_its_token_from_a_file(tmp_path):
    import argparse

    from daemon.commands import relay as command

    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    (tmp_path / "token").write_text(f"{TOKEN}\n")
    token_file = str(tmp_path / "token")
    args = parser.parse_args(
        ["relay", "--tournament", "t", "--round", "3", "--lichess-round", ROUND_ID,
         "--lichess-token-file", token_file]
    )  # fmt: skip
    settings = command._lichess_settings(args)
    assert (settings.round_id, settings.token, settings.enabled) == (ROUND_ID, TOKEN, True)
    args = parser.parse_args(["relay", "--tournament", "t", "--round", "3"])
    assert command._lichess_settings(args) is None, "no push unless asked"


async def test_a_relays_first_push_holds_every_board_heard_as_the_round_settles():
    """A relay hears its boards one by one as it starts; its first push waits for
    the round to settle, so lichess's first push (which makes its chapters) holds
    all of them, not the one board that moved first (1 game of 12)."""
    from daemon.broadcast.hub import Hub
    from daemon.broadcast.lichess import RELAY_SETTLE
    from daemon.broadcast.mqtt import HEARTBEAT
    from daemon.broadcast.relay import Relay

    lichess = FakeLichess()
    await lichess.start()
    settings = LichessSettings(enabled=True, round_id=ROUND_ID, token=TOKEN, url=lichess.url,
                               interval=0.2, max_backoff=0.5)  # fmt: skip
    hub = Hub(BroadcastSettings(enabled=False, event="Club Open 2026", round="3"))
    hub.bind_loop(asyncio.get_running_loop())
    pusher = LichessPusher(hub, settings, settle=1.0)
    pusher.start()
    try:
        for board in ("1", "2", "3"):  # one board heard every 0.3 s
            for event in game_feed(OPERA_GAME[:4]):
                hub.publish(board, event)
            await asyncio.sleep(0.3)
        assert await _until(lambda: bool(lichess.accepted), 5)
        first = validated_games(lichess.accepted[0], 3)
        assert [g.headers["Board"] for g in first] == ["1", "2", "3"]
        assert len(lichess.attempts) == 1
    finally:
        await pusher.stop()
        await lichess.stop()
    relay = Relay("127.0.0.1", 1, "t", "3", lichess=settings)
    assert relay.lichess is not None and relay.lichess.settle == RELAY_SETTLE > HEARTBEAT
