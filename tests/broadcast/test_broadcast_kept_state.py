"""A new viewer's snapshot is every board's page state as it is now, though the hub
keeps each board's text between changes (``Hub.board_text``): whatever happened to
the boards in whatever order (moves, clock reports the viewers are not sent, a
board's link, names, a penalty's word, a relay's loaded state, the arbiter's change
to a record), the snapshot says what the boards' states say afresh. And a viewer of
page states that leaves and resumes (SSE's ``Last-Event-ID``), sent only what it missed,
then shows what a viewer that never left shows, or newer."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import itertools
import json

import pytest
from broadcast_feed import OPERA_GAME, PageView, game_feed
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from daemon.broadcast import BoardSettings, BroadcastSettings, Hub, hub, strictjson
from daemon.game.record import GameHeaders, GameRecord

BOARDS = ("1", "2", "10")
ATTACHED = "2"  # read from a record of its own, as the daemon's boards are
FEED = game_feed(OPERA_GAME[:12])


def fresh_snapshot(the_hub: Hub, boards: frozenset[str] | None = None) -> dict[str, object]:
    """The snapshot as made from nothing kept: each board's page state dumped."""
    chosen = [b for b in the_hub.board_ids() if boards is None or b in boards]
    return json.loads(strictjson.dumps({
        "kind": "snapshot",
        "seq": the_hub.seq,
        "boards": {b: the_hub.page_state(b) for b in chosen},
        "source_problem": the_hub.source_problem,
    }))  # fmt: skip


class HubChanges(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        hub.CHECK_KEPT_TEXTS = False  # the kept texts as the daemon uses them
        self.hub = Hub(BroadcastSettings(boards=[BoardSettings(id=b) for b in BOARDS]))
        self.hub.sort_boards = True
        self.record = GameRecord(GameHeaders())
        self.hub.attach(ATTACHED, lambda: self.record)
        self.next = dict.fromkeys(BOARDS, 0)
        self.viewer = self.hub.subscribe(with_state=True)  # makes the events' states
        self.stayed = PageView()  # what the viewer that never leaves shows
        self.away: PageView | None = None  # a viewer whose feed is closed, to resume

    def _publish(self, board: str, event: dict[str, object]) -> None:
        if board == ATTACHED:  # the daemon folds its board's record, then publishes
            self.record.apply(event)
        self.hub.publish(board, event)

    @rule(board=st.sampled_from(BOARDS))
    def next_event(self, board: str) -> None:
        self._publish(board, FEED[self.next[board] % len(FEED)])
        self.next[board] += 1

    @rule(board=st.sampled_from(BOARDS), left=st.floats(0, 300))
    def clock_report(self, board: str, left: float) -> None:
        self._publish(board, {"type": "clock", "t": 500.0, "white": left, "black": 200.0,
                              "running": "white"})  # fmt: skip

    @rule(board=st.sampled_from(BOARDS), connected=st.sampled_from([True, False, None]),
          battery=st.sampled_from([None, 50.0, 10.0]))  # fmt: skip
    def link(self, board: str, connected: bool | None, battery: float | None) -> None:
        self.hub.set_status(board, connected=connected, battery=battery, detail="usb")

    @rule(board=st.sampled_from(BOARDS), name=st.sampled_from(["Anand", "Ding", "?"]))
    def names(self, board: str, name: str) -> None:
        self.hub.set_players(board, white=name, round="3")

    @rule(board=st.sampled_from(BOARDS), why=st.sampled_from(["", "the clock is a USB one"]))
    def penalty_word(self, board: str, why: str) -> None:
        self.hub.note_clock(board, why)

    @rule(name=st.sampled_from(["Carlsen", "Nepo"]))
    def arbiter_renames(self, name: str) -> None:
        self.record.headers = dataclasses.replace(self.record.headers, black=name)
        self.hub.changed(ATTACHED)

    @rule(board=st.sampled_from(["1", "10"]), ply=st.integers(0, 12))
    def relay_loads_a_state(self, board: str, ply: int) -> None:
        other = Hub(BroadcastSettings(boards=[BoardSettings(id=board, black="Relayed")]))
        for event in FEED[: 1 + 2 * ply]:
            other.publish(board, event)
        self.hub.load_state(board, other.page_state(board), seq=self.hub.seq)

    @rule(problem=st.sampled_from([None, "the broker is out of reach"]))
    def source_problem(self, problem: str | None) -> None:
        self.hub.set_source_problem(problem)

    @rule(boards=st.sampled_from([None, frozenset({"10"}), frozenset({"2", "1"})]))
    def a_viewer_comes(self, boards: frozenset[str] | None) -> None:
        data = self.hub.subscribe(boards, with_state=True).queue[0].data
        assert json.loads(data) == fresh_snapshot(self.hub, boards)

    def _read_stayed(self) -> None:
        self.stayed.read_all(self.viewer.queue)
        self.viewer.queue.clear()

    @rule()
    def a_viewer_leaves(self) -> None:
        """A phone's feed closes (a Wi-Fi blip), showing what it was sent so far."""
        self._read_stayed()
        self.away = copy.deepcopy(self.stayed)

    @rule()
    def it_resumes(self) -> None:
        """...and reopens with the last id it saw: it shows what the viewer that never
        left shows, or, where they differ, what the boards show now."""
        if self.away is None or self.away.last_id is None:
            return
        self._read_stayed()
        resumed = self.hub.subscribe(with_state=True, last_seq=self.away.last_id)
        self.away.read_all(resumed.queue)
        fresh = fresh_snapshot(self.hub)
        assert self.away.problem == self.hub.source_problem
        assert set(self.away.states) == set(fresh["boards"])  # type: ignore[arg-type]
        for board, shown in self.away.states.items():
            now = fresh["boards"][board]  # type: ignore[index]
            assert shown in (now, self.stayed.states.get(board)), board
        self.away = None

    def teardown(self) -> None:
        hub.CHECK_KEPT_TEXTS = True  # the suite's own check again (tests/conftest.py)

    @invariant()
    def snapshot_is_the_boards_now(self) -> None:
        data = self.hub.snapshot().data
        assert json.loads(data) == fresh_snapshot(self.hub)
        assert data == strictjson.dumps(json.loads(data)), "compact, as dumps() writes it"

    @invariant()
    def state_json_is_the_boards_now(self) -> None:
        chosen = self.hub.board_ids()
        status = {"viewers": 3, "limits": {"per_address": 8}}
        text = self.hub.state_json(chosen, status)
        fresh = {"seq": self.hub.seq, "boards": {b: self.hub.page_state(b) for b in chosen},
                 "status": status}  # fmt: skip
        assert json.loads(text) == json.loads(strictjson.dumps(fresh))
        assert text == strictjson.dumps(json.loads(text)), "compact, as dumps() writes it"

    @invariant()
    def pgn_is_the_games_now(self) -> None:
        fresh = "\n".join(self.hub.boards[b].record.pgn() for b in self.hub.board_ids())
        assert self.hub.pgn() == fresh


TestKeptPageStates = HubChanges.TestCase
TestKeptPageStates.settings = settings(max_examples=150, stateful_step_count=40)


def test_a_snapshot_reuses_each_board_s_text_until_it_changes(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(hub, "CHECK_KEPT_TEXTS", False)
    the_hub = Hub(BroadcastSettings(boards=[BoardSettings(id=b) for b in BOARDS]))
    for board in BOARDS:
        for event in FEED:
            the_hub.publish(board, event)
    first = {b: the_hub.board_text(b) for b in BOARDS}
    the_hub.publish("1", {"type": "clock", "t": 999.0, "white": 1.0, "black": 2.0,
                          "running": "black"})  # fmt: skip
    again = {b: the_hub.board_text(b) for b in BOARDS}
    assert again["2"] is first["2"] and again["10"] is first["10"], "unchanged: kept"
    assert again["1"] != first["1"] and json.loads(again["1"])["clock"]["white"] == 1.0


def test_viewers_that_come_while_nothing_changes_share_one_snapshot(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(hub, "CHECK_KEPT_TEXTS", False)
    the_hub = Hub(BroadcastSettings(boards=[BoardSettings(id=b) for b in BOARDS]))
    for event in FEED[:5]:
        the_hub.publish("1", event)
    first = the_hub.snapshot()
    assert the_hub.snapshot() is first, "one message, its frames encoded once for all"
    assert the_hub.snapshot(frozenset({"1"})) is not first
    the_hub.set_status("10", connected=False)
    after = the_hub.snapshot()
    assert (
        after is not first
        and json.loads(after.data)["boards"]["10"]["status"]["connected"] is False
    )
    the_hub.set_source_problem("the broker is out of reach")
    assert json.loads(the_hub.snapshot().data)["source_problem"] == "the broker is out of reach"


async def test_newcomers_are_served_one_a_loop_turn():
    """A storm of viewers: the loop turns (reads the bus line) between two of them."""
    the_hub = Hub(BroadcastSettings(boards=[BoardSettings(id="1")]))
    turns = 0

    async def loop_turns() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    served: list[int] = []

    async def newcomer() -> None:
        async with the_hub.newcomer():
            served.append(turns)

    counter = asyncio.create_task(loop_turns())
    try:
        await asyncio.gather(*(newcomer() for _ in range(10)))
    finally:
        counter.cancel()
    assert len(served) == 10
    assert all(later > earlier for earlier, later in itertools.pairwise(served)), served


async def test_a_storm_of_reads_takes_turns_with_the_loop(live, monkeypatch: pytest.MonkeyPatch):
    """Scrapers asking ``/state.json``, ``/game.pgn`` and ``/board.svg`` all at once
    (a broadcast site polling the PGN, a relay's page) are answered one a loop turn,
    as the viewers are: the loop reads the bus line between two of them."""
    from daemon.broadcast import web

    server = await live(boards=[BoardSettings(id=b) for b in BOARDS])
    for board in BOARDS:
        server.publish(FEED, board)
    the_hub = server.broadcaster.hub
    turns = 0
    made: list[tuple[str, int]] = []

    def counted(name: str, make):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            made.append((name, turns))
            return make(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(the_hub, "state_json", counted("state", the_hub.state_json))
    monkeypatch.setattr(the_hub, "pgn", counted("pgn", the_hub.pgn))
    monkeypatch.setattr(web, "draw_board", counted("svg", web.draw_board))

    async def loop_turns() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    async def read(path: str) -> tuple[int, bytes]:
        async with server.session.get(server.url + path) as response:
            return response.status, await response.read()

    paths = ["/state.json", "/game.pgn", "/board.svg?board=10"] * 8
    counter = asyncio.create_task(loop_turns())
    try:
        answers = await asyncio.gather(*(read(path) for path in paths))
    finally:
        counter.cancel()
    assert all(status == 200 for status, _ in answers), answers
    states = [
        json.loads(body)
        for (_, body), path in zip(answers, paths, strict=True)
        if path == "/state.json"
    ]
    assert all(state["boards"]["10"]["ply"] == len(OPERA_GAME[:12]) for state in states)
    assert sorted(name for name, _ in made) == sorted(["state", "pgn", "svg"] * 8)
    at = [turn for _, turn in made]
    assert all(later > earlier for earlier, later in itertools.pairwise(at)), made
