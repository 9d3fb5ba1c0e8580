"""A page that resumes its feed (SSE's ``Last-Event-ID``, as a phone's ``EventSource``
does after a Wi-Fi blip) is sent what it missed, not every board's whole game again:
the events, with each board's state as it is now on that board's last one, and the
link status and the source's word when they changed. It then shows what the boards
show. What the history cannot tell, or a change made outside the feed meanwhile
(names, a penalty's word, the arbiter's change, a relay's loaded state, a new board),
still gets a whole snapshot, for a viewer of events only too."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from broadcast_feed import OPERA_GAME, PageView, game_feed
from broadcast_sse import read_sse

from daemon.broadcast import BoardSettings, BroadcastSettings, Hub

BOARDS = ("1", "2", "3", "4", "5", "6", "7", "8")
FEED = game_feed(OPERA_GAME[:16])


def _hall() -> Hub:
    the_hub = Hub(BroadcastSettings(boards=[BoardSettings(id=b) for b in BOARDS]))
    for board in BOARDS:
        for event in FEED[:10]:
            the_hub.publish(board, event)
    return the_hub


def _page_now(the_hub: Hub) -> PageView:
    """A page that has been following the feed until now."""
    page = PageView()
    page.read_all(the_hub.subscribe(with_state=True).queue)
    page.last_id = the_hub.seq
    return page


def test_a_resumed_page_is_sent_only_the_boards_that_moved_and_then_shows_them():
    the_hub = _hall()
    page = _page_now(the_hub)
    left_at = page.last_id
    for event in FEED[10:13]:
        the_hub.publish("2", event)
    the_hub.publish("3", FEED[10])

    resumed = the_hub.subscribe(with_state=True, last_seq=left_at).queue
    kinds = [json.loads(m.data)["kind"] for m in resumed]
    assert kinds == ["event"] * 4, "the missed events, no snapshot"
    assert [m.seq for m in resumed] == list(range(left_at + 1, the_hub.seq + 1))
    with_state = [json.loads(m.data)["board"] for m in resumed if '"state":' in m.data]
    assert with_state == ["2", "3"], "each moved board's state once, on its last event"
    page.read_all(resumed)
    fresh = json.loads(the_hub.snapshot().data)["boards"]
    assert page.states == fresh
    assert page.last_id == the_hub.seq
    sent = sum(len(m.data) for m in resumed)
    assert sent * 3 < len(the_hub.snapshot().data), "two boards' states, not eight"


def test_a_page_resumed_after_nothing_happened_is_sent_nothing():
    the_hub = _hall()
    page = _page_now(the_hub)
    assert list(the_hub.subscribe(with_state=True, last_seq=page.last_id).queue) == []


@pytest.mark.parametrize("with_state", [True, False], ids=["page", "events only"])
def test_a_resumed_viewer_hears_the_link_status_and_the_source_s_word_it_missed(
    with_state: bool,
):
    the_hub = _hall()
    page = _page_now(the_hub)
    the_hub.set_status("1", connected=False, battery=12.0)
    the_hub.set_source_problem("the broker is out of reach")
    resumed = the_hub.subscribe(with_state=with_state, last_seq=page.last_id).queue
    assert sorted(json.loads(m.data)["kind"] for m in resumed) == ["source", "status"]
    page.read_all(resumed)
    assert page.states == json.loads(the_hub.snapshot().data)["boards"]
    assert page.problem == "the broker is out of reach"


CHANGES: dict[str, Callable[[Hub], None]] = {
    "names": lambda h: h.set_players("2", white="Anand"),
    "penalty word": lambda h: h.note_clock("2", "the clock is a USB one"),
    "arbiter's change": lambda h: h.changed("2"),
    "relay's loaded state": lambda h: h.load_state("2", h.page_state("1"), seq=h.seq),
    "new board": lambda h: h.add_board(BoardSettings(id="9")),
}


@pytest.mark.parametrize("with_state", [True, False], ids=["page", "events only"])
@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_a_change_outside_the_feed_while_away_sends_a_whole_snapshot(change: str, with_state: bool):
    """As a viewer that stayed was sent one (or, for names and a penalty's word,
    shown them with the board's next event)."""
    the_hub = _hall()
    page = _page_now(the_hub)
    CHANGES[change](the_hub)
    resumed = the_hub.subscribe(with_state=with_state, last_seq=page.last_id).queue
    assert [json.loads(m.data)["kind"] for m in resumed] == ["snapshot"]
    page.read_all(resumed)
    assert page.states == json.loads(the_hub.snapshot().data)["boards"]


def test_a_viewer_of_events_only_is_sent_every_event_it_missed_and_no_state():
    the_hub = _hall()
    left_at = the_hub.seq
    for event in FEED[10:13]:
        the_hub.publish("2", event)
    resumed = the_hub.subscribe(last_seq=left_at).queue
    assert [json.loads(m.data)["event"] for m in resumed] == FEED[10:13]
    assert all('"state":' not in m.data for m in resumed)


def test_a_viewer_of_one_board_is_not_sent_the_others():
    the_hub = _hall()
    left_at = the_hub.seq
    the_hub.publish("1", FEED[10])
    the_hub.publish("2", FEED[10])
    the_hub.set_status("1", battery=50.0)
    resumed = the_hub.subscribe(["2"], with_state=True, last_seq=left_at).queue
    assert [(json.loads(m.data)["kind"], m.board) for m in resumed] == [("event", "2")]


async def test_a_phone_s_page_resumes_over_http_with_the_moves_it_missed(live):
    """The real feed: the page reopens ``/events?state=1`` with ``Last-Event-ID``."""
    server = await live(boards=[BoardSettings(id=b) for b in BOARDS])
    for board in BOARDS:
        server.publish(FEED[:10], board)
    hub = server.broadcaster.hub
    left_at = hub.seq
    server.publish(FEED[10:12], "3")
    async with server.session.get(
        server.url + "/events?state=1", headers={"Last-Event-ID": str(left_at)}
    ) as response:
        first = [await read_sse(response) for _ in FEED[10:12]]
        server.publish(FEED[12:13], "1")
        live_one = await read_sse(response)
    assert [m.id for m in first] == [left_at + 1, left_at + 2]
    assert [m.data["kind"] for m in first] == ["event", "event"]
    assert "state" not in first[0].data, "the board's state once, on its last event"
    assert first[1].data["state"] == json.loads(hub.board_text("3"))
    assert live_one.data["board"] == "1"
    assert live_one.data["state"] == json.loads(hub.board_text("1"))
