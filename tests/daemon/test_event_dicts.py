"""An event's JSON object is what dataclasses.asdict makes of it, containers copied."""

from __future__ import annotations

import enum
import io
import json
from dataclasses import asdict
from typing import Any

from daemon.commands.replay import replay_feed
from daemon.config import load
from daemon.game.events import DomainEvent, Irregularity, Move, from_dict
from drivers.sensorlog import read_events


def asdict_object(event: DomainEvent) -> dict[str, Any]:
    """The feed object as asdict would give it (how to_dict was first written)."""
    rest = asdict(event)
    rest.pop("t")
    return {"t": round(event.t, 6), "type": event.type, **rest}


def test_every_event_of_a_real_game_gives_the_asdict_object(shared) -> None:
    out = io.StringIO()
    with (shared / "data" / "dgt-capture-1" / "sensor-log.jsonl").open(encoding="utf-8") as log:
        replay_feed(read_events(log), load(None, {}), out)
    events = [from_dict(json.loads(line)) for line in out.getvalue().splitlines()]
    assert len(events) > 100
    for event in events:
        made = event.to_dict()
        assert made == asdict_object(event)
        assert list(made) == list(asdict_object(event))  # the feed's key order too


def test_the_containers_are_copies() -> None:
    event = Irregularity(
        t=1.0,
        kind="illegal_move",
        article="7.4",
        by="white",
        squares=["e2", "e4"],
        restore=[{"square": "e2", "piece": "P"}],
    )
    made = event.to_dict()
    made["squares"].append("e5")
    made["restore"][0]["piece"] = None
    assert event.squares == ["e2", "e4"]
    assert event.restore == [{"square": "e2", "piece": "P"}]


class Side(enum.Enum):
    WHITE = "white"


def test_a_value_of_another_kind_goes_through_asdict() -> None:
    clock = {"white": 60.0, "black": Side.WHITE}  # not a plain JSON value
    event = Move(
        t=2.1234567,
        ply=1,
        uci="e2e4",
        san="e4",
        fen="x",
        by="white",
        speech="e4",
        clock=clock,  # type: ignore[arg-type]  # a kind of value the events never hold
    )
    assert event.to_dict() == asdict_object(event)
    assert event.to_dict()["t"] == 2.123457
