"""paho driven by the daemon's event loop (``daemon.broadcast.mqttloop``): a hall's
boards publish over their own connections with no thread of their own, and a broker
that is not there yet, or goes away, is connected to again without a lost event."""

from __future__ import annotations

import asyncio
import logging
import threading

from broadcast_feed import OPERA_GAME, game_feed
from mqtt_helpers import Recorder, wait_until

from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings, MqttSettings


def _hall(port: int, tournament: str, boards: int) -> Broadcaster:
    return Broadcaster(
        BroadcastSettings(
            enabled=False,
            round="3",
            boards=[BoardSettings(id=str(b)) for b in range(1, boards + 1)],
            mqtt=MqttSettings(enabled=True, host="127.0.0.1", port=port, tournament=tournament),
        )
    )


async def _wait(condition, timeout: float = 30.0) -> bool:
    return await asyncio.to_thread(wait_until, condition, timeout)


def _moves(recorder: Recorder, board: str) -> list[str]:
    """The board's moves as its events reached the broker, in ``seq`` order."""
    events = {e["seq"]: e["event"] for e in recorder.events() if e["board"] == board}
    return [events[s]["uci"] for s in sorted(events) if "uci" in events[s]]


async def test_a_hall_of_twelve_boards_publishes_every_move_with_no_mqtt_thread(broker):
    """Twelve boards, twelve connections (one login each in a real hall), and every
    move of every board at the broker in order, while the daemon runs no thread for
    them: paho's reads and writes are the event loop's."""
    hall = _hall(broker.port, "onloop", 12)
    recorder = await asyncio.to_thread(Recorder, broker.port, "dgt-bridge/onloop/3/+/events")
    before = {t.ident for t in threading.enumerate()}
    await hall.start()
    try:
        assert await _wait(lambda: all(p.connected for p in hall.mqtt))
        for event in game_feed(OPERA_GAME[:10]):
            for board in range(1, 13):
                hall.publish(str(board), event)
            await asyncio.sleep(0)  # the loop writes them at its next turn
        assert await _wait(
            lambda: all(_moves(recorder, str(b)) == OPERA_GAME[:10] for b in range(1, 13))
        ), {b: len(_moves(recorder, str(b))) for b in range(1, 13)}
        running = [t.name for t in threading.enumerate() if t.ident not in before and t.is_alive()]
        # the connects' pool may stay (4 at most, idle), never a thread a board
        assert all(name.startswith("dgt-bridge-mqtt-connect") for name in running), running
        assert len(running) <= 4, running
    finally:
        recorder.close()
        await hall.stop()


async def test_a_broker_not_there_at_the_start_gets_every_event_once_it_is(own_broker, caplog):
    """The daemon starts before the broker (a hall's switch comes up late): the
    events wait, the log says once that there is no connection yet, and once the
    broker listens every event reaches it in order, with no traceback."""
    # a subscriber whose session the broker keeps: it gets what came while it was away
    recorder = await asyncio.to_thread(
        Recorder, own_broker.port, "dgt-bridge/late/3/1/events",
        client_id="late-recorder", clean_session=False,
    )  # fmt: skip
    await asyncio.to_thread(own_broker.stop)
    hall = _hall(own_broker.port, "late", 1)
    caplog.set_level(logging.DEBUG, logger="daemon.broadcast")
    await hall.start()
    try:
        feed = game_feed(OPERA_GAME[:6])
        for event in feed:
            hall.publish("1", event)
        await asyncio.sleep(2.5)  # two or three tries
        publisher = hall.mqtt[0]
        assert not publisher.connected and len(publisher.waiting) == len(feed)
        warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert [r.getMessage() for r in warnings if "no connection" in r.getMessage()][:2] == [
            f"MQTT: no connection to 127.0.0.1:{own_broker.port} ([Errno 111] Connection "
            "refused); trying again"
        ], [r.getMessage() for r in warnings]
        await asyncio.to_thread(own_broker.start)
        assert await _wait(lambda: publisher.connected, 15)
        assert await _wait(lambda: _moves(recorder, "1") == OPERA_GAME[:6], 15)
        assert not any(r.exc_info for r in caplog.records if r.levelno >= logging.WARNING)
    finally:
        recorder.close()
        await hall.stop()


async def test_an_idle_board_keeps_its_connection_with_a_check_every_quarter_keepalive(broker):
    """paho's keepalive is checked every quarter keepalive, not every second (one wake of
    an idle daemon's four a second): the ping still goes in time, and Mosquitto, which
    drops a client silent for one and a half keepalives, keeps the board connected."""
    keepalive = 6
    hall = Broadcaster(
        BroadcastSettings(
            enabled=False, round="3", boards=[BoardSettings(id="1")],
            mqtt=MqttSettings(enabled=True, host="127.0.0.1", port=broker.port,
                              tournament="idle", keepalive=keepalive),
        )
    )  # fmt: skip
    await hall.start()
    publisher = hall.mqtt[0]
    checks: list[float] = []
    loop = asyncio.get_running_loop()
    try:
        assert await _wait(lambda: publisher.connected)
        driver = publisher.driver
        assert driver.misc_every() == keepalive / 4
        misc = driver.client.loop_misc
        driver.client.loop_misc = lambda: checks.append(loop.time()) or misc()  # type: ignore[method-assign]
        sent: list[str] = []
        driver.client.on_log = lambda _c, _u, _level, line: sent.append(line)
        await asyncio.sleep(1.5 * keepalive)  # silent: no event; the broker's limit
        assert any("PINGREQ" in line for line in sent), sent
        await asyncio.sleep(0.5 * keepalive)
        assert publisher.connected, "the broker dropped an idle board"
        assert 6 <= len(checks) <= 2 * keepalive / (keepalive / 4) + 1, checks
    finally:
        await hall.stop()
