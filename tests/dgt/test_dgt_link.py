"""The board link against the emulator, through a real pseudo-terminal."""

from __future__ import annotations

import asyncio
import itertools
import logging

import pytest
from dgt_helpers import FAST, until

from drivers.dgt import protocol
from drivers.dgt.link import BoardLink, ClockCommandError
from drivers.sensors import (
    BoardDump,
    BoardHeard,
    ButtonPress,
    ClockReading,
    ConnectionChange,
    MagicPiece,
    SquareChange,
)
from drivers.simulators.emulator import START_PLACEMENT, BoardEmulator


class Rig:
    def __init__(self, emulator: BoardEmulator, **options) -> None:
        self.emulator = emulator
        self.events: list = []
        self.link = BoardLink(emulator.port_path, self.events.append, **(FAST | options))
        self.task = asyncio.create_task(self.link.run())

    def of(self, kind) -> list:
        return [e for e in self.events if isinstance(e, kind)]

    def board_changes(self) -> list:
        return [e for e in self.events if isinstance(e, SquareChange | BoardDump)]

    async def close(self) -> None:
        self.link.close()
        await asyncio.wait_for(self.task, 10)


@pytest.fixture
async def rig():
    emulator = BoardEmulator().start()
    rigs: list[Rig] = []

    def make(**options) -> Rig:
        rigs.append(Rig(emulator, **options))
        return rigs[-1]

    yield make
    for made in rigs:
        await made.close()
    emulator.stop()


async def test_start_up_sets_update_nice_reads_version_then_dumps_the_board(rig):
    r = rig()
    await until(lambda: r.link.connected and r.link.serial_number)
    codes = [c.code for c in r.emulator.received]
    assert codes[:3] == [0x4B, 0x4D, 0x42]
    assert r.events[0] == BoardDump(r.events[0].t, START_PLACEMENT)
    assert str(r.link.version) == "3.01"
    await until(lambda: r.link.long_serial_number and r.link.trademark)
    assert r.link.long_serial_number == "3000147740"
    assert r.link.trademark.startswith("Digital Game Technology")
    assert r.emulator.forbidden_received == []
    # The clock's times are asked for at once (sides known before the first press).
    assert protocol.Command.SEND_CLK in [c.code for c in r.emulator.received]


async def test_field_updates_pass_through_in_board_order_including_odd_sensor_orders(rig):
    r = rig()
    await until(lambda: r.link.connected)
    # New square before old; a capture as one code replacing another; a slide
    # through intermediate squares (the header's queen example).
    moves = [
        ("e4", "P"),
        ("e2", None),
        ("d5", "p"),
        ("d7", None),
        ("d5", "P"),
        ("e4", None),
        ("d8", None),
        ("d7", "q"),
        ("d6", "q"),
        ("d7", None),
        ("d6", None),
        ("d5", "q"),
    ]
    for square, piece in moves:
        r.emulator.set_square(square, piece)
    await until(lambda: len(r.of(SquareChange)) == len(moves))
    assert [(e.square, e.piece) for e in r.of(SquareChange)] == moves
    assert r.link.placement == r.emulator.placement


async def test_event_times_come_from_the_injected_time_source(rig):
    ticks = itertools.count(100)
    r = rig(time_source=lambda: float(next(ticks)))
    await until(lambda: r.link.connected)
    r.emulator.set_square("g1", None)
    await until(lambda: r.of(SquareChange))
    times = [e.t for e in r.events]
    assert times == sorted(times) and times[0] >= 100


async def test_a_lost_field_update_is_repaired_by_the_confirming_dump(rig):
    r = rig()
    await until(lambda: r.link.connected)
    # The knight left g1 but its update was lost; then e2 was lifted normally.
    r.emulator.set_board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKB1R")
    r.emulator.set_square("e2", None)
    await until(lambda: len(r.of(BoardDump)) == 2)
    assert r.of(BoardDump)[-1].placement == "rnbqkbnr/pppppppp/8/8/8/8/PPPP1PPP/RNBQKB1R"
    assert isinstance(r.board_changes()[-2], SquareChange)


async def test_a_confirming_dump_that_agrees_says_nothing(rig):
    r = rig()
    await until(lambda: r.link.connected)
    r.emulator.set_square("e2", None)
    await until(lambda: sum(c.code == 0x42 for c in r.emulator.received) >= 2)
    await asyncio.sleep(0.2)
    assert len(r.of(BoardDump)) == 1


async def test_magic_pieces_are_reported(rig):
    r = rig()
    await until(lambda: r.link.connected)
    r.emulator.apply(MagicPiece(0, "e4", "draw"))
    await until(lambda: r.of(MagicPiece))
    assert r.of(MagicPiece)[0].square == "e4" and r.of(MagicPiece)[0].meaning == "draw"


async def test_clock_command_is_acked_and_the_clock_reports_times_and_buttons(rig):
    r = rig()
    await until(lambda: r.link.connected)
    ack = await r.link.send_clock_command(protocol.clock_set_and_run(300, 240, True, False))
    assert ack.ok and ack.command == protocol.Clock.SETNRUN
    await until(lambda: any(e.running == "left" for e in r.of(ClockReading)))
    report = next(e for e in r.of(ClockReading) if e.running == "left")
    assert report.right == 240 and report.left <= 300
    r.emulator.press_lever()
    await until(lambda: any(e.running == "right" for e in r.of(ClockReading)))
    r.emulator.press_button("plus")
    await until(lambda: r.of(ButtonPress))
    assert r.of(ButtonPress) == [ButtonPress(r.of(ButtonPress)[0].t, "plus")]
    version = await r.link.send_clock_command(protocol.clock_version())
    assert version.version == (2, 1)
    assert r.link.clock_version == (2, 1)


async def test_a_lost_clock_ack_is_resent_once_then_given_up(rig):
    r = rig()
    await until(lambda: r.link.connected)
    r.emulator.drop_clock_acks = 1
    ack = await r.link.send_clock_command(protocol.clock_beep(100))
    assert ack.ok
    beeps = [c for c in r.emulator.received if c.clock == protocol.Clock.BEEP]
    assert len(beeps) == 2
    r.emulator.drop_clock_acks = 2
    with pytest.raises(ClockCommandError):
        await r.link.send_clock_command(protocol.clock_beep(100))
    assert r.link.connected


async def test_losing_the_board_during_a_clock_command_fails_that_command_only(rig):
    r = rig()
    await until(lambda: r.link.connected)
    r.emulator.drop_clock_acks = 5
    pending = asyncio.create_task(r.link.send_clock_command(protocol.clock_end()))
    await until(lambda: any(c.clock == protocol.Clock.END for c in r.emulator.received))
    r.emulator.unplug()
    with pytest.raises(ClockCommandError):
        await pending
    r.emulator.replug()
    await until(lambda: r.link.connected)
    r.emulator.drop_clock_acks = 0
    assert (await r.link.send_clock_command(protocol.clock_end())).ok


async def test_clock_commands_go_one_at_a_time(rig):
    r = rig()
    await until(lambda: r.link.connected)
    acks = await asyncio.gather(
        r.link.send_clock_command(protocol.clock_ascii("one")),
        r.link.send_clock_command(protocol.clock_ascii("two")),
        r.link.send_clock_command(protocol.clock_end()),
    )
    assert all(a.ok for a in acks)
    assert [a.command for a in acks] == [
        protocol.Clock.ASCII,
        protocol.Clock.ASCII,
        protocol.Clock.END,
    ]


async def test_unplug_is_reported_and_the_board_read_again_after_replug(rig):
    r = rig()
    await until(lambda: r.link.connected)
    r.emulator.unplug()
    await until(lambda: r.of(ConnectionChange))
    assert r.of(ConnectionChange)[0].state == "lost"
    assert not r.link.connected
    # A move made while the cable was out is not lost: the dump shows it.
    r.emulator.set_square("e2", None)
    r.emulator.set_square("e4", "P")
    await asyncio.sleep(0.3)
    r.emulator.replug()
    await until(lambda: len(r.of(ConnectionChange)) == 2 and len(r.of(BoardDump)) == 2)
    assert r.of(ConnectionChange)[1].state == "connected"
    assert r.of(BoardDump)[1].placement == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"
    assert r.events.index(r.of(ConnectionChange)[1]) < r.events.index(r.of(BoardDump)[1])
    r.emulator.set_square("d2", None)
    await until(lambda: r.of(SquareChange))
    assert r.of(SquareChange)[0].square == "d2"


async def test_a_silent_board_is_declared_lost_and_found_again(rig):
    r = rig()
    await until(lambda: r.link.connected and len(r.of(BoardHeard)) >= 2)
    r.emulator.set_silent(True)
    await until(lambda: r.of(ConnectionChange))
    lost = r.of(ConnectionChange)[0]
    assert "no answer" in lost.detail
    # The board was heard (its liveness probe answered) until it went silent, and
    # not in the time-out before the loss was known: the rules core holds alarms
    # on a picture the board has not been heard to confirm.
    last_heard = r.of(BoardHeard)[-1]
    assert r.events.index(last_heard) < r.events.index(lost)
    assert lost.t - last_heard.t >= FAST["liveness_timeout"] - FAST["liveness_interval"]
    r.emulator.set_silent(False)
    await until(lambda: r.link.connected and len(r.of(ConnectionChange)) == 2)
    assert r.of(ConnectionChange)[1].state == "connected"


async def test_a_board_that_is_sending_is_not_probed_and_a_quiet_one_is(rig):
    """The liveness probe goes out only after ``liveness_interval`` of silence: a
    board sending field updates is there (an idle daemon pays for every wake-up)."""
    r = rig()
    await until(lambda: r.link.connected and r.of(BoardHeard))

    def probes() -> int:
        return sum(c.code == protocol.Command.RETURN_SERIALNR for c in r.emulator.received)

    before = probes()
    for piece in itertools.islice(itertools.cycle([None, "P"]), 24):  # 1.2 s, 6 intervals
        r.emulator.set_square("e2", piece)
        await asyncio.sleep(0.05)
    assert probes() - before <= 1  # was one every 0.2 s: 6
    assert r.link.connected
    quiet = probes()
    await asyncio.sleep(1.0)  # silent: probed again, every interval or so
    assert probes() - quiet >= 2
    assert r.link.connected


async def test_garbage_on_the_line_costs_no_field_update(rig):
    r = rig()
    await until(lambda: r.link.connected)
    r.emulator.inject(b"\x00\x13\x7f" + protocol.encode_field_update(12, 0)[:3] + b"\x86\x00")
    r.emulator.set_square("e2", None)
    r.emulator.inject(b"\x55\x01")
    r.emulator.set_square("e4", "P")
    await until(lambda: len(r.of(SquareChange)) == 2)
    assert [(e.square, e.piece) for e in r.of(SquareChange)] == [("e2", None), ("e4", "P")]
    assert r.link.garbage_bytes >= 8
    assert r.link.connected


async def test_no_clock_means_clock_commands_fail_cleanly(rig):
    r = rig()
    r.emulator.clock_attached = False
    await until(lambda: r.link.connected)
    with pytest.raises(ClockCommandError):
        await r.link.send_clock_command(protocol.clock_end())
    assert r.link.connected and r.of(ClockReading) == []


async def test_a_port_that_does_not_exist_is_reported_and_retried(tmp_path):
    events: list = []
    link = BoardLink(str(tmp_path / "nothing"), events.append, **FAST)
    task = asyncio.create_task(link.run())
    await until(lambda: events)
    assert events[0].state == "lost" and "cannot open" in events[0].detail
    emulator = BoardEmulator(tmp_path, "nothing").start()
    try:
        await until(lambda: link.connected)
        board_events = [e for e in events if not isinstance(e, ClockReading | BoardHeard)]
        assert isinstance(board_events[-1], BoardDump) and board_events[-2].state == "connected"
    finally:
        link.close()
        await asyncio.wait_for(task, 10)
        emulator.stop()


async def test_a_board_awaited_for_long_is_one_warning_not_one_per_attempt(tmp_path, caplog):
    link = BoardLink(str(tmp_path / "nothing"), [].append, **FAST)
    task = asyncio.create_task(link.run())
    try:
        with caplog.at_level(logging.WARNING, logger="drivers.dgt.link"):
            await until(lambda: link.attempts >= 5)
        warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1 and "cannot open" in warnings[0].getMessage()
    finally:
        link.close()
        await asyncio.wait_for(task, 10)


async def test_close_stops_the_link_even_while_it_waits_for_a_silent_board(rig):
    r = rig()
    r.emulator.set_silent(True)
    await until(lambda: r.emulator.received)  # the link is in its start-up
    r.link.close()
    await asyncio.wait_for(r.task, 5)
    assert not r.link.connected
    with pytest.raises(ClockCommandError):
        await r.link.send_clock_command(protocol.clock_end())


async def test_without_a_port_the_link_connects_to_the_board_it_finds():
    emulator_path = None

    async def finder():
        return emulator_path

    events: list = []
    link = BoardLink(None, events.append, port_finder=finder, **FAST)
    task = asyncio.create_task(link.run())
    try:
        await until(lambda: events)
        assert events[0] == ConnectionChange(
            events[0].t, "lost", "no DGT board found on any serial port, still looking", False
        )
        with BoardEmulator() as emulator:
            emulator_path = emulator.port_path
            await until(lambda: link.connected)
            assert link.port_path == emulator.port_path
            assert isinstance(
                [e for e in events if not isinstance(e, ClockReading | BoardHeard)][-1], BoardDump
            )
    finally:
        link.close()
        await asyncio.wait_for(task, 10)


async def test_the_link_refuses_dangerous_commands_before_they_reach_the_board(rig):
    r = rig()
    await until(lambda: r.link.connected)
    for frame in (bytes([0x4E]), bytes([0x49]), protocol.revelation_leds(1, 0, 63)):
        with pytest.raises(protocol.UnsafeCommand):
            r.link.send(frame)
    with pytest.raises(protocol.UnsafeCommand):
        await r.link.send_clock_command(protocol.revelation_ascii("hello"))
    r.link.send(protocol.request_battery())
    await until(lambda: r.link.battery is not None)
    assert r.link.battery.percent == 87
    assert r.emulator.forbidden_received == []


async def test_a_board_lost_while_its_log_is_read_is_asked_again_at_the_next_attempt():
    """The daemon knew the start position (a resumed game); the board shows two moves
    more, and its cable goes out just as the link asks for its EEPROM log. At the
    next attempt the link asks again, from the same picture: the moves come back
    from the log, not from a search that may be ambiguous."""
    emulator = BoardEmulator().start()
    try:
        for square, piece in (("e2", None), ("e4", "P"), ("e7", None), ("e5", "p")):
            emulator.set_square(square, piece)
        emulator.unplug_when_log_asked = True
        r = Rig(emulator)
        r.link.expect_placements([START_PLACEMENT])
        await until(lambda: not emulator.plugged)
        await asyncio.sleep(0.3)
        emulator.replug()
        await until(lambda: r.link.connected)
        (dump,) = r.of(BoardDump)
        assert r.link.eeprom_reads == 1
        assert dump.history is not None and len(dump.history) >= 4, dump.history
        assert dump.placement == emulator.placement
        await r.close()
    finally:
        emulator.stop()


async def test_a_piece_set_down_while_the_link_starts_up_is_reported_after_its_picture(rig):
    """The players do not wait for the link: a change the board reports just after
    its start-up dump comes after the dump, not never."""
    emulator = BoardEmulator().start()
    try:
        emulator.changes_after_answer[protocol.Command.SEND_BRD] = [("e2", None), ("e4", "P")]
        r = Rig(emulator)
        await until(lambda: len(r.of(SquareChange)) == 2)
        dump, *changes = r.board_changes()
        assert dump == BoardDump(dump.t, START_PLACEMENT)
        assert [(c.square, c.piece) for c in changes] == [("e2", None), ("e4", "P")]
        assert r.link.placement == emulator.placement
        await r.close()
    finally:
        emulator.stop()


async def test_moves_made_while_a_restarted_daemon_reads_the_log_are_all_reported():
    """A daemon restarted in mid-game: the board shows a move more than the journal,
    so its log is read; meanwhile the opponent replies (before the log is sent) and
    the next move begins (after it). The reply is in the picture and in the log's
    history; the next move's changes come after the picture. Thrown away, the pawn
    on c4 was never seen, and the game stood on displaced pieces (issue 28)."""
    emulator = BoardEmulator().start()
    try:
        for square, piece in (("e2", None), ("e4", "P")):
            emulator.set_square(square, piece)
        emulator.changes_after_answer[protocol.Command.SEND_BRD] = [("e7", None), ("e5", "p")]
        emulator.changes_after_answer[protocol.Command.SEND_EE_MOVES] = [("d2", None), ("d4", "P")]
        r = Rig(emulator)
        r.link.expect_placements([START_PLACEMENT])
        await until(lambda: len(r.of(SquareChange)) == 2)
        dump, *changes = r.board_changes()
        assert dump.placement == "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR"
        assert dump.history is not None and dump.history[-1] == dump.placement, dump.history
        assert [(c.square, c.piece) for c in changes] == [("d2", None), ("d4", "P")]
        assert r.link.placement == emulator.placement
        await r.close()
    finally:
        emulator.stop()
