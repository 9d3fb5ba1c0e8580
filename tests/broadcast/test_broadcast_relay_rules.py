"""The relay believes only what the rules allow (issue 24): each attack a board's
own login can make on its own topics, sent through a real Mosquitto to the real
relay, beside a real board publishing a real game. Every board's game, result
and pages stay as they were."""

from __future__ import annotations

import asyncio
import contextlib
import json

import aiohttp
import chess
import paho.mqtt.client as mqtt
import pytest
from broadcast_feed import OPERA_GAME, game_feed
from hypothesis import strategies as st
from mqtt_helpers import MOSQUITTO, free_port, wait_until

from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings, MqttSettings
from daemon.broadcast.relay import Relay

pytestmark = pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed")

TOURNAMENT = "rules"
BASE = f"dgt-bridge/{TOURNAMENT}/3"
NINE_QUEENS = "qqqqkqqq/pppppppp/8/8/8/8/PPPPPPPP/QQQQKQQQ w - - 0 1"


def _board(port: int, board: str, round_: str = "3") -> Broadcaster:
    return Broadcaster(BroadcastSettings(
        enabled=False, round=round_,
        boards=[BoardSettings(id=board, white=f"White {board}", black=f"Black {board}")],
        mqtt=MqttSettings(enabled=True, host="127.0.0.1", port=port, tournament=TOURNAMENT),
    ))  # fmt: skip


async def _wait(condition, timeout: float = 30.0) -> bool:
    return await asyncio.to_thread(wait_until, condition, timeout)


class Attacker:
    """A bare client publishing on a board's topics, as that board's login could."""

    def __init__(self, port: int) -> None:
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2,
                                  client_id=f"attacker-{free_port()}")  # fmt: skip
        self.client.connect("127.0.0.1", port, 10)
        self.client.loop_start()

    async def send(self, topic: str, payload: object, *, retain: bool = False) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        info = self.client.publish(topic, data, qos=1, retain=retain)
        await asyncio.to_thread(info.wait_for_publish, 10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _moves(relay: Relay, board: str) -> list[str]:
    feed = relay.hub.boards.get(board)
    return [m.uci for m in feed.record.moves] if feed else []


async def _pages_answer(relay: Relay, boards: tuple[str, ...] = ("1", "2")) -> dict[str, int]:
    base = f"http://127.0.0.1:{relay.port}"
    statuses = {}
    per_board = [f"{page}{board}" for board in boards for page in ("/?board=", "/board.svg?board=")]
    async with aiohttp.ClientSession() as session:
        for path in ("/", "/state.json", "/game.pgn", "/relay.json", *per_board):
            async with session.get(base + path) as response:
                await response.read()
                statuses[path] = response.status
    return statuses


def _last_seq(relay: Relay, board: str) -> int:
    """The seq a board's login would continue from: the last one shown at
    /relay.json, or while the relay waits after a fork the highest one taken."""
    shown = relay.status()["boards"][board]["last_seq"]
    return shown if shown is not None else relay.sync[board].top


def _envelope(relay: Relay, board: str, event: dict, **changes: object) -> dict:
    shown = relay.status()["boards"][board]
    seq = _last_seq(relay, board)
    return {"origin": shown["origin"], "seq": seq + 1, "prev": seq, "board": board,
            "event": event, **changes}  # fmt: skip


def _state(relay: Relay, board: str, **changes: object) -> dict:
    state = json.loads(json.dumps(relay.hub.page_state(board)))
    shown = relay.status()["boards"][board]
    state.update(origin=shown["origin"], seq=_last_seq(relay, board) + 5, board=board)
    state.update(changes)
    return state


def _fen_after(ucis: list[str]) -> str:
    board = chess.Board()
    for uci in ucis:
        board.push_uci(uci)
    return board.fen()


def _attacks(relay: Relay) -> dict[str, list[tuple[str, object]]]:
    """Each attack: the messages sent on board 1's topics (leaf, payload)."""
    move = {"type": "move", "t": 100.0, "ply": 7, "uci": "e1e8", "san": "Ke8",
            "fen": _fen_after(OPERA_GAME[:6]), "by": "white", "speech": ""}  # fmt: skip
    fake_fen = {**move, "uci": "d4e5", "san": "dxe5", "fen": NINE_QUEENS}
    state = _state(relay, "1")
    penalty = {"type": "penalty", "t": 101.0, "to": "white", "seconds": 60.0,
               "article": "7.4b\n<b>"}  # fmt: skip
    return {
        "illegal king move": [("events", _envelope(relay, "1", move))],
        "fen that does not follow": [("events", _envelope(relay, "1", fake_fen))],
        "clock 30 days up": [
            (
                "events",
                _envelope(
                    relay,
                    "1",
                    {
                        "type": "clock",
                        "t": 101.0,
                        "white": 29 * 86400.0,
                        "black": 280.0,
                        "running": "white",
                    },
                ),
            ),
            (
                "state",
                {
                    **state,
                    "clock": {
                        "white": 29 * 86400.0,
                        "black": 280.0,
                        "running": "white",
                        "t": 101.0,
                    },
                },
            ),
        ],
        "nine-queen start": [
            ("events", _envelope(relay, "1", {"type": "game_start", "t": 1.0, "fen": NINE_QUEENS})),
            ("state", {**state, "start_fen": NINE_QUEENS, "moves": []}),
        ],
        "broken fen, flag, result_reason": [
            ("state", {**state, "fen": "not a fen"}),
            ("state", {**state, "flag": "x"}),
            ("state", {**state, "result_reason": 7}),
            ("state", {**state, "flag": {"side": "purple"}}),
        ],
        "an article with a newline": [
            ("events", _envelope(relay, "1", penalty)),
            ("state", {**state, "penalties": [{**penalty, "article": "7.4b\n"}]}),
        ],
        "seq 2^53 with the public origin": [
            (
                "events",
                _envelope(
                    relay,
                    "1",
                    {"type": "game_end", "t": 1.0, "result": "0-1", "reason": "resignation"},
                    seq=2**53,
                ),
            ),
        ],
    }


@contextlib.asynccontextmanager
async def _playing(relay: Relay, daemons: dict[str, Broadcaster], port: int):
    """The relay and the boards' daemons started (board id -> its daemon), board 1's
    first six plies shown and board 2's first four; an attacker on the broker; all
    stopped at the end."""
    await relay.start()
    for daemon in dict.fromkeys(daemons.values()):
        await daemon.start()
    # connected before the games start, as in a hall: each move then has its state
    for daemon in dict.fromkeys(daemons.values()):
        assert await _wait(lambda d=daemon: all(p.connected for p in d.mqtt)), daemon.mqtt
    attacker = Attacker(port)
    try:
        for board, plies in (("1", 6), ("2", 4)):
            if board in daemons:
                for event in game_feed(OPERA_GAME[:plies]):
                    daemons[board].publish(board, event)
                assert await _wait(lambda b=board, n=plies: _moves(relay, b) == OPERA_GAME[:n]), (
                    relay.status()
                )
        yield attacker
    finally:
        attacker.close()
        for daemon in dict.fromkeys(daemons.values()):
            await daemon.stop()
        await relay.stop()


@pytest.fixture
async def hall(own_broker):
    relay = Relay("127.0.0.1", own_broker.port, TOURNAMENT, "3", address="127.0.0.1", port=0)
    one, two = _board(own_broker.port, "1"), _board(own_broker.port, "2")
    async with _playing(relay, {"1": one, "2": two}, own_broker.port) as attacker:
        yield relay, one, attacker


ATTACKS = ["illegal king move", "fen that does not follow", "clock 30 days up",
           "nine-queen start", "broken fen, flag, result_reason",
           "an article with a newline", "seq 2^53 with the public origin"]  # fmt: skip


@pytest.mark.parametrize("attack", ATTACKS)
async def test_an_attack_on_a_board_s_topics_leaves_every_game_and_page_intact(hall, attack):
    relay, one, attacker = hall
    messages = _attacks(relay)[attack]
    clock_before = dict(relay.hub.boards["1"].record.clock or {})
    for leaf, payload in messages:
        await attacker.send(f"{BASE}/1/{leaf}", payload)
    dropped = len(messages)
    assert await _wait(lambda: relay.status()["rejected"] >= dropped), relay.status()
    assert _moves(relay, "1") == OPERA_GAME[:6]
    assert _moves(relay, "2") == OPERA_GAME[:4]
    record = relay.hub.boards["1"].record
    assert record.result is None and record.start_fen.startswith("rnbqkbnr/")
    assert dict(record.clock or {}) == clock_before
    assert set((await _pages_answer(relay)).values()) == {200}
    # the real board goes on: its next moves are taken (no freeze, no wipe)
    for event in game_feed(OPERA_GAME[:8])[-4:]:
        one.publish("1", event)
    assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:8]), relay.status()
    assert sum(relay.status()["boards"]["1"]["rejected"].values()) == dropped


async def test_a_result_is_final_once_given(hall):
    relay, one, attacker = hall
    one.publish("1", {"type": "game_end", "t": 200.0, "result": "1-0", "reason": "resignation"})
    assert await _wait(lambda: relay.hub.boards["1"].record.result == "1-0")
    flipped = {"type": "game_end", "t": 201.0, "result": "0-1", "reason": "resignation"}
    await attacker.send(f"{BASE}/1/events", _envelope(relay, "1", flipped))
    await attacker.send(f"{BASE}/1/state", _state(relay, "1", result="0-1"))
    assert await _wait(lambda: relay.status()["rejected"] >= 2), relay.status()
    assert relay.hub.boards["1"].record.result == "1-0"
    assert '[Result "1-0"]' in relay.hub.pgn(["1"])


async def test_setup_fen_and_variant_headers_never_reach_the_pgn(hall):
    relay, _one, attacker = hall
    extra = {"SetUp": "1", "FEN": NINE_QUEENS, "Variant": "Atomic", "WhiteElo": "2100"}
    state = _state(relay, "1")
    state["headers"]["extra"] = extra
    state["seq"] = relay.status()["boards"]["1"]["last_seq"]  # the latest state, renamed
    state["headers"]["white"] = "Renamed"
    await attacker.send(f"{BASE}/1/state", state)
    assert await _wait(lambda: relay.hub.boards["1"].record.headers.white == "Renamed")
    pgn = relay.hub.pgn(["1"])
    assert "Atomic" not in pgn and "SetUp" not in pgn and NINE_QUEENS not in pgn
    assert _moves(relay, "1") == OPERA_GAME[:6]


async def test_a_replayed_older_run_never_replaces_the_newer_one(own_broker):
    relay = Relay("127.0.0.1", own_broker.port, TOURNAMENT, "3", address="127.0.0.1", port=0)
    await relay.start()
    attacker = Attacker(own_broker.port)
    older = _board(own_broker.port, "1")
    try:
        await older.start()
        for event in game_feed(OPERA_GAME[:2]):
            older.publish("1", event)
        assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:2])
        publisher = older.mqtt[0]
        old_state = publisher.state_message()
        old_start = json.dumps({"origin": publisher.origin, "seq": 1, "prev": 0, "board": "1",
                                "event": game_feed([])[0]}).encode()  # fmt: skip
        await older.stop()
        await asyncio.sleep(0.01)  # the newer run numbers from a later millisecond
        newer = _board(own_broker.port, "1")
        await newer.start()
        for event in game_feed(OPERA_GAME[:6]):
            newer.publish("1", event)
        assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:6])
        await attacker.send(f"{BASE}/1/state", old_state)  # byte for byte
        await attacker.send(f"{BASE}/1/events", old_start)
        assert await _wait(lambda: relay.status()["rejected"] >= 2), relay.status()
        assert _moves(relay, "1") == OPERA_GAME[:6]
        await newer.stop()
    finally:
        attacker.close()
        await relay.stop()


async def test_a_game_planted_on_a_later_round_does_not_count_until_its_board_is_live(
    own_broker,
):
    attacker = Attacker(own_broker.port)
    planted = json.loads(json.dumps(game_feed(OPERA_GAME[:2])[0]))
    state = {"origin": "planted1", "seq": 50, "board": "1", "start_fen": None,
             "moves": [], "headers": {"white": "Planted", "black": "Game"},
             "result": "0-1", "result_reason": "resignation"}  # fmt: skip
    await attacker.send("dgt-bridge/rules/4/1/state", state, retain=True)
    assert planted
    relay = Relay("127.0.0.1", own_broker.port, TOURNAMENT, "4", address="127.0.0.1", port=0)
    await relay.start()
    board = _board(own_broker.port, "1", round_="4")
    try:
        assert await _wait(lambda: relay.connected)
        await asyncio.sleep(1.0)  # the retained state has been delivered by now
        assert "1" not in relay.hub.boards or relay.hub.boards["1"].record.result is None
        await board.start()
        for event in game_feed(OPERA_GAME[:2]):
            board.publish("1", event)
        assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:2])
        record = relay.hub.boards["1"].record
        assert record.result is None and record.headers.white == "White 1"
    finally:
        attacker.close()
        await board.stop()
        await relay.stop()


CHESS960_START = "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1"
START_FENS = [chess.STARTING_FEN, NINE_QUEENS, CHESS960_START,
              "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
              "4k3/8/8/8/8/8/8/QQQQKQQQ w - - 0 1"]  # fmt: skip
SQUARES = st.sampled_from(chess.SQUARE_NAMES)


def _forged_move(record, uci: str, fen_choice: str, clock: object) -> dict:
    """A move at the next ply, by the side to move, as a real daemon would send it;
    its FEN the one after it when it is legal (``follows``), or another."""
    board = chess.Board(record.start_fen, chess960=True)
    for move in record.moves:
        board.push_uci(move.uci)
    side = "white" if board.turn == chess.WHITE else "black"
    after = board.copy()
    with contextlib.suppress(ValueError, AssertionError):
        after.push(chess.Move.from_uci(uci))
    fen = {"follows": after.fen(), "before": board.fen(), "nine queens": NINE_QUEENS}[fen_choice]
    return {"type": "move", "t": 500.0, "ply": len(record.moves) + 1, "uci": uci, "san": "x",
            "fen": fen, "by": side, "speech": "", "clock": clock}  # fmt: skip


@st.composite
def forgeries(draw) -> dict:
    """A recipe of what a board's login sends: several fields changed together, so
    that each one alone looks right (the next ply, the side to move, a FEN that
    follows, a real origin and seq) and only the rules can tell. The seq and the
    game it continues are filled in when it is sent."""
    kind = draw(st.sampled_from(["move", "move", "state", "clock", "results", "restart"]))
    clock = draw(st.none() | st.fixed_dictionaries({
        "white": st.floats(0, 40 * 86400), "black": st.floats(0, 40 * 86400)}))  # fmt: skip
    recipe: dict = {"kind": kind, "clock": clock}
    if kind in ("move", "restart", "state"):
        promotion = draw(st.sampled_from(["", "", "q", "n"]))
        recipe["uci"] = draw(SQUARES) + draw(SQUARES) + promotion
        recipe["fen"] = draw(st.sampled_from(["follows", "follows", "before", "nine queens"]))
    if kind == "state":
        recipe["plies"] = draw(st.integers(0, 8))
        recipe["start_fen"] = draw(st.sampled_from(START_FENS))
        recipe["chess960"] = draw(st.booleans())
        recipe["result"] = draw(st.sampled_from([None, "1-0", "0-1", "1/2-1/2", "*"]))
        recipe["extra"] = draw(st.dictionaries(
            st.sampled_from(["SetUp", "FEN", "Variant", "WhiteElo", "Termination"]),
            st.sampled_from(["1", NINE_QUEENS, "Atomic", "2100"]), max_size=3))  # fmt: skip
    if kind in ("results", "restart"):
        recipe["results"] = draw(st.lists(st.sampled_from(["1-0", "0-1", "1/2-1/2"]),
                                          min_size=1, max_size=3))  # fmt: skip
    return recipe


def _materialize(relay: Relay, recipe: dict) -> list[tuple[str, dict]]:
    """The messages of ``recipe`` against what the relay shows now."""
    record = relay.hub.boards["1"].record
    kind, clock = recipe["kind"], recipe["clock"]
    if kind == "move":
        return [
            (
                "events",
                _envelope(relay, "1", _forged_move(record, recipe["uci"], recipe["fen"], clock)),
            )
        ]
    if kind == "clock":
        clock = clock or {"white": 40 * 86400.0, "black": 1.0}
        return [("events", _envelope(relay, "1", {"type": "clock", "t": 501.0, **clock,
                                                  "running": "white"}))]  # fmt: skip
    if kind == "state":
        line = [*OPERA_GAME[: recipe["plies"]], recipe["uci"]]
        fen = NINE_QUEENS if recipe["fen"] == "nine queens" else chess.STARTING_FEN
        moves = [{"ply": n, "uci": uci, "san": "x", "fen": fen, "by": "white", "t": 1.0,
                  "clock": clock} for n, uci in enumerate(line, 1)]  # fmt: skip
        shown_clock = {**(clock or {"white": 1.0, "black": 1.0}), "running": None}
        state = _state(relay, "1", moves=moves, start_fen=recipe["start_fen"],
                       chess960=recipe["chess960"], result=recipe["result"],
                       clock=shown_clock)  # fmt: skip
        state["headers"] = {**state["headers"], "extra": recipe["extra"]}
        return [("state", state)]
    shown = relay.status()["boards"]["1"]
    seq, messages = _last_seq(relay, "1"), []
    events = []
    if kind == "restart":  # a new game, the line replayed, then the results
        events.append({"type": "game_start", "t": 502.0, "fen": chess.STARTING_FEN})
        board = chess.Board()
        for uci in OPERA_GAME[:2]:
            by = "white" if board.turn == chess.WHITE else "black"
            board.push_uci(uci)
            events.append({"type": "move", "t": 503.0, "ply": board.ply(), "uci": uci,
                           "san": "x", "fen": board.fen(), "by": by, "speech": ""})  # fmt: skip
    events += [{"type": "game_end", "t": 504.0, "result": r, "reason": "resignation"}
               for r in recipe["results"]]  # fmt: skip
    for event in events:
        messages.append(("events", {"origin": shown["origin"], "seq": seq + 1, "prev": seq,
                                    "board": "1", "event": event}))  # fmt: skip
        seq += 1
    return messages


def _a_game_by_the_rules(relay: Relay, results: list[str]) -> None:
    """What the rules promise of board 1, whatever was sent: a start the standard
    one or a Chess960 one, each move legal with its own FEN, clocks within 10 hours,
    a result that never changes once given, no variant in the PGN; and, without the
    hall's key, the real game never restarted or taken back more than two
    half-moves (its six plies keep their first four)."""
    record = relay.hub.boards["1"].record
    assert [m.uci for m in record.moves][:4] == OPERA_GAME[:4], "the game was restarted"
    start = chess.Board(record.start_fen, chess960=True)
    assert record.start_fen == chess.STARTING_FEN or start.chess960_pos() is not None, (
        record.start_fen
    )
    for move in record.moves:
        assert chess.Move.from_uci(move.uci) in start.legal_moves, (move, record.start_fen)
        start.push_uci(move.uci)
        assert move.fen.split()[:3] == start.fen().split()[:3], move
    for side in ("white", "black"):
        assert (record.clock or {}).get(side, 0) <= 10 * 3600, record.clock
    if record.result is not None:
        results.append(record.result)
    assert len(set(results)) <= 1, f"the result changed: {results}"
    pgn = relay.hub.pgn(["1"])
    assert "Variant" not in pgn and NINE_QUEENS.split()[0] not in pgn


async def test_no_message_hypothesis_makes_breaks_a_game_or_a_page(hall):
    """Property: whatever hypothesis writes on board 1's topics — a real state or
    event with any field replaced by any JSON value, or a forgery changing several
    fields together so that each looks right alone (a move at the next ply by the
    side to move with a FEN that follows, a state of another game or start, a
    clock far up, a result given and flipped, a restart replayed to another
    result) — board 2's game is intact, board 1's is a game by the rules, and
    every route answers 200. (The single-field mutations alone passed on the relay
    before relayrules; the forgeries do not; nor the restarts, before a new game over
    one with moves was held.)"""
    from hypothesis import HealthCheck, given, settings

    relay, _one, attacker = hall
    base_state = _state(relay, "1")
    base_event = _envelope(relay, "1", game_feed(OPERA_GAME[:7])[-1])
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                    max_size=3),
        max_leaves=6,
    )  # fmt: skip
    recipes: list[object] = []

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        leaf=st.sampled_from(["state", "events", "status"]),
        key=st.sampled_from(sorted({*base_state, *base_event["event"], "seq", "prev"})),
        value=json_values,
    )
    def one_field(leaf: str, key: str, value: object) -> None:
        if leaf == "events":
            message = json.loads(json.dumps(base_event))
            target = message if key in ("seq", "prev") else message["event"]
        else:
            message = json.loads(json.dumps(base_state))
            target = message
        target[key] = value
        recipes.append((leaf, json.dumps(message, allow_nan=True).encode()))

    @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
    @given(recipe=forgeries())
    def several_fields(recipe: dict) -> None:
        recipes.append(recipe)

    one_field()
    several_fields()
    results: list[str] = []
    for seen, recipe in enumerate(recipes, 1):
        if isinstance(recipe, tuple):
            messages = [recipe]
        else:
            messages = [(leaf, json.dumps(m).encode()) for leaf, m in _materialize(relay, recipe)]
        for leaf, payload in messages:
            await attacker.send(f"{BASE}/1/{leaf}", payload)
        await attacker.send(f"{BASE}/2/state", b"sentinel")  # dealt with after them

        def handled(count: int = seen) -> bool:
            return sum((relay.status()["boards"]["2"].get("rejected") or {}).values()) >= count

        assert await _wait(handled), relay.status()
        _a_game_by_the_rules(relay, results)
        answers = await _pages_answer(relay)
        assert set(answers.values()) == {200}, (recipe, answers)
    assert _moves(relay, "2") == OPERA_GAME[:4]


# -- a result forged by a restart, and the arbiter's signed decisions ---------------------

KEY = "the hall's arbiter key"
RELAY_TOKEN = "the relay's console token"


def _signed_board(port: int, board: str, key: str | None = KEY) -> Broadcaster:
    return Broadcaster(BroadcastSettings(
        enabled=False, round="3",
        boards=[BoardSettings(id=board, white=f"White {board}", black=f"Black {board}")],
        mqtt=MqttSettings(enabled=True, host="127.0.0.1", port=port, tournament=TOURNAMENT,
                          arbiter_key=key),
    ))  # fmt: skip


@pytest.fixture
async def finished(own_broker):
    """A relay sharing the arbiter key with board 1's daemon; board 1 has played six
    plies and its game has ended 1-0."""
    relay = Relay("127.0.0.1", own_broker.port, TOURNAMENT, "3", address="127.0.0.1", port=0,
                  mqtt_settings=MqttSettings(arbiter_key=KEY), token=RELAY_TOKEN)  # fmt: skip
    one = _signed_board(own_broker.port, "1")
    async with _playing(relay, {"1": one}, own_broker.port) as attacker:
        one.publish("1", {"type": "game_end", "t": 70.0, "result": "1-0", "reason": "resignation"})
        assert await _wait(lambda: _result(relay) == "1-0"), relay.status()
        yield relay, one, attacker


def _result(relay: Relay) -> str | None:
    feed = relay.hub.boards.get("1")
    return feed.record.result if feed else None


def _shows_the_finished_game(relay: Relay) -> None:
    record = relay.hub.boards["1"].record
    assert _moves(relay, "1") == OPERA_GAME[:6]
    assert record.result == "1-0"
    assert '[Result "1-0"]' in relay.hub.pgn(["1"])


async def test_a_restart_over_a_finished_game_is_held_for_the_arbiter(finished):
    """The board's own game_start after the end (or its login replaying the game to
    another result, events and a state) is not shown: the finished game and its
    result stay, and /relay.json says a restart is held."""
    relay, one, attacker = finished
    replayed = game_feed(OPERA_GAME[:4])
    for event in replayed:  # the board's own restart, through its daemon's publisher
        one.publish("1", event)
    one.publish("1", {"type": "game_end", "t": 90.0, "result": "0-1", "reason": "resignation"})

    def held(plies: int, result: str) -> bool:
        restart = relay.status()["boards"]["1"].get("restart_held") or {}
        return restart.get("plies") == plies and restart.get("result") == result

    assert await _wait(lambda: held(4, "0-1")), relay.status()
    _shows_the_finished_game(relay)
    # and the login's own: a state of another game, with another result
    forged = _state(relay, "1", moves=[], result="1/2-1/2", result_reason="agreement")
    await attacker.send(f"{BASE}/1/state", forged)
    assert await _wait(lambda: held(0, "1/2-1/2")), relay.status()
    _shows_the_finished_game(relay)
    assert set((await _pages_answer(relay, ("1",))).values()) == {200}
    assert relay.status()["boards"]["1"]["rejected"] == {
        "a new game over a finished one, not the arbiter's: held for the arbiter": 1
    }


async def test_only_the_arbiter_s_signed_decisions_change_a_result_or_start_a_game(finished):
    """The daemon signs what an arbiter's request made (``"arbiter": true``): its
    result correction and its new game are taken; the same with no signature, or
    signed with another key, is not."""
    from daemon.broadcast import arbitersig

    relay, one, attacker = finished
    flipped = {"type": "game_end", "t": 80.0, "result": "0-1", "reason": "arbiter",
               "arbiter": True}  # fmt: skip
    unsigned = _envelope(relay, "1", flipped)
    wrong = {**unsigned, "sig": arbitersig.sign(unsigned, "another key")}
    await attacker.send(f"{BASE}/1/events", unsigned)
    await attacker.send(f"{BASE}/1/events", wrong)
    assert await _wait(lambda: relay.status()["rejected"] >= 3), relay.status()
    _shows_the_finished_game(relay)
    one.publish("1", flipped)  # the arbiter's console on the daemon: signed
    assert await _wait(lambda: relay.hub.boards["1"].record.result == "0-1"), relay.status()
    assert '[Result "0-1"]' in relay.hub.pgn(["1"])
    # the arbiter's new game is shown at once, and its moves follow
    one.publish("1", {**game_feed([])[0], "t": 100.0, "arbiter": True})
    for event in game_feed(OPERA_GAME[:2])[1:]:
        one.publish("1", event)
    assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:2]), relay.status()
    assert relay.hub.boards["1"].record.result is None
    assert "restart_held" not in relay.status()["boards"]["1"]


async def test_the_arbiter_s_new_game_releases_a_held_restart(finished):
    relay, one, _attacker = finished
    for event in game_feed(OPERA_GAME[:2]):  # pieces set up again, two moves played
        one.publish("1", event)
    assert await _wait(lambda: "restart_held" in relay.status()["boards"]["1"]), relay.status()
    _shows_the_finished_game(relay)
    one.publish("1", {**game_feed([])[0], "t": 100.0, "arbiter": True})
    for event in game_feed(OPERA_GAME[:3])[1:]:
        one.publish("1", event)
    assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:3]), relay.status()
    assert relay.hub.boards["1"].record.result is None


async def test_the_relay_s_own_console_shows_a_held_new_game(finished):
    """Without a daemon's signature (a hall without the key), the arbiter shows the
    board's new game from the relay's console: New game with the relay's token."""
    relay, one, _attacker = finished
    url = f"http://127.0.0.1:{relay.port}/control/new_game?board=1"
    auth = {"Authorization": f"Bearer {RELAY_TOKEN}"}
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json={}, headers=auth) as response:
            assert response.status == 409, await response.text()  # nothing held yet
        for event in game_feed(OPERA_GAME[:2]):  # the next game, unsigned
            one.publish("1", event)
        assert await _wait(lambda: (relay.status()["boards"]["1"].get("restart_held") or {})
                           .get("plies") == 2), relay.status()  # fmt: skip
        _shows_the_finished_game(relay)
        async with session.post(url, json={}) as response:
            assert response.status in (401, 403), await response.text()  # no token
        async with session.post(url, json={}, headers=auth) as response:
            assert response.status == 200, await response.text()  # done, as the display's own
    assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:2]), relay.status()
    assert _result(relay) is None
    for event in game_feed(OPERA_GAME[:4])[-4:]:  # and the game goes on
        one.publish("1", event)
    assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:4]), relay.status()


# -- a forged event far ahead never freezes the real feed ----------------------------------


def _forged_ahead(relay: Relay, kind: str) -> tuple[str, dict]:
    """A message the rules allow, numbered far ahead but within every bound."""
    shown = relay.status()["boards"]["1"]
    ahead = shown["last_seq"] + 900_000
    if kind == "state":
        return "state", _state(relay, "1", seq=ahead)
    if kind == "the real next seq":  # the real next event then comes as a "duplicate"
        ahead = shown["last_seq"] + 1
    if kind == "the real next move":
        event = game_feed(OPERA_GAME[:7])[-2]  # the move the board is about to make
    else:
        event = {"type": "game_resumed", "t": 65.0, "ply": 6, "fen": _fen_after(OPERA_GAME[:6])}
    return "events", _envelope(relay, "1", event, seq=ahead)


@pytest.mark.parametrize("kind", ["the real next move", "a legal resume", "state",
                                  "the real next seq"])  # fmt: skip
async def test_a_forged_seq_far_ahead_does_not_freeze_the_real_feed(hall, kind):
    """With the board's public origin and a seq 900,000 ahead (within the step and
    the run's bound), a message the rules allow is taken; the real daemon's next
    events, numbered below it, still reach the page."""
    relay, one, attacker = hall
    leaf, forged = _forged_ahead(relay, kind)
    await attacker.send(f"{BASE}/1/{leaf}", forged)
    assert await _wait(lambda: relay.status()["boards"]["1"]["last_seq"] == forged["seq"])
    for event in game_feed(OPERA_GAME[:10])[-8:]:
        one.publish("1", event)
    assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:10], 10), relay.status()
    assert set((await _pages_answer(relay)).values()) == {200}


async def test_a_refused_event_after_a_hole_does_not_hang_the_relay(hall):
    """A forged event after a hole that the rules refuse once the hole is filled:
    the relay counted the refusal while it held its own lock, and its MQTT thread
    hung for good (every board frozen, found by the property test above). Now it
    is counted and the real feed goes on."""
    relay, one, attacker = hall
    last = relay.status()["boards"]["1"]["last_seq"]
    illegal = {"type": "move", "t": 100.0, "ply": 7, "uci": "e1e8", "san": "Ke8",
               "fen": _fen_after(OPERA_GAME[:6]), "by": "white", "speech": ""}  # fmt: skip
    resumed = {"type": "game_resumed", "t": 99.0, "ply": 6, "fen": _fen_after(OPERA_GAME[:6])}
    await attacker.send(f"{BASE}/1/events", _envelope(relay, "1", illegal, seq=last + 500_002,
                                                      prev=last + 500_001))  # fmt: skip
    await attacker.send(f"{BASE}/1/events", _envelope(relay, "1", resumed, seq=last + 500_001))
    for event in game_feed(OPERA_GAME[:8])[-4:]:
        one.publish("1", event)
    assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:8], 10), relay.status()
    assert "the move is not legal in the game" in relay.status()["boards"]["1"]["rejected"]
    assert set((await _pages_answer(relay)).values()) == {200}


# -- without the hall's key: a restart of a game with moves is the arbiter's too --------------


@pytest.fixture
async def playing(own_broker):
    """A club's plain set-up: a relay without keys, with its console's token; board 1
    has played six plies of a game not over."""
    relay = Relay("127.0.0.1", own_broker.port, TOURNAMENT, "3", address="127.0.0.1", port=0,
                  token=RELAY_TOKEN)  # fmt: skip
    one = _board(own_broker.port, "1")
    async with _playing(relay, {"1": one}, own_broker.port) as attacker:
        yield relay, one, attacker


def _held(relay: Relay) -> dict:
    return relay.status()["boards"]["1"].get("restart_held") or {}


def _restarts(relay: Relay) -> list[tuple[str, dict]]:
    """A login wiping board 1's game three ways: a new game (events), a state of a
    new game, a takeback to the start."""
    start = {"type": "game_start", "t": 90.0, "fen": chess.STARTING_FEN}
    events = [start, *[{**e, "t": 91.0 + i} for i, e in enumerate(game_feed(OPERA_GAME[:2])[1:])]]
    return [("events", _envelope(relay, "1", e, seq=_last_seq(relay, "1") + 1 + i,
                                 prev=_last_seq(relay, "1") + i))
            for i, e in enumerate(events)]  # fmt: skip


@pytest.mark.parametrize("how", ["new game", "state of a new game", "takeback to the start"])
async def test_without_keys_a_login_s_restart_of_a_game_with_moves_is_held(playing, how):
    """Issue 24's remaining restart hole, as far as the rules close it without keys:
    a new game (or a takeback deeper than two half-moves) over a game with moves is
    held for the arbiter like one over a finished game, never shown; and the real
    board's next move, numbered below the forgery, goes on with the real game."""
    relay, one, attacker = playing
    if how == "new game":
        messages = _restarts(relay)
    elif how == "state of a new game":
        messages = [("state", _state(relay, "1", moves=[], clock=None))]
    else:
        takeback = {"type": "takeback", "t": 90.0, "ply": 1, "fen": chess.STARTING_FEN}
        messages = [("events", _envelope(relay, "1", takeback))]
    for leaf, payload in messages:
        await attacker.send(f"{BASE}/1/{leaf}", payload)
    assert await _wait(lambda: "plies" in _held(relay), 10), relay.status()
    assert _moves(relay, "1") == OPERA_GAME[:6], "the game shown is not wiped"
    assert set((await _pages_answer(relay, ("1",))).values()) == {200}
    for event in game_feed(OPERA_GAME[:8])[-4:]:  # the real board plays on
        one.publish("1", event)
    assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:8]), relay.status()
    assert await _wait(lambda: not _held(relay)), relay.status()


async def test_without_keys_a_board_s_own_takeback_of_a_move_is_taken(playing):
    relay, one, _attacker = playing
    one.publish("1", {"type": "takeback", "t": 70.0, "ply": 6, "fen": _fen_after(OPERA_GAME[:5])})
    assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:5]), relay.status()
    for event in game_feed(OPERA_GAME[:8])[-6:]:  # the move again, and two more
        one.publish("1", event)
    assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:8]), relay.status()
    assert not _held(relay) and relay.status()["rejected"] == 0, relay.status()


async def test_colours_reversed_the_arbiter_shows_the_new_game_from_the_relay_console(
    own_broker,
):
    """A club without keys: after two moves each the players find their colours
    reversed, and the arbiter has the game started again (Article 7.3: fewer than
    ten moves). The board sees the pieces set up again: its new game is held on the
    relay (the old one stays shown) until the arbiter presses New game on the
    relay's console; then the new game is shown and goes on."""
    relay = Relay("127.0.0.1", own_broker.port, TOURNAMENT, "3", address="127.0.0.1", port=0,
                  token=RELAY_TOKEN)  # fmt: skip
    one = _board(own_broker.port, "1")
    await relay.start()
    await one.start()
    try:
        for event in game_feed(OPERA_GAME[:4]):
            one.publish("1", event)
        assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:4]), relay.status()
        again = game_feed(["d2d4", "d7d5", "c2c4"], start=100.0)
        for event in again[:5]:  # the new game and its first two plies
            one.publish("1", event)
        assert await _wait(lambda: _held(relay).get("plies") == 2), relay.status()
        assert _moves(relay, "1") == OPERA_GAME[:4]
        url = f"http://127.0.0.1:{relay.port}/control/new_game?board=1"
        async with aiohttp.ClientSession() as session, session.post(
            url, json={}, headers={"Authorization": f"Bearer {RELAY_TOKEN}"}
        ) as response:  # fmt: skip
            assert response.status == 200, await response.text()
        assert await _wait(lambda: _moves(relay, "1") == ["d2d4", "d7d5"]), relay.status()
        for event in again[5:]:
            one.publish("1", event)
        assert await _wait(lambda: _moves(relay, "1") == ["d2d4", "d7d5", "c2c4"])
    finally:
        await one.stop()
        await relay.stop()


async def test_a_clock_set_before_the_first_move_is_taken(own_broker):
    """Before the first move the clock is being set: the last game's times or the
    clock's default (5:00), then the time control. The relay took the first report
    as a baseline and dropped the next as "the white clock runs faster than the time
    elapsed" (or as gaining more than the time control allows), and showed the wrong
    clock (the broker-restart test's drop, issue 24)."""
    relay = Relay("127.0.0.1", own_broker.port, TOURNAMENT, "3", address="127.0.0.1", port=0)
    one = _board(own_broker.port, "1")
    await relay.start()
    await one.start()
    try:
        feed = game_feed(OPERA_GAME[:2], start=3.0, base=5400.0)
        settings = [(0.1, 300.0), (2.5, 182.0), (2.9, 5400.0)]
        setting = [{"type": "clock", "t": t, "white": v, "black": v, "running": None}
                   for t, v in settings]  # fmt: skip
        for event in [feed[0], *setting]:
            one.publish("1", event)

        def shown() -> float | None:
            board = relay.hub.boards.get("1")
            return (board.record.clock or {}).get("white") if board else None

        assert await _wait(lambda: shown() == 5400.0, 10), (shown(), relay.status())
        for event in feed[1:]:
            one.publish("1", event)
        assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:2]), relay.status()
        assert relay.status()["rejected"] == 0, relay.status()
    finally:
        await one.stop()
        await relay.stop()
