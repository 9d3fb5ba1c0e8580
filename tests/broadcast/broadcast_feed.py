"""Real event-feed dicts for the broadcast tests, made with ``daemon.game.events``.

The rules core may not exist yet when these tests run, so the feed is built the
way the core builds it: one ``Move`` per half-move of a real game, with the
SAN, the FEN after it and the clocks, all through the domain events'
``to_dict``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import chess

from daemon.broadcast.hub import Message
from daemon.game import events

#: The Opera Game (Morphy v. Duke of Brunswick and Count Isouard, Paris 1858),
#: public domain.
OPERA_GAME = [
    "e2e4",
    "e7e5",
    "g1f3",
    "d7d6",
    "d2d4",
    "c8g4",
    "d4e5",
    "g4f3",
    "d1f3",
    "d6e5",
    "f1c4",
    "g8f6",
    "f3b3",
    "d8e7",
    "b1c3",
    "c7c6",
    "c1g5",
    "b7b5",
    "c3b5",
    "c6b5",
    "c4b5",
    "b8d7",
    "e1c1",
    "a8d8",
    "d1d7",
    "d8d7",
    "h1d1",
    "e7e6",
    "b5d7",
    "f6d7",
    "b3b8",
    "d7b8",
    "d1d8",
]


def game_feed(
    ucis: list[str] | None = None,
    *,
    start: float = 0.0,
    step: float = 10.0,
    base: float = 300.0,
    result: str | None = None,
) -> list[dict[str, Any]]:
    """A game_start, then a clock and a move event per half-move."""
    ucis = OPERA_GAME if ucis is None else ucis
    board = chess.Board()
    feed: list[dict[str, Any]] = [events.GameStart(t=start, fen=board.fen()).to_dict()]
    clocks = {"white": base, "black": base}
    t = start
    for ply, uci in enumerate(ucis, start=1):
        move = chess.Move.from_uci(uci)
        by = "white" if board.turn == chess.WHITE else "black"
        san = board.san(move)
        board.push(move)
        t += step
        clocks[by] -= step - 0.4 * (ply % 3)
        feed.append(
            events.Move(
                t=t,
                ply=ply,
                uci=uci,
                san=san,
                fen=board.fen(),
                by=by,
                speech=san,
                clock=dict(clocks),
            ).to_dict()
        )
        running = "black" if by == "white" else "white"
        feed.append(
            events.ClockUpdate(
                t=t + 0.01, white=clocks["white"], black=clocks["black"], running=running
            ).to_dict()
        )
    if result:
        feed.append(events.GameEnd(t=t + 1, result=result, reason="checkmate").to_dict())
    return feed


def moves_only(feed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in feed if e["type"] == "move"]


class PageView:
    """What the live page makes of the feed's messages (``page.py``'s ``onMessage``),
    and the last id its ``EventSource`` saw (what it resumes with)."""

    def __init__(self) -> None:
        self.states: dict[str, dict[str, Any]] = {}
        self.problem: str | None = None
        self.last_id: int | None = None

    def read(self, msg: dict[str, Any], message_id: int | None) -> None:
        if message_id is not None:
            self.last_id = message_id
        if msg["kind"] == "snapshot":
            self.problem = msg["source_problem"]
            self.states = dict(msg["boards"])
        elif msg["kind"] == "event" and "state" in msg:
            self.states[msg["board"]] = msg["state"]
        elif msg["kind"] == "source":
            self.problem = msg["problem"]
        elif msg["kind"] == "status" and msg["board"] in self.states:
            self.states[msg["board"]] = {**self.states[msg["board"]], "status": msg["status"]}

    def read_all(self, messages: Iterable[Message]) -> None:
        for message in messages:
            self.read(json.loads(message.data), message.seq)
