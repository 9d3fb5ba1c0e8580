"""Every control body is checked against its schema, and every JSON the server
sends is strict JSON, on the real server over loopback."""

from __future__ import annotations

import json
import math

import pytest
from broadcast_feed import OPERA_GAME, game_feed

from daemon.game import events

AUTH = {"Authorization": "Bearer s3cret", "Content-Type": "application/json"}


def strict_loads(text: str):
    """What a browser's JSON.parse accepts: no NaN, no Infinity."""

    def refuse(constant: str):
        raise AssertionError(f"{constant} is not JSON; a browser's JSON.parse throws")

    return json.loads(text, parse_constant=refuse)


async def post(server, path: str, body: str | bytes, headers=AUTH):
    async with server.session.post(server.url + path, data=body, headers=headers) as response:
        return response.status, await response.text()


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e308", "1e999", "0",
                                    "-5", "0.5", "3601", "true", '"120"'])  # fmt: skip
async def test_a_penalty_must_be_a_finite_number_between_1_s_and_1_hour(live, number):
    server = await live(token="s3cret")
    server.publish(game_feed(OPERA_GAME[:2]))
    status, text = await post(server, "/control/penalty", f'{{"to": "white", "seconds": {number}}}')
    assert status == 400, text
    reply = strict_loads(text)
    assert reply["field"] == "seconds" and "seconds" in reply["error"]
    assert server.requests == []


async def test_a_sane_penalty_is_handed_to_the_rules_core(live):
    server = await live(token="s3cret")
    server.publish(game_feed(OPERA_GAME[:2]))
    status, _ = await post(server, "/control/penalty",
                           '{"to": "black", "seconds": 120, "article": "7.5.5"}')  # fmt: skip
    assert status == 202
    assert [r.args for _, r in server.requests] == [
        {"to": "black", "seconds": 120.0, "article": "7.5.5"}
    ]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/control/penalty", {"to": "purple"}, "to"),
        ("/control/penalty", {"to": "white", "article": "99.9"}, "article"),
        ("/control/penalty", {"to": "white", "article": ["7.4b"]}, "article"),
        ("/control/penalty", {"to": "white", "secnods": 60}, "secnods"),
        ("/control/result", {"result": "1-0", "reason": "x" * 61}, "reason"),
        ("/control/result", {"result": 1}, "result"),
        ("/control/new_game", {"fen": 7}, "fen"),
        ("/control/new_game", {"chess960": "yes"}, "chess960"),
        ("/control/set_position", {}, "fen"),
        ("/control/correct_last_move", {"uci": "e2e4e5"}, "uci"),
        ("/say", {"what": "square", "square": "z9"}, "square"),
        ("/say", {"what": "piece"}, "piece"),
    ],
)
async def test_a_bad_field_gets_400_naming_it(live, path, body, field):
    server = await live(token="s3cret")
    server.publish(game_feed(OPERA_GAME[:2]))
    status, text = await post(server, path, json.dumps(body))
    assert status == 400
    assert strict_loads(text)["field"] == field
    assert field in strict_loads(text)["error"]
    assert server.requests == []


@pytest.mark.parametrize(
    "body",
    ["[" * 5000 + "]" * 5000, '{"a":' * 1500 + "1" + "}" * 1500, "{'to': 'white'}",
     "\xff\xfe", '{"to": "white"', "[1, 2]", '"white"'],
    ids=["10k-nested-arrays", "nested-objects", "python-repr", "not-utf8", "torn",
         "array", "string"],
)  # fmt: skip
async def test_a_body_that_is_not_a_flat_json_object_gets_400_not_500(live, body):
    server = await live(token="s3cret")
    status, text = await post(server, "/control/penalty", body.encode("latin-1"))
    assert status == 400, text
    assert "Traceback" not in text and strict_loads(text)["error"]
    assert server.requests == []


async def test_no_penalty_after_the_end_unless_the_arbiter_says_so(live):
    server = await live(token="s3cret")
    server.publish(game_feed(OPERA_GAME[:2]))
    server.publish([events.GameEnd(t=50.0, result="1-0", reason="resignation").to_dict()])
    status, text = await post(server, "/control/penalty", '{"to": "white", "seconds": 60}')
    assert status == 409
    assert strict_loads(text)["field"] == "after_end" and "1-0" in strict_loads(text)["error"]
    assert server.requests == []
    status, _ = await post(server, "/control/penalty",
                           '{"to": "white", "seconds": 60, "after_end": true}')  # fmt: skip
    assert status == 202 and server.requests[0][1].args["after_end"] is True


async def test_no_takeback_before_the_first_move(live):
    server = await live(token="s3cret")
    status, text = await post(server, "/control/takeback", "{}")
    assert status == 409 and "no move" in strict_loads(text)["error"]


async def test_state_json_and_the_sse_snapshot_never_carry_nan(live):
    """Whatever gets into the feed (here a penalty of NaN seconds and a battery of
    infinity, as an older daemon produced), viewers get strict JSON."""
    server = await live()
    server.publish(game_feed(OPERA_GAME[:2]))
    server.publish([events.Penalty(t=9.0, to="white", seconds=math.nan, article="7.4b").to_dict()])
    server.broadcaster.set_status("1", battery=math.inf)
    async with server.session.get(server.url + "/state.json") as response:
        state = strict_loads(await response.text())["boards"]["1"]
    assert state["penalties"][0]["seconds"] is None
    assert state["status"]["battery"] is None
    async with server.session.get(server.url + "/events?state=1") as response:
        line = b""
        while not line.startswith(b"data:"):
            line = await response.content.readline()
    snapshot = strict_loads(line[5:].decode())
    assert snapshot["kind"] == "snapshot"
    assert snapshot["boards"]["1"]["penalties"][0]["seconds"] is None


async def test_mqtt_payloads_are_strict_json_too(broker):
    """The broker is an edge as well: a NaN published there blanked the relay's page."""
    import asyncio
    import uuid

    from mqtt_helpers import Recorder, wait_until

    from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings, MqttSettings

    tournament = f"nan-{uuid.uuid4().hex[:6]}"
    recorder = await asyncio.to_thread(Recorder, broker.port, f"dgt-bridge/{tournament}/#")
    settings = BroadcastSettings(
        enabled=False, round="1", boards=[BoardSettings(id="1")],
        mqtt=MqttSettings(enabled=True, host="127.0.0.1", port=broker.port,
                          tournament=tournament),
    )  # fmt: skip
    broadcaster = Broadcaster(settings)
    await broadcaster.start()
    try:
        assert await asyncio.to_thread(wait_until, lambda: broadcaster.mqtt[0].connected, 30)
        broadcaster.publish("1", game_feed(OPERA_GAME[:1])[0])
        broadcaster.publish(
            "1", events.Penalty(t=9.0, to="white", seconds=math.nan, article="7.4b").to_dict()
        )
        broadcaster.set_status("1", battery=math.inf)
        assert await asyncio.to_thread(
            wait_until, lambda: len(recorder.on("/events")) >= 2 and recorder.on("/status"), 30
        )
        await asyncio.sleep(0.5)  # the state and status after the last change
        for _topic, payload, _ in recorder.messages:
            if payload[:1] == b"{":
                strict_loads(payload.decode())
    finally:
        await broadcaster.stop()
        recorder.close()


START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/control/penalty", {"to": "white", "article": "7.4b\n"}, "article"),
        ("/control/penalty", {"to": "white", "article": " 7.4b"}, "article"),
        ("/control/penalty", {"to": "white", "article": "7.4b "}, "article"),
        ("/control/new_game", {"fen": START + "\n"}, "fen"),
        ("/control/set_position", {"fen": START.replace(" w ", "  w ")}, "fen"),
        ("/control/set_position", {"fen": START.replace(" ", "\t")}, "fen"),
        ("/control/set_position", {"fen": " " + START}, "fen"),
        ("/control/correct_last_move", {"uci": "0000"}, "uci"),
        ("/control/correct_last_move", {"uci": "P@e4"}, "uci"),
        ("/control/correct_last_move", {"uci": "E2E4"}, "uci"),
        ("/control/result", {"result": "1-0", "reason": "arbiter "}, "reason"),
        ("/control/players", {"white": " Morphy"}, "white"),
        ("/control/players", {"round": "3 "}, "round"),
        ("/say", {"what": "square", "square": "E4"}, "square"),
    ],
    ids=lambda v: repr(v) if isinstance(v, str) and not v.startswith("/") else None,
)
async def test_no_field_takes_whitespace_or_a_near_miss(live, path, body, field):
    """What python-chess or a loose regular expression let through: a newline after
    an article (``$`` matches before it), a FEN with a newline or doubled spaces
    (python-chess splits on any whitespace), a null move or a drop as a move."""
    server = await live(token="s3cret")
    server.publish(game_feed(OPERA_GAME[:2]))
    status, text = await post(server, path, json.dumps(body))
    assert status == 400, text
    assert strict_loads(text)["field"] == field
    assert server.requests == []


async def test_a_field_given_twice_is_refused(live):
    server = await live(token="s3cret")
    server.publish(game_feed(OPERA_GAME[:2]))
    status, text = await post(server, "/control/penalty", '{"to": "white", "to": "black"}')
    assert status == 400 and "twice" in strict_loads(text)["error"], text
    assert strict_loads(text)["field"] == "to"
    assert server.requests == []
    status, _ = await post(server, "/control/penalty", '{"to": "black", "article": "7.4b"}')
    assert status == 202 and server.requests[0][1].args["article"] == "7.4b"


async def test_a_board_named_many_times_is_served_once(live):
    """``?board=1,1,1,...`` had the game made once per mention: 4,000 PGNs (and
    states) for one request line."""
    server = await live()
    server.publish(game_feed(OPERA_GAME))
    many = ",".join(["1"] * 4000)
    async with server.session.get(server.url + "/game.pgn?board=" + many) as response:
        assert response.status == 200
        assert (await response.text()).count("[Event ") == 1
    async with server.session.get(server.url + "/state.json?board=" + many) as response:
        assert list((await response.json())["boards"]) == ["1"]
    async with server.session.get(server.url + "/game.pgn?board=" + "x" * 4000) as response:
        assert response.status == 404 and len(await response.read()) < 200
