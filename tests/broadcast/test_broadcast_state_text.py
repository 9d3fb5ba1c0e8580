"""An event's message with its board's state (``/events?state=1``) is the compact JSON
of the whole, as ``strictjson.dumps`` writes it: the state's text is made once an
event and shared by the viewers and MQTT's retained state (``Hub.state_text``)."""

from __future__ import annotations

import json
import math

from broadcast_feed import OPERA_GAME, game_feed

from daemon.broadcast import BoardSettings, BroadcastSettings, Hub, strictjson


async def test_each_event_with_its_state_is_the_json_of_the_whole():
    hub = Hub(BroadcastSettings(boards=[
        BoardSettings(id="1", white='Anand, "Vishy"', black="Ding Liren 丁立人")]))  # fmt: skip
    with_state = hub.subscribe(with_state=True)
    lean = hub.subscribe()
    feed = game_feed(OPERA_GAME[:6])
    feed.append({"type": "clock", "t": 99.0, "white": math.nan, "black": 1.5, "running": None})
    for event in feed:
        hub.publish("1", event)
    messages = list(with_state.queue)[1:]  # after the snapshot
    assert len(messages) == len(feed) == len(lean.queue) - 1
    for message, plain, event in zip(messages, list(lean.queue)[1:], feed, strict=True):
        whole = json.loads(message.data)
        assert message.data == strictjson.dumps(whole), "compact, as dumps() writes the whole"
        assert list(whole) == ["kind", "seq", "board", "event", "state"]
        assert {k: v for k, v in whole.items() if k != "state"} == json.loads(plain.data)
        assert whole["event"]["type"] == event["type"]
    last = json.loads(messages[-1].data)
    assert last["state"] == json.loads(strictjson.dumps(hub.page_state("1")))
    assert last["state"]["clock"]["white"] is None, "a non-finite number is sent as null"
    assert last["state"]["headers"]["black"] == "Ding Liren 丁立人"
