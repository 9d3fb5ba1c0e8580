"""Per-board keys (issue 24): with the hall's key the relay takes from a board only
what is signed with that board's own key, so the board's broker login alone forges
nothing, and a stolen Pi signs for its own boards only.

A real Mosquitto, the real relay and one daemon's real publishers for boards 1 and
2 (a hall Pi, ``board_key_file`` with ``{board}``); the attacker is a bare MQTT
client, as anyone holding a board's login (the plain broker lets it write
anywhere: the ACL would keep it to its board, which is all these attacks need)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import chess
import pytest
from broadcast_feed import OPERA_GAME, game_feed
from mqtt_helpers import MOSQUITTO, Recorder, wait_until
from test_broadcast_relay_rules import (
    Attacker,
    _envelope,
    _fen_after,
    _materialize,
    _moves,
    _pages_answer,
    _playing,
    _state,
    forgeries,
)

from daemon.broadcast import (
    BoardSettings,
    Broadcaster,
    BroadcastSettings,
    MqttSettings,
    boardkeys,
)
from daemon.broadcast.relay import MISSIGNED, UNSIGNED, Relay
from daemon.config import ConfigError, load_text

pytestmark = pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed")

HALL = "the hall's key, which only the relay holds"
TOURNAMENT = "rules"  # the topics test_broadcast_relay_rules' helpers write to
BASE = f"dgt-bridge/{TOURNAMENT}/3"
ROOT = Path(__file__).resolve().parents[2]


def _key_files(directory: Path, boards: tuple[str, ...] = ("1", "2")) -> str:
    """Each board's key file, as ``--print-board-key`` makes them; the template."""
    for board in boards:
        key = boardkeys.board_key(HALL, TOURNAMENT, board)
        (directory / f"board-{board}.key").write_text(key + "\n")
    return str(directory / "board-{board}.key")


def _pi(port: int, key_file: str, boards: tuple[str, ...] = ("1", "2")) -> Broadcaster:
    """One daemon reading several boards, each signing with its own key, each board
    connected (its state and its status say so from the first message on, as a
    daemon's do once its boards answer)."""
    pi = Broadcaster(BroadcastSettings(
        enabled=False, round="3",
        boards=[BoardSettings(id=b, white=f"White {b}", black=f"Black {b}") for b in boards],
        mqtt=MqttSettings(enabled=True, host="127.0.0.1", port=port, tournament=TOURNAMENT,
                          board_key_file=key_file),
    ))  # fmt: skip
    for board in boards:
        pi.set_status(board, connected=True)
    return pi


async def _wait(condition, timeout: float = 30.0) -> bool:
    return await asyncio.to_thread(wait_until, condition, timeout)


def _board_status(relay: Relay, board: str) -> dict:
    return relay.status()["boards"][board]


def _shown(relay: Relay, board: str = "1") -> dict:
    """What the page shows of a board (its moves, result, clock, names, link)."""
    state = json.loads(json.dumps(relay.hub.page_state(board)))
    return {key: state.get(key) for key in ("moves", "result", "clock", "headers", "status")}


@pytest.fixture
async def keyed(own_broker, tmp_path):
    """A relay with the hall's key; a Pi of boards 1 (six plies) and 2 (four), each
    signing with its own key; a recorder of every message; an attacker."""
    relay = Relay("127.0.0.1", own_broker.port, TOURNAMENT, "3", address="127.0.0.1", port=0,
                  hall_key=HALL)  # fmt: skip
    recorder = Recorder(own_broker.port, f"{BASE}/#")
    pi = _pi(own_broker.port, _key_files(tmp_path))
    try:
        async with _playing(relay, {"1": pi, "2": pi}, own_broker.port) as attacker:
            assert await _wait(lambda: relay.hub.boards["1"].status.connected), relay.status()
            assert relay.status()["rejected"] == 0
            assert relay.status()["signatures"] == "board keys"
            # the recorder is a subscriber of its own: it may lag the relay
            assert await _wait(lambda: _recorded_up_to(relay, recorder)), relay.status()
            yield relay, pi, attacker, recorder
    finally:
        recorder.close()


def _recorded_up_to(relay: Relay, recorder: Recorder) -> bool:
    """The recorder holds each board's last event the relay took (the forgeries and
    replays are made of what it recorded)."""
    for board in ("1", "2"):
        last = _board_status(relay, board)["last_seq"]
        with recorder.lock:
            events = [p for t, p, _ in recorder.messages if t == f"{BASE}/{board}/events"]
        if last not in {json.loads(p).get("seq") for p in events}:
            return False
    return True


async def _settled(relay: Relay, attacker: Attacker, count: int) -> None:
    """Everything sent so far dealt with: a broken message on board 2's topic, sent
    after it, is counted (the ``count``-th)."""
    await attacker.send(f"{BASE}/2/state", b"sentinel")
    assert await _wait(lambda: sum(_board_status(relay, "2").get("rejected", {}).values())
                       >= count, 10), relay.status()  # fmt: skip


def _signed_with(key: str, topic: str, message: dict) -> bytes:
    return boardkeys.sign(key, topic, json.dumps(message, separators=(",", ":")).encode())


def _forgeries(relay: Relay, recorder: Recorder) -> dict[str, list[tuple[str, bytes]]]:
    """What a board's login sends on board 1's topics: each a message the rules would
    take from the board itself (the public origin, the next seq, a legal move)."""
    real_next = _envelope(relay, "1", game_feed(OPERA_GAME[:7])[-2])
    restart = _envelope(relay, "1", {"type": "game_start", "t": 90.0, "fen": chess.STARTING_FEN})
    flip = _envelope(relay, "1", {"type": "game_end", "t": 91.0, "result": "0-1",
                                  "reason": "arbiter", "arbiter": True})  # fmt: skip
    resumed = {"type": "game_resumed", "t": 65.0, "ply": 6, "fen": _fen_after(OPERA_GAME[:6])}
    ahead = _envelope(relay, "1", resumed, seq=relay.status()["boards"]["1"]["last_seq"] + 900_000)
    status = {"online": False, "origin": _board_status(relay, "1")["origin"], "board": "1",
              "connected": False, "battery": None, "n": 10**6, "seq": 2}  # fmt: skip
    other_key = boardkeys.board_key(HALL, TOURNAMENT, "2")
    elsewhere = boardkeys.board_key(HALL, "another", "1")
    board_2 = [p for t, p, _ in recorder.messages if t == f"{BASE}/2/events"][-1]

    def plain(message: dict) -> bytes:
        return json.dumps(message, separators=(",", ":")).encode()

    return {
        "the real next move, unsigned": [("events", plain(real_next))],
        "a new game, unsigned": [("events", plain(restart))],
        "the arbiter's result flipped, unsigned": [("events", plain(flip))],
        "a state of a new game, unsigned": [("state", plain(_state(relay, "1", moves=[])))],
        "the board offline, unsigned": [("status", plain(status))],
        "a seq far ahead, unsigned": [("events", plain(ahead))],
        "signed with board 2's key": [
            ("events", _signed_with(other_key, f"{BASE}/1/events", real_next)),
            ("events", _signed_with(other_key, f"{BASE}/1/events", flip)),
        ],
        "signed with another tournament's key for board 1": [
            ("events", _signed_with(elsewhere, f"{BASE}/1/events", real_next)),
        ],
        "board 2's own signed event on board 1's topic": [("events", board_2)],
    }


FORGERIES = ["the real next move, unsigned", "a new game, unsigned",
             "the arbiter's result flipped, unsigned", "a state of a new game, unsigned",
             "the board offline, unsigned", "a seq far ahead, unsigned",
             "signed with board 2's key", "signed with another tournament's key for board 1",
             "board 2's own signed event on board 1's topic"]  # fmt: skip


@pytest.mark.parametrize("forgery", FORGERIES)
async def test_with_the_hall_key_a_board_s_login_alone_forges_nothing(keyed, forgery):
    """No move, restart, result, status or seq jump from the login: each is dropped
    before it touches the board (counted: not signed, or the signature does not
    match), so nothing is held and the real board is never one event behind: its
    next move is taken at once, with no fork to wait out."""
    relay, pi, attacker, recorder = keyed
    messages = _forgeries(relay, recorder)[forgery]
    before = _shown(relay)
    last_seq = _board_status(relay, "1")["last_seq"]
    for leaf, payload in messages:
        await attacker.send(f"{BASE}/1/{leaf}", payload)
    assert await _wait(lambda: relay.status()["rejected"] >= len(messages), 10), relay.status()
    shown = _board_status(relay, "1")
    reason = MISSIGNED if "signed with" in forgery or "board 2" in forgery else UNSIGNED
    assert shown["rejected"] == {reason: len(messages)}, shown
    assert _shown(relay) == before, "board 1 as it was: moves, result, clock, names, link"
    assert shown["last_seq"] == last_seq and not shown["resync"] and "restart_held" not in shown
    assert _moves(relay, "2") == OPERA_GAME[:4]
    for event in game_feed(OPERA_GAME[:7])[-2:]:  # the real next move, and its clock
        pi.publish("1", event)
    assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:7], 10), relay.status()
    assert not _board_status(relay, "1")["resync"]
    assert set((await _pages_answer(relay)).values()) == {200}


async def test_byte_for_byte_replays_of_signed_messages_fall_to_the_origin_and_seq_rules(
    keyed, tmp_path
):
    """A signature does not stop a replay: the relay's own rules do. An earlier
    event is a duplicate, an earlier state is behind the record, an earlier status
    is older than one taken (also the last one before the board's goodbye), and
    the board's previous run (its state, its first event) never replaces the
    newer run."""
    relay, pi, attacker, recorder = keyed
    mine = [(t.rsplit("/", 1)[1], p) for t, p, _ in recorder.messages
            if t.startswith(f"{BASE}/1/") and not t.endswith("/pgn")]  # fmt: skip
    events = [p for leaf, p in mine if leaf == "events"]
    states = [p for leaf, p in mine if leaf == "state"]
    statuses = [p for leaf, p in mine if leaf == "status"]
    assert events and states and statuses and all(boardkeys.is_signed(p) for _, p in mine)
    before, duplicates = _shown(relay), relay.status()["duplicates"]
    await attacker.send(f"{BASE}/1/events", events[0])  # the game_start again
    await attacker.send(f"{BASE}/1/events", events[3])
    await attacker.send(f"{BASE}/1/state", states[2])  # an early state
    await _settled(relay, attacker, 1)
    assert relay.status()["duplicates"] == duplicates + 2
    assert _shown(relay) == before and relay.status()["rejected"] == 1, relay.status()

    # the Pi's goodbye (offline), then its last online status again: still offline
    online = [p for p in statuses if json.loads(p)["online"]]
    await pi.stop()
    assert await _wait(lambda: not relay.hub.boards["1"].status.connected, 10)
    await attacker.send(f"{BASE}/1/status", online[-1])
    await attacker.send(f"{BASE}/1/status", online[0])
    await _settled(relay, attacker, 2)
    assert _board_status(relay, "1")["rejected"] == {"a status older than one taken (a replay)": 2}
    assert not relay.hub.boards["1"].status.connected

    # the board's next run (a new origin, numbered later), then its older run replayed
    await asyncio.sleep(0.01)  # the new run numbers from a later millisecond
    newer = _pi(relay.broker_port, str(tmp_path / "board-{board}.key"), ("1",))
    await newer.start()
    try:
        for event in game_feed(OPERA_GAME[:8]):
            newer.publish("1", event)
        assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:8]), relay.status()
        for leaf, payload in (("state", states[-1]), ("events", events[0]),
                              ("status", online[-1])):  # fmt: skip
            await attacker.send(f"{BASE}/1/{leaf}", payload)
        await _settled(relay, attacker, 3)
        assert _moves(relay, "1") == OPERA_GAME[:8]
        rejected = _board_status(relay, "1")["rejected"]
        for reason in ("a state of an older run", "an event of an older run",
                       "a status of an older run"):  # fmt: skip
            assert rejected.get(reason) == 1, rejected
    finally:
        await newer.stop()


async def test_with_the_hall_key_the_arbiter_s_decisions_are_the_board_s_signed_ones(keyed):
    """The arbiter's result and new game come through the board's own daemon, signed
    with its key and marked ``arbiter``; the board's own new game over a game with
    moves is its daemon's (signed), so it is shown at once, not held; over a finished
    game it is held until the arbiter's new game."""
    relay, pi, _attacker, _recorder = keyed
    pi.publish("1", {"type": "game_end", "t": 70.0, "result": "1-0", "reason": "resignation"})
    assert await _wait(lambda: relay.hub.boards["1"].record.result == "1-0")
    pi.publish("1", {"type": "game_end", "t": 71.0, "result": "0-1", "reason": "resignation"})
    pi.publish("1", {"type": "game_end", "t": 72.0, "result": "1/2-1/2", "reason": "arbiter",
                     "arbiter": True})  # fmt: skip
    assert await _wait(lambda: relay.hub.boards["1"].record.result == "1/2-1/2"), relay.status()
    assert _board_status(relay, "1")["rejected"] == {  # the board's event, its state after it
        "the result is final once given (the arbiter's console changes it)": 2
    }
    for event in game_feed(OPERA_GAME[:2], start=100.0):  # pieces set up again after the end
        pi.publish("1", event)
    assert await _wait(lambda: (_board_status(relay, "1").get("restart_held") or {})
                       .get("plies") == 2), relay.status()  # fmt: skip
    assert relay.hub.boards["1"].record.result == "1/2-1/2"
    pi.publish("1", {**game_feed([])[0], "t": 110.0, "arbiter": True})
    assert await _wait(lambda: _moves(relay, "1") == []), relay.status()
    assert "restart_held" not in _board_status(relay, "1")
    # board 2, four plies, no result: the daemon's own new game is shown at once
    for event in game_feed(["d2d4"], start=200.0):
        pi.publish("2", event)
    assert await _wait(lambda: _moves(relay, "2") == ["d2d4"]), relay.status()
    assert "restart_held" not in _board_status(relay, "2")


async def test_no_forgery_hypothesis_makes_changes_a_board_with_the_hall_key(keyed):
    """Property: whatever the forgeries of test_broadcast_relay_rules' property test
    send on board 1's topics (a legal next move, a state of another game, a clock, a
    result flipped, a restart), unsigned or signed with board 2's key, board 1 shows
    exactly what it showed, with no fork to resync, and every route answers 200."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    relay, _, attacker, _recorder = keyed
    before = _shown(relay)
    other_key = boardkeys.board_key(HALL, TOURNAMENT, "2")
    recipes: list[tuple[dict, bool]] = []

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(recipe=forgeries(), signed=st.booleans())
    def collect(recipe: dict, signed: bool) -> None:
        recipes.append((recipe, signed))

    collect()
    sent = 0
    for recipe, signed in recipes:
        for leaf, message in _materialize(relay, recipe):
            topic = f"{BASE}/1/{leaf}"
            text = json.dumps(message, separators=(",", ":")).encode()
            await attacker.send(topic, boardkeys.sign(other_key, topic, text) if signed else text)
            sent += 1
    assert await _wait(lambda: relay.status()["rejected"] >= sent, 30), relay.status()
    assert relay.status()["rejected"] == sent
    assert _shown(relay) == before
    assert not _board_status(relay, "1")["resync"]
    assert set((await _pages_answer(relay)).values()) == {200}


async def test_a_relay_without_the_hall_key_takes_signed_messages(own_broker, tmp_path):
    """A Pi with its board key and a relay not (yet) given the hall's: the signature
    is one more member of the JSON, and the game arrives whole."""
    relay = Relay("127.0.0.1", own_broker.port, TOURNAMENT, "3", address="127.0.0.1", port=0)
    pi = _pi(own_broker.port, _key_files(tmp_path, ("1",)), ("1",))
    async with _playing(relay, {"1": pi}, own_broker.port):  # six plies shown
        assert relay.status()["rejected"] == 0 and relay.status()["signatures"] == "none"


# -- giving each Pi its key ------------------------------------------------------------


def _dgt_bridge(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "daemon", *args], capture_output=True,
                          text=True, timeout=60, cwd=cwd,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                               "HOME": str(cwd)})  # fmt: skip


def test_the_relay_prints_each_board_s_key_and_check_config_names_a_bad_one(tmp_path):
    """``dgt-bridge relay --hall-key-file F --tournament T --print-board-key N`` (no
    --round) prints board N's key, which is ``boardkeys.board_key``; the Pi's
    ``board_key_file`` names it (``{board}`` for a Pi of several boards), and
    ``check-config`` names a missing or damaged one by its file, line and board."""
    hall = tmp_path / "hall.key"
    hall.write_text(HALL + "\n")
    printed = _dgt_bridge("relay", "--hall-key-file", str(hall), "--tournament", TOURNAMENT,
                          "--print-board-key", "2", cwd=tmp_path)  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == boardkeys.board_key(HALL, TOURNAMENT, "2") + "\n"
    assert printed.stdout.strip() != boardkeys.board_key(HALL, TOURNAMENT, "1")
    (tmp_path / "short.key").write_text("secret\n")
    short = _dgt_bridge("relay", "--hall-key-file", str(tmp_path / "short.key"), "--tournament",
                        TOURNAMENT, "--print-board-key", "2", cwd=tmp_path)  # fmt: skip
    assert short.returncode == 2 and "at least 16 characters" in short.stderr

    (tmp_path / "board-1.key").write_text(boardkeys.board_key(HALL, TOURNAMENT, "1"))
    (tmp_path / "board-2.key").write_text(printed.stdout[:40])  # cut short on its way
    config = tmp_path / "pi.yaml"
    config.write_text(
        "broadcast:\n  boards:\n    - {id: '1'}\n    - {id: '2'}\n  mqtt:\n    enabled: true\n"
        f"    tournament: {TOURNAMENT}\n    board_key_file: {tmp_path}/board-{{board}}.key\n"
    )
    refused = _dgt_bridge("check-config", str(config), cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout
    assert (f"{config}, line 8: broadcast.mqtt.board_key_file: board 2's key "
            f"{tmp_path}/board-2.key: not a board key") in refused.stderr  # fmt: skip
    (tmp_path / "board-2.key").write_text(printed.stdout)
    assert _dgt_bridge("check-config", str(config), cwd=tmp_path).returncode == 0


def test_a_missing_key_file_is_named_and_arbiter_key_is_deprecated_at_its_line(tmp_path):
    text = ("broadcast:\n  mqtt:\n    enabled: true\n    arbiter_key: old\n"
            f"    board_key_file: {tmp_path}/board-{{board}}.key\n")  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        load_text(text, "pi.yaml", environ={})
    assert (caught.value.line, caught.value.key) == (5, "broadcast.mqtt.board_key_file")
    assert f"board 1's key {tmp_path}/board-1.key: no such file" in caught.value.message
    key = _key_files(tmp_path, ("1",)).replace("{board}", "1")
    assert load_text(text, "pi.yaml", environ={}).board_keys == {"1": Path(key).read_text().strip()}
    old = load_text("broadcast:\n  mqtt:\n    enabled: true\n    arbiter_key: old\n", "pi.yaml",
                    environ={})  # fmt: skip
    assert old.broadcast.mqtt.arbiter_key == "old"  # still works
    assert len(old.warnings) == 1
    assert old.warnings[0].startswith("pi.yaml, line 4: broadcast.mqtt.arbiter_key: deprecated")


def test_the_daemon_will_not_start_with_a_key_file_it_cannot_read(tmp_path):
    """``dgt-bridge run``: board 2's key file cannot be read (here a directory):
    the daemon says which board, which file and why, at start-up, and stops."""
    _key_files(tmp_path, ("1",))
    (tmp_path / "board-2.key").mkdir()
    config = tmp_path / "pi.yaml"
    config.write_text(
        "boards:\n  - {id: '1', port: /dev/null}\n  - {id: '2', port: /dev/null}\n"
        "broadcast:\n  mqtt:\n    enabled: true\n"
        f"    tournament: {TOURNAMENT}\n    board_key_file: {tmp_path}/board-{{board}}.key\n"
    )
    run = _dgt_bridge("run", "--config", str(config), "--no-speech", cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert (f"line 8: broadcast.mqtt.board_key_file: board 2's key {tmp_path}/board-2.key: "
            "cannot be read") in run.stderr  # fmt: skip
    assert "Traceback" not in run.stderr
