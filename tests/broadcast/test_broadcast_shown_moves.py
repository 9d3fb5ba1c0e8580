"""A board's moves in its page state are made once a move (``daemon.broadcast.movelist``):
what the viewers and MQTT are sent must still be the record as it stands after a
take-back, a correction or a new game, never a move kept from before."""

from __future__ import annotations

import json

import chess
from broadcast_feed import OPERA_GAME, game_feed

from daemon.broadcast import BoardSettings, BroadcastSettings, Hub, strictjson
from daemon.broadcast.movelist import figurine


def _fresh_state(hub: Hub, board: str) -> dict:
    """The board's page state made from its record alone, as before the moves were kept."""
    record = hub.boards[board].record
    state = json.loads(strictjson.dumps(hub.page_state(board)))
    state["moves"] = [{**m.to_dict(), "figurine": figurine(m.san)} for m in record.moves]
    return json.loads(strictjson.dumps(state))


def _fen_after(ucis: list[str]) -> str:
    board = chess.Board()
    for uci in ucis:
        board.push_uci(uci)
    return board.fen()


async def test_the_state_sent_after_a_takeback_a_correction_and_a_new_game_is_the_record():
    hub = Hub(BroadcastSettings(boards=[BoardSettings(id="1"), BoardSettings(id="2")]))
    viewer = hub.subscribe(with_state=True)
    feed = game_feed(OPERA_GAME[:8])
    for event in feed:
        hub.publish("1", event)
        hub.publish("2", event)  # another board's moves, kept apart
    played = OPERA_GAME[:8]
    hub.publish("1", {"type": "takeback", "t": 50.0, "ply": 7, "fen": _fen_after(played[:6])})
    # then black's sixth move corrected to another one
    board = chess.Board()
    for uci in played[:5]:
        board.push_uci(uci)
    sixth = next(iter(board.legal_moves))
    corrected = [*played[:5], sixth.uci()]
    hub.publish("1", {"type": "move", "t": 51.0, "ply": 6, "uci": sixth.uci(),
                      "san": board.san(sixth), "fen": _fen_after(corrected), "by": "black",
                      "correction": True})  # fmt: skip
    states = [json.loads(m.data)["state"] for m in list(viewer.queue)[1:] if m.kind == "event"]
    last_of_one = [s for s in states if s["board"] == "1"][-1]
    assert [m["uci"] for m in last_of_one["moves"]] == corrected
    assert last_of_one["moves"][-1]["figurine"] == figurine(board.san(sixth))
    assert last_of_one == _fresh_state(hub, "1")
    assert [m["uci"] for m in hub.page_state("2")["moves"]] == played
    hub.publish("1", {"type": "game_start", "t": 60.0, "fen": chess.STARTING_FEN})
    hub.publish("1", game_feed(OPERA_GAME[:1])[1])
    state = json.loads(list(viewer.queue)[-1].data)["state"]
    assert [m["uci"] for m in state["moves"]] == OPERA_GAME[:1]
    assert state == _fresh_state(hub, "1")


async def test_a_state_made_earlier_keeps_its_moves_when_the_game_goes_on():
    """A state handed out (a newcomer's snapshot, MQTT's retained state on a timer)
    is not changed by the moves after it."""
    hub = Hub(BroadcastSettings(boards=[BoardSettings(id="1")]))
    feed = game_feed(OPERA_GAME[:4])
    half = next(i for i, e in enumerate(feed) if e.get("ply") == 3)  # before the third move
    for event in feed[:half]:
        hub.publish("1", event)
    early = hub.page_state("1")
    text = hub.state_text(early)
    for event in feed[half:]:
        hub.publish("1", event)
    assert [m["uci"] for m in early["moves"]] == OPERA_GAME[:2]
    assert json.loads(text)["moves"] == early["moves"]
    assert [m["uci"] for m in hub.page_state("1")["moves"]] == OPERA_GAME[:4]
