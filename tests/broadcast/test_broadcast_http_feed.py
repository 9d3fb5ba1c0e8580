"""The daemon's own feed over real HTTP on a loopback port."""

from __future__ import annotations

import asyncio
import io
import json
import re

import aiohttp
import chess
import chess.pgn
import pytest
from broadcast_feed import OPERA_GAME, game_feed, moves_only
from broadcast_sse import WAIT, read_sse

from daemon.broadcast import BoardSettings
from daemon.game import events


async def test_sse_live_feed_starts_with_a_snapshot_then_numbered_events(live):
    server = await live()
    feed = game_feed(OPERA_GAME[:4])
    server.publish(feed[:3])
    async with server.session.get(server.url + "/events") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
        first = await read_sse(response)
        assert first.data["kind"] == "snapshot"
        assert first.data["boards"]["1"]["ply"] == 1
        server.publish(feed[3:])
        received = [await read_sse(response) for _ in feed[3:]]
    assert [m.data["event"] for m in received] == feed[3:]
    assert [m.id for m in received] == list(range(4, len(feed) + 1))


async def test_sse_reconnect_with_last_event_id_gets_exactly_what_it_missed(live):
    server = await live()
    feed = game_feed(OPERA_GAME[:6])
    server.publish(feed)
    async with server.session.get(
        server.url + "/events", headers={"Last-Event-ID": "4"}
    ) as response:
        missed = [await read_sse(response) for _ in feed[4:]]
        assert [m.id for m in missed] == list(range(5, len(feed) + 1))
        assert [m.data["event"] for m in missed] == feed[4:]
        later = events.GameEnd(t=999, result="1-0", reason="arbiter").to_dict()
        server.publish([later])
        live_one = await read_sse(response)
    assert live_one.id == len(feed) + 1 and live_one.data["event"] == later


@pytest.mark.parametrize("last_id", ["1", "999"], ids=["older-than-history", "after-restart"])
async def test_sse_resume_the_history_cannot_serve_gets_a_snapshot(live, last_id):
    server = await live(history=5)
    feed = game_feed(OPERA_GAME[:6])
    server.publish(feed)
    async with server.session.get(
        server.url + "/events", headers={"Last-Event-ID": last_id}
    ) as response:
        first = await read_sse(response)
    assert first.data["kind"] == "snapshot"
    state = first.data["boards"]["1"]
    assert [m["uci"] for m in state["moves"]] == OPERA_GAME[:6]


async def test_websocket_feed_and_resumption(live):
    server = await live()
    feed = game_feed(OPERA_GAME[:4])
    server.publish(feed[:5])
    async with server.session.ws_connect(server.url + "/ws?since=2") as ws:
        missed = [json.loads(await ws.receive_str(timeout=WAIT)) for _ in range(3)]
        assert [m["seq"] for m in missed] == [3, 4, 5]
        server.publish(feed[5:])
        rest = [json.loads(await ws.receive_str(timeout=WAIT)) for _ in feed[5:]]
    assert [m["event"] for m in missed + rest] == feed[2:]


async def test_websocket_with_state_carries_the_display_state(live):
    server = await live()
    async with server.session.ws_connect(server.url + "/ws?state=1") as ws:
        snapshot = json.loads(await ws.receive_str(timeout=WAIT))
        assert snapshot["kind"] == "snapshot"
        feed = game_feed(OPERA_GAME[:2])
        server.publish(feed)
        messages = [json.loads(await ws.receive_str(timeout=WAIT)) for _ in feed]
    last = messages[-1]["state"]
    assert [m["figurine"] for m in last["moves"]] == ["e4", "e5"]
    assert last["headers"]["white"] == "Morphy"


async def test_pgn_grows_move_by_move(live):
    server = await live()
    feed = game_feed(OPERA_GAME[:8])
    server.publish(feed[:1])
    played = 0
    for event in feed[1:]:
        server.publish([event])
        played += event["type"] == "move"
        async with server.session.get(server.url + "/game.pgn") as response:
            assert response.status == 200
            text = await response.text()
        game = chess.pgn.read_game(io.StringIO(text))
        assert game is not None
        assert [m.uci() for m in game.mainline_moves()] == OPERA_GAME[:played]
        assert game.headers["White"] == "Morphy" and game.headers["Result"] == "*"
        clocks = [node.clock() for node in game.mainline()]
        assert None not in clocks
    assert played == 8


async def test_several_boards_are_several_games_in_one_file(live):
    server = await live(boards=[BoardSettings(id="1", white="A"), BoardSettings(id="2", white="B")])
    server.publish(game_feed(OPERA_GAME[:3]), board="1")
    server.publish(game_feed(OPERA_GAME[:5]), board="2")
    async with server.session.get(server.url + "/game.pgn") as response:
        stream = io.StringIO(await response.text())
    games = [chess.pgn.read_game(stream) for _ in range(2)]
    assert chess.pgn.read_game(stream) is None
    assert [(g.headers["White"], len(list(g.mainline_moves()))) for g in games if g] == [
        ("A", 3),
        ("B", 5),
    ]
    async with server.session.get(server.url + "/game.pgn?board=2") as response:
        only = chess.pgn.read_game(io.StringIO(await response.text()))
    assert only is not None and only.headers["White"] == "B"
    async with server.session.get(server.url + "/game.pgn?board=../../etc/passwd") as response:
        assert response.status == 404


async def test_state_json_has_position_moves_clocks_irregularity_and_link(live):
    server = await live()
    feed = game_feed(OPERA_GAME[:3])
    server.publish(feed)
    server.publish(
        [
            events.Irregularity(
                t=100, kind="displaced_pieces", article="7.3", by=None, squares=["d2"],
                restore=[{"square": "d2", "piece": "P"}],
            ).to_dict()
        ]
    )  # fmt: skip
    server.broadcaster.set_status("1", connected=True, battery=73.0)
    await asyncio.sleep(0)
    async with server.session.get(server.url + "/state.json") as response:
        state = (await response.json())["boards"]["1"]
    board = chess.Board()
    for uci in OPERA_GAME[:3]:
        board.push_uci(uci)
    assert state["fen"] == board.fen()
    assert [m["san"] for m in state["moves"]] == ["e4", "e5", "Nf3"]
    assert state["clock"]["running"] == "black"
    assert state["clock"]["white"] == moves_only(feed)[-1]["clock"]["white"]
    assert state["irregularity"]["kind"] == "displaced_pieces"
    assert state["status"] == {"connected": True, "battery": 73.0, "detail": ""}
    server.publish([events.PositionRestored(t=101, fen=board.fen()).to_dict()])
    async with server.session.get(server.url + "/state.json") as response:
        assert (await response.json())["boards"]["1"]["irregularity"] is None


async def test_board_svg_marks_the_last_move_and_turns_as_configured(live):
    server = await live(orientation="black")
    server.publish(game_feed(OPERA_GAME[:1]))
    async with server.session.get(server.url + "/board.svg?board=1") as response:
        assert response.content_type == "image/svg+xml"
        svg = await response.text()
    rows = {
        square: int(y)
        for y, square in re.findall(r'<rect x="\d+" y="(\d+)"[^>]*lastmove (\w\d)"', svg)
    }
    assert set(rows) == {"e2", "e4"}
    assert rows["e2"] < rows["e4"], "black at the bottom: the second rank is drawn near the top"


async def test_page_is_self_contained_for_an_offline_hall(live):
    server = await live()
    async with server.session.get(server.url + "/") as response:
        html = await response.text()
    assert response.content_type == "text/html"
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "EventSource" in html


CONTROL_BODY = {"fen": "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"}


async def test_controls_are_disabled_without_a_configured_token(live):
    server = await live()
    async with server.session.post(
        server.url + "/control/set_position", json=CONTROL_BODY,
        headers={"Authorization": "Bearer anything"},
    ) as response:  # fmt: skip
        assert response.status == 403
        assert "broadcast.token" in (await response.json())["error"]
    assert server.requests == []


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"X-DGT-Token": ""}])
async def test_controls_refuse_a_missing_or_wrong_token(live, headers):
    server = await live(token="s3cret")
    async with server.session.post(
        server.url + "/control/set_position", json=CONTROL_BODY, headers=headers
    ) as response:
        assert response.status == 403
        assert "token" in (await response.json())["error"]
    assert server.requests == []


async def test_controls_with_the_token_become_requests_for_the_rules_core(live):
    server = await live(token="s3cret")
    auth = {"Authorization": "Bearer s3cret"}
    async with server.session.post(
        server.url + "/control/set_position", json=CONTROL_BODY, headers=auth
    ) as response:
        assert response.status == 202
    token_header = {"X-DGT-Token": "s3cret"}
    async with server.session.post(
        server.url + "/control/result", json={"result": "1/2-1/2"}, headers=token_header
    ) as response:
        assert response.status == 202
    async with server.session.post(
        server.url + "/say", json={"what": "clock"}, headers=auth
    ) as response:
        assert response.status == 202
    assert [(board, r.action, r.args) for board, r in server.requests] == [
        ("1", "set_position", {"fen": CONTROL_BODY["fen"]}),
        ("1", "result", {"result": "1/2-1/2", "reason": "arbiter"}),
        ("1", "say", {"what": "clock"}),
    ]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/control/set_position", {"fen": "rnbqkbnr/pppppppp/8 w"}),
        ("/control/result", {"result": "2-0"}),
        ("/control/penalty", {"to": "purple"}),
        ("/say", {"what": "weather"}),
    ],
)
async def test_malformed_controls_get_a_clear_400_and_reach_nobody(live, path, body):
    server = await live(token="s3cret")
    async with server.session.post(
        server.url + path, json=body, headers={"Authorization": "Bearer s3cret"}
    ) as response:
        assert response.status == 400
        assert (await response.json())["error"]
    assert server.requests == []


async def test_request_bodies_are_bounded(live):
    server = await live(token="s3cret", max_body=4096)
    huge = {"fen": CONTROL_BODY["fen"], "pad": "x" * 200_000}
    async with server.session.post(
        server.url + "/control/set_position", json=huge, headers={"Authorization": "Bearer s3cret"}
    ) as response:
        assert response.status == 413
    assert server.requests == []


@pytest.mark.parametrize(
    ("boards", "message"),
    [
        ([BoardSettings(id="1"), BoardSettings(id="1")], "twice"),
        ([BoardSettings(id="../x")], "letters, digits"),
        ([BoardSettings(id="1", orientation="sideways")], "orientation"),  # type: ignore[arg-type]
    ],
)
def test_a_bad_board_configuration_names_the_problem(boards, message):
    from daemon.broadcast import Broadcaster, BroadcastSettings

    with pytest.raises(ValueError, match=message):
        Broadcaster(BroadcastSettings(boards=boards))


async def test_an_id_from_before_a_daemon_restart_gets_a_snapshot_not_other_events():
    from daemon.broadcast import Broadcaster, BroadcastSettings

    feed = game_feed(OPERA_GAME[:8])
    settings = BroadcastSettings(address="127.0.0.1", port=0)
    before = Broadcaster(settings)
    for event in feed[:7]:
        before.publish("1", event)
    old_id = before.hub.seq
    await asyncio.sleep(0.05)  # a real restart takes seconds
    after = Broadcaster(settings)  # the restarted daemon replays its journal
    await after.start()
    try:
        for event in feed:
            after.publish("1", event)
        async with (
            aiohttp.ClientSession() as session,
            session.get(
                f"http://127.0.0.1:{after.port}/events", headers={"Last-Event-ID": str(old_id)}
            ) as response,
        ):
            first = await read_sse(response)
    finally:
        await after.stop()
    assert first.data["kind"] == "snapshot"
    assert [m["uci"] for m in first.data["boards"]["1"]["moves"]] == OPERA_GAME[:8]
