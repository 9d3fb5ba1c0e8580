"""The web app's viewers get the events of a moment in one write (issue 28: a hall's
clocks and moves made some 40 events a second, and a write to each of 100 viewers
for each was half of a Pi 4's core), in the feed's order, each event once."""

from __future__ import annotations

import asyncio
import json

from broadcast_feed import OPERA_GAME, game_feed

from daemon.broadcast import BoardSettings, BroadcastSettings, Hub
from daemon.broadcast.hub import WRITE_EVERY, Message
from daemon.broadcast.viewers import SSE_PLAIN
from daemon.clock.ticks import RESYNC


class Screen:
    """A viewer's connection as the hub sees it: each write it was given."""

    encode = staticmethod(SSE_PLAIN)

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def send(self, message: Message) -> bool:
        return self.send_frames(self.encode(message), 1)

    def send_frames(self, frames: bytes, count: int) -> bool:
        self.writes.append(frames)
        return True

    def send_backlog(self, messages: list[Message]) -> bool:
        self.writes.append(b"".join(self.encode(m) for m in messages))
        return True

    def gone(self) -> bool:
        return False

    def messages(self) -> list[dict]:
        return [json.loads(line[6:]) for write in self.writes
                for line in write.decode().splitlines() if line.startswith("data: ")]  # fmt: skip


def _hub() -> Hub:
    return Hub(BroadcastSettings(boards=[BoardSettings(id=b) for b in ("1", "2", "3")]))


async def _turns(seconds: float = 0.0) -> None:
    await asyncio.sleep(seconds)
    for _ in range(3):
        await asyncio.sleep(0)


async def test_a_moment_s_events_reach_each_viewer_in_one_write_in_the_feed_s_order():
    hub = _hub()
    everything, board_two, with_state = Screen(), Screen(), Screen()
    hub.subscribe(sink=everything)
    hub.subscribe(["2"], sink=board_two)
    hub.subscribe(with_state=True, sink=with_state)
    feeds = {b: game_feed(OPERA_GAME[:4]) for b in ("1", "2", "3")}
    for step in range(len(feeds["1"])):  # three boards' events, interleaved
        for board, feed in feeds.items():
            hub.publish(board, feed[step])
    assert all(len(s.writes) == 1 for s in (everything, board_two, with_state)), "snapshots only"
    await _turns()
    assert [len(s.writes) for s in (everything, board_two, with_state)] == [2, 2, 2]
    seen = everything.messages()[1:]
    assert [m["seq"] for m in seen] == list(range(seen[0]["seq"], seen[0]["seq"] + 3 * 9))
    assert [(m["board"], m["event"]) for m in seen] == [
        (b, feeds[b][step]) for step in range(9) for b in ("1", "2", "3")]  # fmt: skip
    assert [m["event"] for m in board_two.messages()[1:]] == feeds["2"]
    states = with_state.messages()[1:]
    assert [m["seq"] for m in states] == [m["seq"] for m in seen]
    assert states[-1]["state"]["fen"] == feeds["3"][-2]["fen"]


async def test_a_viewer_is_written_at_most_ten_times_a_second_and_a_lone_event_at_once():
    """A hall's boards report many times a second: a viewer gets a write at most every
    ``WRITE_EVERY``, each event in it in order, a move as a clock report; after a quiet
    moment an event goes at once."""
    hub = _hub()
    screen = Screen()
    hub.subscribe(sink=screen)
    loop = asyncio.get_running_loop()
    running = {b: "black" for b in ("1", "2", "3")}

    def press(board: str, n: int) -> dict:
        """A report whose running side changed (a press): news each viewer is sent."""
        running[board] = "white" if running[board] == "black" else "black"
        return {"type": "clock", "t": 10.0 + n / 100, "white": 300.0 - n / 100, "black": 300.0,
                "running": running[board]}  # fmt: skip

    sent = []
    moves = game_feed(OPERA_GAME[:12])[1:]
    started = loop.time()
    for n in range(70):  # an event every 10 ms for some 0.7 s, moves among them
        board = str(1 + n % 3)
        sent.append(moves[n // 7] if n % 7 == 6 else press(board, n))
        hub.publish(board, sent[-1])
        await asyncio.sleep(0.01)
    await _turns(WRITE_EVERY)
    elapsed = loop.time() - started
    assert [m["event"] for m in screen.messages()[1:]] == sent
    assert len(screen.writes) - 1 <= elapsed / WRITE_EVERY + 2, (len(screen.writes), elapsed)

    await asyncio.sleep(WRITE_EVERY * 1.5)  # a quiet moment
    lone, kept = press("2", 80), press("2", 81)
    hub.publish("2", lone)
    await _turns()
    writes = len(screen.writes)
    assert screen.messages()[-1]["event"] == lone, "a lone report at once"
    hub.publish("2", kept)  # within WRITE_EVERY of that write: kept
    move = moves[-1]
    hub.publish("2", move)  # so is a move
    await _turns()
    assert len(screen.writes) == writes
    await _turns(WRITE_EVERY)
    assert len(screen.writes) == writes + 1, "both in the next write"
    assert [m["event"] for m in screen.messages()[-2:]] == [kept, move]


async def test_a_viewer_that_comes_meanwhile_has_each_event_once_and_a_status_keeps_its_place():
    hub = _hub()
    early = Screen()
    hub.subscribe(sink=early)
    feed = game_feed(OPERA_GAME[:2])
    hub.publish("1", feed[0])
    late = Screen()
    hub.subscribe(with_state=True, sink=late)  # its snapshot holds the first event
    hub.publish("1", feed[1])
    hub.set_status("1", battery=50.0)  # after the events before it
    await _turns()
    assert [m["kind"] for m in early.messages()] == ["snapshot", "event", "event", "status"]
    got = late.messages()
    assert [m["kind"] for m in got] == ["snapshot", "event", "status"]
    assert got[1]["event"] == feed[1] and got[0]["seq"] + 1 == got[1]["seq"]


async def test_a_running_clock_s_readings_the_viewers_count_foresees_are_not_sent_them():
    """A board's clock read every second: its viewers are sent the first reading, a
    press, and a reading every ``RESYNC`` seconds (their page counts the running side
    down itself); a listener (MQTT) hears every reading, and the board's state (a
    newcomer's snapshot) holds the newest."""
    hub = _hub()
    screen = Screen()
    hub.subscribe(["1"], sink=screen)
    heard: list[dict] = []
    hub.listeners.append(lambda board, seq, event, state: heard.append(event))
    readings = [{"type": "clock", "t": float(n), "white": 300.0 - n, "black": 300.0,
                 "running": "white"} for n in range(25)]  # fmt: skip
    press = {"type": "clock", "t": 25.2, "white": 277.0, "black": 300.0, "running": "black"}
    for reading in [*readings, press]:
        hub.publish("1", reading)
        await _turns(WRITE_EVERY)
    sent = [m["event"] for m in screen.messages()[1:]]
    assert sent == [readings[0], readings[round(RESYNC)], readings[round(2 * RESYNC)], press]
    assert heard == [*readings, press]
    assert hub.page_state("1")["clock"]["white"] == 277.0
