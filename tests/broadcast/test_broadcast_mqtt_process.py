"""The shipped daemon *process* publishing a real game over MQTT to the real relay.

A test process has ``ssl`` imported already (aiohttp's client imports it), so only
the daemon's own process shows what a memory trick on ``ssl`` does to paho: plain
MQTT died after about a dozen events (issue 24). Here the real ``dgt-bridge run``
reads the real DGT capture from the emulator on a pseudo-terminal and publishes to
a real Mosquitto (plain, and the shipped TLS configuration); every move it decided
must reach the relay through the broker, in order. The plain case is the issue-24
check: the relay can only hold every move if the daemon's plain client lived
through all of the game's events (a separate broker-only run proved nothing more
and cost 40 s of the suite).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.broadcast.mqtt_helpers import MOSQUITTO, Broker, wait_until
from tests.broadcast.mqtt_helpers import stop_processes as _stop

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed")


def _command(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(cwd)}
    for name in list(env):
        if name.startswith("DGT_BRIDGE_"):
            env.pop(name)  # the daemon as the unit runs it: its config file only
    return subprocess.Popen(
        [sys.executable, "-m", "daemon", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )


def _moves(lines: list[dict]) -> list[str]:
    return [event["uci"] for event in lines if event.get("type") == "move"]


PLIES = 16  # the daemon's process died after about a dozen events: 16 plies are 35 events
# in the feed (15 moves, 18 clock reports), some 9 moves of them after the broker restart


#: The emulator plays the capture this many times faster than its hands moved.
SPEED = 10


def _opening_of_the_capture(shared: Path, out: Path) -> Path:
    """The real capture's first ``PLIES`` plies, each clock report kept only where
    the running side changes (the emulator plays every report that stood a second
    at nearly real time, so the whole capture would take minutes). The clock's
    times run ``SPEED`` times slower too (what each side used, divided by it): played
    faster, the capture's own times fell faster than the time the daemon stamps its
    events with, and the relay rightly refuses a clock that runs faster than the time
    elapsed (30 s slack: a broker restart's gap at 10x went past it)."""
    capture = shared / "data" / "dgt-capture-1" / "sensor-log.jsonl"
    kept, running, fields = [], object(), 0
    start: dict[str, float] = {}
    for line in capture.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        event = json.loads(line)
        if "clock" in event:
            clock = event["clock"]
            if clock.get("running") == running:
                continue
            running = clock.get("running")
            fields += 1
            if fields > PLIES + 1:
                break
            for side in ("white", "black"):
                first = start.setdefault(side, clock[side])
                clock[side] = round(first - (first - clock[side]) / SPEED, 2)
            line = json.dumps(event)
        kept.append(line)
    out.write_text("\n".join(kept) + "\n")
    return out


@pytest.mark.parametrize("secure", [False, True], ids=["plain", "tls"])
async def test_every_move_reaches_the_relay_in_order_also_after_a_broker_restart(
    tmp_path, shared, secure
):
    """The daemon process, a real Mosquitto (plain, or the shipped TLS and ACL
    configuration) and the real relay: every move the daemon decides is on the
    relay's board, in order, although the broker is restarted in mid-game, and the
    relay drops nothing. (It once dropped, about one run in fifteen, the clock set
    before the first move, the emulator's 5:00 then the capture's 3:02, as "running
    faster than the time elapsed": test_broadcast_relay_rules'
    test_a_clock_set_before_the_first_move_is_taken.)"""
    import asyncio

    from hall_broker import HallBroker

    from daemon.broadcast.relay import Relay

    capture = _opening_of_the_capture(shared, tmp_path / "opening.jsonl")
    broker = HallBroker(tmp_path) if secure else Broker(tmp_path)
    broker.start()
    mqtt_lines = f"    host: 127.0.0.1\n    port: {broker.port}\n    keepalive: 5\n"
    if secure:
        login = broker.login("board-1")
        mqtt_lines += (
            f"    tournament: {login.tournament}\n    username: board-1\n"
            f"    password: {login.password}\n    ca_file: {login.ca_file}\n"
            f"    cert_file: {login.cert_file}\n    key_file: {login.key_file}\n"
        )
        tournament, settings = login.tournament, broker.login("relay")
    else:
        mqtt_lines += "    tournament: club\n"
        tournament, settings = "club", None
    config = tmp_path / "dgt-bridge.yaml"
    config.write_text(
        "broadcast:\n  enabled: true\n  address: 127.0.0.1\n  port: 0\n  round: '3'\n"
        "  mqtt:\n    enabled: true\n" + mqtt_lines
    )
    relay = Relay("127.0.0.1", broker.port, tournament, "3", address="127.0.0.1", port=0,
                  mqtt_settings=settings)  # fmt: skip
    await relay.start()
    emulator = _command(
        "emulate", "--log", str(capture), "--speed", str(SPEED), "--delay", "3",
        "--dir", str(tmp_path / "board"), cwd=tmp_path,
    )  # fmt: skip
    daemon = None
    feed = tmp_path / "feed.jsonl"

    def decided() -> list[str]:
        if not feed.exists():
            return []
        return _moves([json.loads(line) for line in feed.read_text().splitlines() if line])

    def relayed() -> list[str]:
        board = relay.hub.boards.get("1")
        return [m.uci for m in board.record.moves] if board else []

    async def until(condition, timeout: float) -> bool:
        return await asyncio.to_thread(wait_until, condition, timeout)

    try:
        port = emulator.stdout.readline().strip()
        assert port, emulator.stderr.read()
        daemon = _command(
            "run", "--config", str(config), "--port", port, "--no-speech",
            "--storage", str(tmp_path / "games"), "--events", str(feed), cwd=tmp_path,
        )  # fmt: skip
        assert await until(lambda: len(relayed()) >= 6, 45), (decided(), json.dumps(relay.status()))
        broker.stop()  # in mid-game
        await asyncio.sleep(1)
        broker.start()
        assert await until(lambda: len(decided()) >= PLIES - 1, 120), decided()
        assert await until(lambda: relayed() == decided(), 30), (relayed(), decided())
        assert relay.status()["rejected"] == 0, relay.status()
        assert daemon.poll() is None, daemon.stderr.read()
    finally:
        _stop(daemon, emulator)
        await relay.stop()
        broker.stop()
    log = daemon.stderr.read() + daemon.stdout.read() if daemon else ""
    assert "Traceback" not in log, log


async def test_only_the_daemon_process_s_arbiter_changes_a_result_on_the_relay(tmp_path):
    """Issue 24 through the real ``dgt-bridge run`` on the emulator, a real
    Mosquitto and the real relay with the hall's key, the daemon with its board's
    key (``broadcast.mqtt.board_key_file``, as ``dgt-bridge relay --print-board-key``
    prints it): the arbiter's result and its correction, POSTed to the daemon with
    the token, reach the relay signed; the board's login (the public origin, the
    next seq) flipping the result, with ``"arbiter": true`` or by replaying the game
    from a new start, is dropped unsigned before it touches the board, and the
    relay's pages stay up."""
    import asyncio

    import aiohttp
    from mqtt_helpers import free_port
    from test_broadcast_relay_rules import Attacker

    from daemon.broadcast import boardkeys
    from daemon.broadcast.relay import UNSIGNED, Relay

    hall, token, web = "the process test's hall key", "process-token", free_port()
    (tmp_path / "board-1.key").write_text(boardkeys.board_key(hall, "club", "1") + "\n")
    broker = Broker(tmp_path)
    broker.start()
    config = tmp_path / "dgt-bridge.yaml"
    config.write_text(
        f"broadcast:\n  enabled: true\n  address: 127.0.0.1\n  port: {web}\n  token: {token}\n"
        '  round: "1"\n'
        f"  mqtt:\n    enabled: true\n    host: 127.0.0.1\n    port: {broker.port}\n"
        f"    tournament: club\n    board_key_file: {tmp_path}/board-{{board}}.key\n"
    )
    relay = Relay("127.0.0.1", broker.port, "club", "1", address="127.0.0.1", port=0,
                  hall_key=hall)  # fmt: skip
    await relay.start()
    attacker = Attacker(broker.port)
    emulator = _command("emulate", "--dir", str(tmp_path / "board"), cwd=tmp_path)
    daemon = None

    def result() -> str | None:
        board = relay.hub.boards.get("1")
        return board.record.result if board else None

    async def until(condition, timeout: float = 10) -> bool:
        return await asyncio.to_thread(wait_until, condition, timeout)

    async def arbiter(result: str) -> None:
        async with aiohttp.ClientSession() as session, session.post(
            f"http://127.0.0.1:{web}/control/result", json={"result": result},
            headers={"Authorization": f"Bearer {token}"},
        ) as response:  # fmt: skip
            assert response.status == 202, await response.text()

    def envelope(event: dict, step: int = 1) -> dict:
        shown = relay.status()["boards"]["1"]
        return {"origin": shown["origin"], "seq": shown["last_seq"] + step,
                "prev": shown["last_seq"], "board": "1", "event": event}  # fmt: skip

    try:
        port = emulator.stdout.readline().strip()
        assert port, emulator.stderr.read()
        daemon = _command("run", "--config", str(config), "--port", port, "--no-speech",
                          "--storage", str(tmp_path / "games"), cwd=tmp_path)  # fmt: skip
        assert await until(lambda: relay.hub.boards.get("1") is not None, 20), relay.status()
        await arbiter("1-0")
        assert await until(lambda: result() == "1-0"), relay.status()
        flip = {"type": "game_end", "t": 9.0, "result": "0-1", "reason": "arbiter",
                "arbiter": True}  # fmt: skip
        await attacker.send("dgt-bridge/club/1/1/events", envelope(flip))
        restart = {"type": "game_start", "t": 9.5, "fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/"
                   "RNBQKBNR w KQkq - 0 1"}  # fmt: skip
        await attacker.send("dgt-bridge/club/1/1/events", envelope(restart))
        await attacker.send("dgt-bridge/club/1/1/events", {**envelope(flip, 2), "prev": None})
        assert await until(lambda: relay.status()["boards"]["1"].get("rejected") == {UNSIGNED: 3})
        assert result() == "1-0" and "restart_held" not in relay.status()["boards"]["1"]
        await arbiter("0-1")  # the arbiter's correction, on the daemon
        assert await until(lambda: result() == "0-1"), relay.status()
        async with aiohttp.ClientSession() as session:
            for path in ("/", "/state.json", "/game.pgn", "/relay.json", "/board.svg?board=1"):
                async with session.get(f"http://127.0.0.1:{relay.port}{path}") as response:
                    assert response.status == 200, path
        assert daemon.poll() is None, daemon.stderr.read()
    finally:
        attacker.close()
        _stop(daemon, emulator)
        await relay.stop()
        broker.stop()
    log = daemon.stderr.read() + daemon.stdout.read() if daemon else ""
    assert "Traceback" not in log, log
