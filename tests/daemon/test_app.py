"""The daemon shell's own decisions: board orientation and the log line per event."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import chess

from daemon.app import Daemon, describe_event, journal_history, turned_round
from daemon.config import load_text
from daemon.game.events import EVENT_TYPES, Irregularity, Move, from_dict
from daemon.game.formatting import describe
from drivers.dgt.protocol import Clock
from drivers.sensors import BoardDump, ClockReport, SquareChange
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.handling import human_sensor_log

#: What the sensors of a board standing turned round report for the start position.
TURNED_START = "RNBKQBNR/PPPPPPPP/8/8/8/8/pppppppp/rnbkqbnr"


def test_a_board_configured_as_turned_round_is_read_the_right_way() -> None:
    dump = turned_round(BoardDump(0.0, TURNED_START))
    assert dump.placement == chess.Board().board_fen()
    # White's king's pawn sits on the sensor the turned board calls d7.
    assert turned_round(SquareChange(1.0, "d7", None)) == SquareChange(1.0, "e2", None)
    assert turned_round(SquareChange(1.5, "d5", "P")) == SquareChange(1.5, "e4", "P")
    clock = ClockReport(2.0, 300.0, 300.0, "black")
    assert turned_round(clock) is clock


def test_log_lines_say_the_move_and_the_irregularity_plainly() -> None:
    move = Move(t=1.0, ply=4, uci="b8c6", san="Nc6", fen="", by="black", speech="Springer")
    assert describe(move).split() == ["2...", "Nc6", "Springer"]
    irregular = Irregularity(
        t=2.0,
        kind="illegal_move",
        article="7.4",
        by="white",
        squares=["g1", "g3"],
        count=2,
        restore=[{"square": "g1", "piece": "N"}, {"square": "g3", "piece": None}],
    )
    line = describe(irregular)
    assert line == "!! illegal_move (7.4) by white, count 2: put N on g1, clear g3"
    # The demo's transcript and the log get the same words from a feed dict.
    assert describe_event(irregular.to_dict()) == line
    unknown = {"type": "from_the_future", "x": 1}
    assert describe_event(unknown) == '{"type": "from_the_future", "x": 1}'


def test_a_feed_dict_reads_back_as_the_event_it_was() -> None:
    irregular = Irregularity(t=2.0, kind="touch_move", article="4.3", by="black", squares=["e7"])
    assert from_dict(irregular.to_dict()) == irregular
    assert from_dict({**irregular.to_dict(), "added_later": True}) == irregular
    assert EVENT_TYPES["irregularity"] is Irregularity  # the dataclass itself


SETTINGS = "broadcast:\n  enabled: false\nrules:\n  settle_time: 0.1\n"


async def play_against_daemon(
    tmp_path: Path,
    ucis: tuple[str, ...],
    *,
    seed: int,
    storage_dir: Path,
    done: Callable[[BoardEmulator, list[dict]], bool],
    hold_seconds: float | None = None,
) -> tuple[Daemon, BoardEmulator, list[dict]]:
    """The daemon in-process against the emulator, which plays the moves by hand with a
    clock; returns once ``done(emulator, feed)`` holds (or after a generous wait)."""
    settings = load_text(SETTINGS, "test.yaml", environ={})
    moves = [chess.Move.from_uci(u) for u in ucis]
    log = human_sensor_log(chess.Board(), moves, seed=seed, with_clock=True)
    feed: list[dict] = []
    with BoardEmulator(tmp_path) as emulator:
        daemon = Daemon(
            settings,
            port=emulator.port_path,
            speech=False,
            storage_dir=storage_dir,
            resume=False,
            on_event=feed.append,
            time_scale=6.0,
        )
        if hold_seconds is not None:
            daemon.clock_writer.hold_seconds = hold_seconds
        await daemon.start()
        try:
            for _ in range(100):
                if daemon.link.connected:
                    break
                await asyncio.sleep(0.1)
            emulator.play(log, speed=6.0)
            await asyncio.to_thread(emulator.wait_played, 60)
            for _ in range(100):
                if done(emulator, feed):
                    break
                await asyncio.sleep(0.1)
        finally:
            daemon.stop()
            await daemon.close()
    return daemon, emulator, feed


def moves_in(feed: list[dict]) -> list[str]:
    return [e["uci"] for e in feed if e["type"] == "move"]


async def test_an_unwritable_storage_directory_is_reported_and_the_game_goes_on(
    tmp_path: Path,
) -> None:
    """The daemon in-process against the emulator, with its storage path blocked by a
    file: a loud notice, every move still decided and published."""
    blocked = tmp_path / "games"
    blocked.write_text("not a directory")
    ucis = ("e2e4", "e7e5", "g1f3", "b8c6")
    daemon, _, feed = await play_against_daemon(
        tmp_path, ucis, seed=3, storage_dir=blocked, done=lambda _, f: len(moves_in(f)) == 4
    )
    notices = [e for e in feed if e["type"] == "notice"]
    assert [n["code"] for n in notices] == ["storage_error"]
    assert "STORAGE FAILURE" in notices[0]["message"]
    assert moves_in(feed) == list(ucis)
    assert [m.uci for m in daemon.journal.record.moves] == list(ucis)


def clock_commands(emulator: BoardEmulator) -> list[int]:
    return [c.clock for c in emulator.received if c.clock is not None]


async def test_each_move_is_shown_on_the_clock_then_the_times_come_back(tmp_path: Path) -> None:
    """A DGT 3000 keeps a text until told otherwise: after each move's text the daemon
    sends END, so the players see their times again; a newer move's text cancels the
    END still pending for the older one."""
    _, emulator, _ = await play_against_daemon(
        tmp_path,
        ("e2e4", "e7e5", "g1f3"),
        seed=5,
        storage_dir=tmp_path / "games",
        hold_seconds=0.4,
        done=lambda e, f: len(moves_in(f)) == 3 and clock_commands(e)[-1:] == [Clock.END],
    )
    shown = [
        c.payload[:8].decode("ascii").strip() for c in emulator.received if c.clock == Clock.ASCII
    ]
    assert shown[-3:] == ["1.e4", "1...e5", "2.Nf3"]
    assert clock_commands(emulator)[-1] == Clock.END  # the last text gives way to the times


def test_a_second_restart_does_not_republish_the_first_restarts_resume() -> None:
    """The page gets the journal again at start; only this restart's game_resumed is news."""
    journal = [
        {"t": 0.0, "type": "game_start", "fen": chess.STARTING_FEN},
        {"t": 1.0, "type": "move", "ply": 1, "uci": "e2e4"},
        {"t": 5.0, "type": "game_resumed", "ply": 1, "fen": ""},
        {"t": 6.0, "type": "move", "ply": 2, "uci": "e7e5"},
    ]
    history = journal_history(journal)
    assert [e["type"] for e in history] == ["game_start", "move", "move"]
    assert [e.get("ply") for e in history if e["type"] == "move"] == [1, 2]


def test_the_clock_sections_time_control_reaches_the_rules_core(tmp_path: Path) -> None:
    """6.11 needs the periods: both flags in the last one draw the game."""
    text = "broadcast:\n  enabled: false\nclock:\n  time_control: '40/5400+30:1800+30'\n"
    settings = load_text(text, "test.yaml", environ={})
    daemon = Daemon(settings, speech=False, storage_dir=tmp_path, resume=False)
    tc = daemon.core.settings.time_control
    assert tc is not None and len(tc.periods) == 2
    daemon.journal.close()
    untimed = load_text("broadcast:\n  enabled: false\n", "test.yaml", environ={})
    assert Daemon(untimed, speech=False, storage_dir=tmp_path).core.settings.time_control is None


async def page_status(tmp_path: Path, link_name: str, wanted: str) -> dict:
    """The board's status on /state.json once it has ``wanted`` (or after ~10 s),
    for a daemon reading an emulated board on a port named ``link_name``."""
    import aiohttp

    settings = load_text("broadcast:\n  port: 0\n  address: 127.0.0.1\n", "test.yaml", environ={})
    with BoardEmulator(tmp_path, link_name) as emulator:
        daemon = Daemon(
            settings,
            port=emulator.port_path,
            speech=False,
            storage_dir=tmp_path / "games",
            resume=False,
        )
        await daemon.start()
        try:
            status: dict = {}
            async with aiohttp.ClientSession() as session:
                for _ in range(100):
                    async with session.get(daemon.http_url + "state.json") as response:
                        state = await response.json()
                    status = next(iter(state["boards"].values()), {}).get("status", {})
                    if status.get(wanted):
                        break
                    await asyncio.sleep(0.1)
        finally:
            daemon.stop()
            await daemon.close()
    return status


async def test_the_page_says_the_board_is_connected_from_the_first_reading(
    tmp_path: Path,
) -> None:
    """The link reports "connected" only after a loss; the arbiter's page and
    /state.json must still show a board that answered at start-up as connected."""
    status = await page_status(tmp_path, "dgt-board", "connected")
    assert status.get("connected") is True


async def test_a_bluetooth_boards_battery_is_on_the_page(tmp_path: Path) -> None:
    """A Bluetooth board (an rfcomm port) is asked for its battery at connection; the
    answer reaches /state.json (told by the link, whenever it comes)."""
    status = await page_status(tmp_path, "rfcomm0", "battery")
    assert status.get("battery") == 87
