"""A hall of daemons: each board keeps the id its configuration gives it, end to end
(emulated board -> daemon -> its own page -> MQTT through a real Mosquitto -> relay)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import aiohttp
import chess
from mqtt_helpers import wait_until

from daemon.app import Daemon
from daemon.broadcast.relay import Relay
from daemon.config import load_text
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.handling import human_sensor_log

GAMES = {
    "2": ("e2e4", "e7e5", "g1f3", "b8c6"),
    "5": ("d2d4", "d7d5", "c2c4"),
}


def _settings(board_id: str, broker_port: int, tournament: str, white: str):
    text = f"""
rules:
  settle_time: 0.1
broadcast:
  address: 127.0.0.1
  port: 0
  round: "4"
  boards:
    - id: "{board_id}"
      white: "{white}"
      black: "Black {board_id}"
  mqtt:
    enabled: true
    host: 127.0.0.1
    port: {broker_port}
    tournament: {tournament}
"""
    return load_text(text, f"board{board_id}.yaml", environ={})


def _moves(hub, board_id: str) -> list[str]:
    feed = hub.boards.get(board_id)
    return [m.uci for m in feed.record.moves] if feed is not None else []


async def test_two_daemons_with_their_own_ids_relay_as_two_boards_each_with_its_game(
    tmp_path: Path, broker
) -> None:
    tournament = f"hall-{uuid.uuid4().hex[:6]}"
    relay = Relay("127.0.0.1", broker.port, tournament, "4", address="127.0.0.1", port=0)
    await relay.start()
    emulators: dict[str, BoardEmulator] = {}
    daemons: dict[str, Daemon] = {}
    try:
        for board_id in GAMES:
            (tmp_path / f"dev{board_id}").mkdir()
            emulator = BoardEmulator(tmp_path / f"dev{board_id}").start()
            emulators[board_id] = emulator
            daemon = Daemon(
                _settings(board_id, broker.port, tournament, f"White {board_id}"),
                port=emulator.port_path,
                speech=False,
                storage_dir=tmp_path / f"games{board_id}",
                resume=False,
                time_scale=6.0,
            )
            daemons[board_id] = daemon
            await daemon.start()
        assert await asyncio.to_thread(
            wait_until, lambda: all(d.link.connected for d in daemons.values()), 20
        )
        for board_id, ucis in GAMES.items():
            moves = [chess.Move.from_uci(u) for u in ucis]
            log = human_sensor_log(chess.Board(), moves, seed=int(board_id), with_clock=True)
            emulators[board_id].play(log, speed=6.0)
        for emulator in emulators.values():
            await asyncio.to_thread(emulator.wait_played, 60)

        def relayed() -> bool:
            return all(_moves(relay.hub, b) == list(u) for b, u in GAMES.items())

        assert await asyncio.to_thread(wait_until, relayed, 60), {
            b: _moves(relay.hub, b) for b in relay.hub.boards
        }
        assert sorted(relay.hub.boards) == ["2", "5"]
        assert relay.hub.boards["5"].record.headers.white == "White 5"

        # Each daemon's own page shows its one board, under its own id, with its game.
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as session:
            for board_id, daemon in daemons.items():
                async with session.get(f"{daemon.http_url}state.json") as response:
                    state = await response.json()
                boards = state["boards"]
                assert list(boards) == [board_id]
                assert [m["uci"] for m in boards[board_id]["moves"]] == list(GAMES[board_id])
                async with session.get(f"{daemon.http_url}game.pgn") as response:
                    pgn = await response.text()
                assert pgn.count("[Event ") == 1 and f"White {board_id}" in pgn
    finally:
        for daemon in daemons.values():
            daemon.stop()
            await daemon.close()
        for emulator in emulators.values():
            emulator.stop()
        await relay.stop()
