"""An authenticated, validating relay: the shipped Mosquitto example (logins,
TLS with a test CA, the ACL) started for real, and every message checked before
it touches a board."""

from __future__ import annotations

import asyncio
import json
import os
import ssl

import aiohttp
import paho.mqtt.client as mqtt
import pytest
from broadcast_feed import OPERA_GAME, game_feed
from hall_broker import TOURNAMENT, HallBroker
from mqtt_helpers import MOSQUITTO, wait_until
from pgn_check import validated_games

from benchmarks.testca import make_test_ca
from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings, Hub, MqttSettings
from daemon.broadcast.mqtt import MqttPublisher, MqttSetupError, new_client, tls_context
from daemon.broadcast.relay import Relay
from daemon.broadcast.relayrules import HELD_OVER_FINISHED

ROUND = "3"
BASE = f"dgt-bridge/{TOURNAMENT}/{ROUND}"


@pytest.fixture
def hall(tmp_path):
    if MOSQUITTO is None:
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    server = HallBroker(tmp_path)
    server.start()
    yield server
    server.stop()


async def _wait(condition, timeout: float = 60.0) -> bool:
    return await asyncio.to_thread(wait_until, condition, timeout)


def _board(hall: HallBroker, board: str) -> Broadcaster:
    return Broadcaster(BroadcastSettings(
        enabled=False, round=ROUND, event="1992",
        boards=[BoardSettings(id=board, white=f"White {board}", black=f"Black {board}")],
        mqtt=hall.login(f"board-{board}"),
    ))  # fmt: skip


class Client:
    """A bare paho client of the hall: publishes, and says how the broker took it."""

    def __init__(self, settings: MqttSettings) -> None:
        self.result: object = None
        self.done = asyncio.get_running_loop().create_future()
        loop = asyncio.get_running_loop()
        self.client = new_client(f"probe-{settings.username}-{id(self)}", settings)

        def on_connect(client, userdata, flags, reason, properties):
            loop.call_soon_threadsafe(self._settle, reason)

        def on_disconnect(client, userdata, flags, reason, properties):
            loop.call_soon_threadsafe(self._settle, f"disconnected: {reason}")

        self.client.on_connect = on_connect
        self.client.on_disconnect = on_disconnect
        self.client.reconnect_delay_set(30, 60)

    def _settle(self, value: object) -> None:
        if not self.done.done():
            self.done.set_result(value)

    async def connect(self, port: int) -> object:
        try:
            await asyncio.to_thread(self.client.connect, "127.0.0.1", port, 10)
        except (OSError, ssl.SSLError) as exc:
            return exc
        self.client.loop_start()
        try:
            return await asyncio.wait_for(self.done, 20)
        except TimeoutError:
            return "no answer"

    async def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> None:
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        await asyncio.to_thread(info.wait_for_publish, 20)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _let_in(outcome: object) -> bool:
    """The broker accepted the login (a CONNACK that is no failure); a refusal, a
    TLS error or a dropped connection is not."""
    return getattr(outcome, "is_failure", None) is False


def _moves(relay: Relay, board: str) -> list[str]:
    feed = relay.hub.boards.get(board)
    return [m.uci for m in feed.record.moves] if feed else []


async def test_the_shipped_acl_lets_a_board_write_only_its_own_topics_over_tls(hall):
    relay = Relay("127.0.0.1", hall.port, TOURNAMENT, ROUND, address="127.0.0.1", port=0,
                  event="Club Open 2026", mqtt_settings=hall.login("relay"))  # fmt: skip
    one, two = _board(hall, "1"), _board(hall, "2")
    probes: list[Client] = []
    await relay.start()
    await one.start()
    await two.start()
    try:
        feed = game_feed(OPERA_GAME[:10])
        for event in feed[:-4]:
            one.publish("1", event)
        for event in game_feed(OPERA_GAME[:2]):
            two.publish("2", event)
        assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:8]), relay.status()
        assert await _wait(lambda: _moves(relay, "2") == OPERA_GAME[:2]), relay.status()

        # Board 2's login forges board 1's game: the broker drops it (ACL).
        forged_state = json.loads(one.mqtt[0].state_message())
        forged_state["moves"] = forged_state["moves"][:2]
        forged_state["headers"]["white"] = "Forger"
        forged_state["seq"] += 10**6
        forger = Client(hall.login("board-2"))
        probes.append(forger)
        assert _let_in(await forger.connect(hall.port))
        await forger.publish(f"{BASE}/1/state", json.dumps(forged_state).encode(), retain=True)
        # The relay's own login cannot write either (it only reads).
        reader = Client(hall.login("relay"))
        probes.append(reader)
        assert _let_in(await reader.connect(hall.port))
        await reader.publish(f"{BASE}/1/state", json.dumps(forged_state).encode(), retain=True)
        # Both were acknowledged, so the broker has dealt with them before this:
        for event in feed[-4:]:
            one.publish("1", event)
        assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:10]), relay.status()
        assert relay.hub.boards["1"].record.headers.white == "White 1"
        assert relay.status()["rejected"] == 0, "the forgeries never reached the relay"

        games = validated_games(relay.hub.pgn(), 2)
        assert [g.headers["White"] for g in games] == ["White 1", "White 2"]
        assert {g.headers["Event"] for g in games} == {"Club Open 2026"}
        assert [g.headers["Board"] for g in games] == ["1", "2"]

        # No login, a wrong password, or no client certificate: not let in.
        anonymous = MqttSettings(host="127.0.0.1", port=hall.port, tls=True,
                                 ca_file=hall.login("relay").ca_file)  # fmt: skip
        wrong = hall.login("board-1")
        wrong.password = "guess"
        for settings in (anonymous, wrong, hall.login("board-1", certificate=False)):
            probe = Client(settings)
            probes.append(probe)
            outcome = await probe.connect(hall.port)
            assert not _let_in(outcome), (settings, outcome)
        # A plain (non-TLS) client gets nowhere either.
        plain = Client(MqttSettings(host="127.0.0.1", port=hall.port, username="relay",
                                    password="pw-relay"))  # fmt: skip
        probes.append(plain)
        outcome = await plain.connect(hall.port)
        assert not _let_in(outcome), outcome
    finally:
        for probe in probes:
            probe.close()
        await one.stop()
        await two.stop()
        await relay.stop()


def test_missing_certificate_files_are_said_before_connecting(tmp_path):
    settings = MqttSettings(enabled=True, tls=True, ca_file=str(tmp_path / "nope.crt"))
    with pytest.raises(MqttSetupError, match=r"ca_file .*no such file"):
        new_client("x", settings)
    (tmp_path / "bad.crt").write_text("not a certificate")
    settings.ca_file = str(tmp_path / "bad.crt")
    with pytest.raises(MqttSetupError, match="cannot be used"):
        new_client("x", settings)


def test_a_hall_s_clients_share_one_tls_context_and_a_renewed_certificate_is_read_again(
    tmp_path,
):
    """Each board's client of a hall is made with the same TLS context, which checks
    the broker's certificate and name (reading the CA store once per client was 17 ms
    of CPU each); a certificate renewed on disk makes the next client read it anew."""
    make_test_ca(tmp_path)
    files = [str(tmp_path / name) for name in ("ca.crt", "client.crt", "client.key")]
    settings = MqttSettings(enabled=True, tls=True, ca_file=files[0], cert_file=files[1],
                            key_file=files[2])  # fmt: skip
    first = tls_context(*files)
    assert first.verify_mode == ssl.CERT_REQUIRED and first.check_hostname
    assert tls_context(*files) is first
    for board in ("board-1", "board-2"):
        assert new_client(board, settings)._ssl_context is first
    stat = (tmp_path / "ca.crt").stat()
    os.utime(tmp_path / "ca.crt", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert new_client("board-3", settings)._ssl_context is not first


# -- validation: the relay fed directly, as paho would -------------------------------


def _real_messages(board: str, ucis: list[str]) -> tuple[list[bytes], list[bytes]]:
    """What a board's real publisher sends (never connected, so it keeps them)."""
    settings = BroadcastSettings(
        enabled=False, round=ROUND,
        boards=[BoardSettings(id=board, white=f"White {board}", black=f"Black {board}")],
        mqtt=MqttSettings(enabled=True, tournament=TOURNAMENT),
    )  # fmt: skip
    hub = Hub(settings, start_seq=100)
    publisher = MqttPublisher(settings, board, hub)
    hub.listeners.append(publisher.on_feed)
    states = []
    for event in game_feed(ucis):
        hub.publish(board, event)
        states.append(publisher.state_message())
    return list(publisher.waiting), states


def _deliver(relay: Relay, board: str, leaf: str, payload: bytes) -> None:
    message = mqtt.MQTTMessage(topic=f"{relay.base}/{board}/{leaf}".encode())
    message.payload = payload
    relay._on_message(relay.client, None, message)


def _forged_states(good: bytes) -> dict[str, bytes]:
    def edit(change) -> bytes:
        state = json.loads(good)
        change(state)
        return json.dumps(state).encode()

    def illegal(state):
        state["moves"][1]["uci"] = "e7e4"

    return {
        "bad tag name": edit(lambda s: s["headers"]["extra"].update({'Bad "Tag"\n': "x"})),
        "another board": edit(lambda s: s.update(board="1")),
        "illegal move": edit(illegal),
        "bad fen": edit(lambda s: s.update(start_fen="rnbqkbnr/pppppppp/8/8/8 w")),
        "bad result": edit(lambda s: s.update(result="1-0\n[Forged]")),
        "huge": edit(lambda s: s["headers"].update(white="x" * (2 * 1024 * 1024))),
        "not json": b'{"moves": [',
        "not an object": b"[1, 2]",
        "long name": edit(lambda s: s["headers"].update(white="y" * 300)),
        "bad clock": edit(lambda s: s.update(clock={"white": "soon", "black": 1})),
    }


def test_a_bad_or_forged_message_is_dropped_counted_and_never_breaks_another_board():
    relay = Relay("127.0.0.1", 1883, TOURNAMENT, ROUND, address="127.0.0.1", port=0)
    events_1, states_1 = _real_messages("1", OPERA_GAME[:6])
    events_2, states_2 = _real_messages("2", OPERA_GAME[:4])
    for payload in events_1:
        _deliver(relay, "1", "events", payload)
    _deliver(relay, "1", "state", states_1[-1])
    for payload in events_2[:3]:
        _deliver(relay, "2", "events", payload)
    _deliver(relay, "2", "state", states_2[2])  # the names come with the state
    assert _moves(relay, "1") == OPERA_GAME[:6]
    assert _moves(relay, "2") == OPERA_GAME[:1]

    forged = _forged_states(states_2[-1])
    for payload in forged.values():  # each one on board 2's state topic
        _deliver(relay, "2", "state", payload)
    envelope = json.loads(events_2[3])
    bad_events = {
        "another board": {**envelope, "board": "1"},
        "prev after seq": {**envelope, "prev": envelope["seq"] + 1},
        "unknown type": {**envelope, "event": {"type": "rewrite", "t": 1}},
        "bad move": {**envelope, "event": {**envelope["event"], "uci": "e2e9"}},
        "bad fen": {**envelope, "event": {**envelope["event"], "fen": "8/8 w"}},
        "seq text": {**envelope, "seq": "12"},
        "bad result": {**envelope, "event": {"type": "game_end", "t": 1, "result": "2-0"}},
        "players, long name": {**envelope, "event": {"type": "players", "white": "z" * 300}},
    }
    for payload in bad_events.values():
        _deliver(relay, "2", "events", json.dumps(payload).encode())
    _deliver(relay, "2", "events", b"x" * 20000)
    _deliver(relay, "2", "status", json.dumps({"online": "yes"}).encode())
    _deliver(relay, "2", "nonsense", b"{}")

    status = relay.status()
    dropped = status["boards"]["2"]["rejected"]
    expected = len(forged) + len(bad_events) + 3
    assert sum(dropped.values()) == expected == status["rejected"], dropped
    assert "rejected" not in status["boards"]["1"]
    assert _moves(relay, "2") == OPERA_GAME[:1], "board 2's game untouched"
    assert _moves(relay, "1") == OPERA_GAME[:6], "board 1 untouched"
    assert relay.hub.boards["2"].record.headers.white == "White 2"

    # The real messages still go through after all that.
    _deliver(relay, "2", "events", events_2[3])
    for payload in events_2[4:]:
        _deliver(relay, "2", "events", payload)
    _deliver(relay, "2", "state", states_2[-1])
    assert _moves(relay, "2") == OPERA_GAME[:4]
    games = validated_games(relay.hub.pgn(), 2)
    assert [g.headers["White"] for g in games] == ["White 1", "White 2"]


def test_the_next_game_after_a_forfeit_is_held_for_the_arbiter_from_its_state_or_its_event():
    """The arbiter gave a game before its first move (a forfeit), then the board's
    next game starts: held for the arbiter, who shows it from his console, whether
    the relay hears the game's start or only the board's state (a relay joining
    late, or after a hole). The state was refused as "the result is final"."""
    settings = BroadcastSettings(
        enabled=False, round=ROUND, boards=[BoardSettings(id="1", white="W", black="B")],
        mqtt=MqttSettings(enabled=True, tournament=TOURNAMENT),
    )  # fmt: skip
    hub = Hub(settings, start_seq=100)
    publisher = MqttPublisher(settings, "1", hub)
    hub.listeners.append(publisher.on_feed)
    states = []
    for event in [
        game_feed([])[0],
        {"type": "game_end", "t": 60.0, "result": "1-0", "reason": "forfeit"},
        {**game_feed([])[0], "t": 900.0},
    ]:
        hub.publish("1", event)
        states.append(publisher.state_message())  # fmt: skip
    by_events = Relay("127.0.0.1", 1883, TOURNAMENT, ROUND, address="127.0.0.1", port=0)
    for payload in publisher.waiting:
        _deliver(by_events, "1", "events", payload)
    by_states = Relay("127.0.0.1", 1883, TOURNAMENT, ROUND, address="127.0.0.1", port=0)
    for payload in states[1:]:
        _deliver(by_states, "1", "state", payload)
    for relay in (by_events, by_states):
        board = relay.status()["boards"]["1"]
        assert "restart_held" in board and board["rejected"] == {HELD_OVER_FINISHED: 1}, board
        assert relay.hub.boards["1"].record.result == "1-0", "the forfeit stays shown"
        assert relay.show_held_game("1")
        assert relay.hub.boards["1"].record.result is None, "the new game is shown"


async def test_the_relay_status_page_shows_what_was_dropped():
    relay = Relay("127.0.0.1", 9, TOURNAMENT, ROUND, address="127.0.0.1", port=0)
    await relay.start()
    try:
        _deliver(relay, "4", "events", b"not json")
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{relay.port}/relay.json"
            async with session.get(url) as response:
                shown = await response.json()
            async with session.get(f"http://127.0.0.1:{relay.port}/game.pgn") as response:
                assert response.status == 200
        assert shown["rejected"] == 1
        assert shown["boards"]["4"]["rejected"] == {"event message is not JSON": 1}
        assert shown["connected"] is False and shown["broker"] == "127.0.0.1:9"
    finally:
        await relay.stop()


def test_the_relay_command_takes_the_login_and_tls_without_a_password_on_its_command_line(
    tmp_path, monkeypatch
):
    import argparse

    from daemon.commands import relay as command

    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    (tmp_path / "pw").write_text("s3cret\n")
    args = parser.parse_args(
        ["relay", "--tournament", "t", "--round", "1", "--username", "relay",
         "--password-file", str(tmp_path / "pw"), "--ca", "ca.crt", "--cert", "c.crt",
         "--key", "c.key"]
    )  # fmt: skip
    settings = command._mqtt_settings(args)
    assert (settings.username, settings.password) == ("relay", "s3cret")
    assert (settings.ca_file, settings.cert_file, settings.key_file) == ("ca.crt", "c.crt", "c.key")
    monkeypatch.setenv(command.PASSWORD_ENV, "from-env")
    args = parser.parse_args(["relay", "--tournament", "t", "--round", "1", "--username", "r"])
    assert command._mqtt_settings(args).password == "from-env"


def test_names_set_at_a_board_mid_game_reach_the_relay_s_viewers_at_once():
    relay = Relay("127.0.0.1", 1883, TOURNAMENT, ROUND, address="127.0.0.1", port=0)
    events, states = _real_messages("1", OPERA_GAME[:4])
    for payload in events:
        _deliver(relay, "1", "events", payload)
    viewer = relay.hub.subscribe(with_state=True)
    viewer.queue.clear()  # its first snapshot
    renamed = json.loads(states[-1])
    renamed["headers"]["white"] = "Paul Morphy"
    _deliver(relay, "1", "state", json.dumps(renamed).encode())
    assert relay.hub.boards["1"].record.headers.white == "Paul Morphy"
    shown = [json.loads(m.data) for m in viewer.queue if m.kind == "snapshot"]
    assert shown and shown[-1]["boards"]["1"]["headers"]["white"] == "Paul Morphy"
    viewer.queue.clear()
    _deliver(relay, "1", "state", json.dumps(renamed).encode())
    assert not viewer.queue, "the same names again redraw nothing"


async def test_no_login_can_take_over_the_relay_s_or_a_board_s_connection(hall):
    """The shipped configuration binds each client id to its login
    (use_username_as_clientid): board 2's login giving the relay's client id, or
    board 1's, connects as itself and knocks nobody off."""
    relay = Relay("127.0.0.1", hall.port, TOURNAMENT, ROUND, address="127.0.0.1", port=0,
                  mqtt_settings=hall.login("relay"))  # fmt: skip
    one = _board(hall, "1")
    await relay.start()
    await one.start()
    drops: list[object] = []
    relay_disconnect = relay.client.on_disconnect
    relay.client.on_disconnect = lambda *a: (drops.append(a), relay_disconnect(*a))
    intruders: list[mqtt.Client] = []
    try:
        feed = game_feed(OPERA_GAME[:6])
        for event in feed[:5]:
            one.publish("1", event)
        assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:2]), relay.status()
        publisher = one.mqtt[0]
        for stolen in (relay.client._client_id.decode(), publisher.client._client_id.decode()):
            intruder = new_client(stolen, hall.login("board-2"))
            intruders.append(intruder)
            await asyncio.to_thread(intruder.connect, "127.0.0.1", hall.port, 10)
            intruder.loop_start()
        await asyncio.sleep(2)  # a takeover would have closed the relay or the board by now
        for event in feed[5:]:
            one.publish("1", event)
        assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:6]), relay.status()
        assert not drops, "the relay was knocked off"
        assert relay.connected and publisher.connected
    finally:
        for intruder in intruders:
            intruder.disconnect()
            intruder.loop_stop()
        await one.stop()
        await relay.stop()


async def test_one_daemon_of_many_boards_logs_each_board_in_under_the_shipped_acl(hall):
    """A hall Pi (one daemon, boards 1 and 2) with ``username: "board-{board}"`` and
    one password for its boards (``SAME_PASSWORD=... make-logins.sh``): each board
    logs in as its own board-N, so the shipped ACL lets each write its own topics,
    and both games reach the relay."""
    import shutil
    import subprocess

    passwd = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
    subprocess.run([passwd, "-b", str(hall.directory / "passwords"), "board-2", "pw-one"],
                   check=True, capture_output=True, timeout=30)  # fmt: skip
    hall.stop()
    hall.start()  # the broker reads its logins when it starts
    login = hall.login("board-1")
    login.username = "board-{board}"  # password: board-1's, now also board-2's
    pi = Broadcaster(BroadcastSettings(
        enabled=False, round=ROUND, event="1992",
        boards=[BoardSettings(id=b, white=f"White {b}") for b in ("1", "2")], mqtt=login,
    ))  # fmt: skip
    relay = Relay("127.0.0.1", hall.port, TOURNAMENT, ROUND, address="127.0.0.1", port=0,
                  mqtt_settings=hall.login("relay"))  # fmt: skip
    await relay.start()
    await pi.start()
    try:
        assert sorted(p.mqtt.username for p in pi.mqtt) == ["board-1", "board-2"]
        for board, moves in (("1", OPERA_GAME[:6]), ("2", OPERA_GAME[:4])):
            for event in game_feed(moves):
                pi.publish(board, event)
        assert await _wait(lambda: _moves(relay, "1") == OPERA_GAME[:6], 30), relay.status()
        assert await _wait(lambda: _moves(relay, "2") == OPERA_GAME[:4], 30), relay.status()
        assert relay.status()["rejected"] == 0
    finally:
        await pi.stop()
        await relay.stop()
