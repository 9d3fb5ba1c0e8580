"""The bus link against the emulated chain over a real pseudo-terminal: a board added
to the chain later is found; the line polls on whatever the daemon does. (A chain of
boards playing real games with corrupted replies and a board unplugged from its
middle, through the whole daemon, is in tests/daemon/test_hall.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from pathlib import Path

import pytest

from drivers.dgt.bus import BusTimings
from drivers.dgt.buslink import BusLink
from drivers.dgt.busprocess import FrameReader, _Child, frame
from drivers.simulators.busemulator import BusChainEmulator


async def _until(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.05)
    return bool(condition())


async def test_a_board_plugged_onto_the_chain_later_is_found_by_the_broadcast_ping(
    tmp_path: Path,
) -> None:
    timings = BusTimings(reply_timeout=0.4, discovery_interval=1.0)
    found: list[int] = []
    with BusChainEmulator(tmp_path, serials=["01025"]) as chain:
        link = BusLink(chain.port_path, timings=timings, on_new_board=found.append)
        link.add_board(1025, lambda event: None)
        task = asyncio.create_task(link.run())
        try:
            assert await _until(lambda: link.connected(1025))
            chain.add_board("03000")
            assert await _until(lambda: found == [3000], 10)
        finally:
            link.close()
            await task


async def test_a_chain_port_awaited_for_long_is_one_warning_not_one_per_attempt(
    tmp_path: Path, caplog
) -> None:
    import logging

    link = BusLink(str(tmp_path / "nothing"), backoff_initial=0.01, backoff_max=0.02)
    link.add_board(1025, lambda event: None)
    task = asyncio.create_task(link.run())
    try:
        with caplog.at_level(logging.WARNING, logger="drivers.dgt.buslink"):
            assert await _until(lambda: link.attempts >= 5)
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        port_errors = [w for w in warnings if "port error" in w and "board" not in w]
        assert len(port_errors) == 1  # and the board's loss said once, as ever
        assert sum("board 1025 lost" in w for w in warnings) == 1
    finally:
        link.close()
        await asyncio.wait_for(task, 10)


def test_a_bug_in_one_poll_step_ends_the_line_s_polling_with_it_and_says_so(
    tmp_path: Path,
) -> None:
    """An unexpected error in the line's process must end its polling and tell the
    daemon (whose link then ends ``run()`` with it: the hall reports it on every
    board's card and restarts the link), not stop the polling with every board shown
    connected. The child's loop, run here on pipes as its parent runs it."""
    timings = BusTimings(reply_timeout=0.4, discovery_interval=0.0)
    with BusChainEmulator(tmp_path, serials=["01025"]) as chain:
        control_read, control_write = os.pipe()
        out_read, out_write = os.pipe()
        child = _Child(control_read, out_write)
        for message in (("setup", chain.port_path, timings, False), ("add", 1025), ("open",)):
            os.write(control_write, frame(message))
        serving = threading.Thread(target=child.serve, daemon=True)
        serving.start()
        reader, heard = FrameReader(), []
        os.set_blocking(out_read, False)

        def read_until(kind: str) -> tuple:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                for message in heard:
                    if message[0] == kind:
                        return message
                with contextlib.suppress(BlockingIOError):
                    heard.extend(reader.feed(os.read(out_read, 65536)))
                time.sleep(0.01)
            raise AssertionError(f"no {kind!r} from the line: {heard}")

        try:
            read_until("events")  # the board found and heard
            assert child.line is not None
            poller = child.line.poller
            real_next = poller.next_command

            def next_command_broken(now: float):
                raise KeyError("a bug in one step")

            poller.next_command = next_command_broken  # type: ignore[method-assign]
            ended = read_until("ended")
            assert ended[1] == "bug" and "a bug in one step" in ended[2]
            assert not child.line.is_open, "the port is released for the next attempt"
            poller.next_command = real_next  # type: ignore[method-assign]
        finally:
            os.close(control_write)  # the daemon gone: the child ends
            serving.join(10)
            assert not serving.is_alive()
            for fd in (control_read, out_read, out_write):
                os.close(fd)


async def test_a_bug_the_line_reports_ends_the_link_s_polling_with_it() -> None:
    link = BusLink("/dev/no-chain-here")
    link.line._ended = asyncio.get_running_loop().create_future()
    link.line._message(("ended", "bug", "KeyError('a bug in one step')"))
    with pytest.raises(RuntimeError, match="a bug in one step"):
        await link.line.poll()


async def test_the_line_polls_on_while_the_daemon_handles_a_board_s_change(
    tmp_path: Path,
) -> None:
    """A board's change runs its whole pipeline (rules core, journal, page, MQTT): on
    a Pi, with a hall's boards moving together, tens of milliseconds. The chain's
    line goes on meanwhile, so the other boards' presses are read (issue 28: the line
    waited for every move's handling, and the first moves of 24 boards queued behind
    one another)."""
    from drivers.sensors import SquareChange

    timings = BusTimings(reply_timeout=0.4, discovery_interval=0.0)
    polled_meanwhile: list[int] = []
    with BusChainEmulator(tmp_path, serials=["01025", "03000"]) as chain:
        link = BusLink(chain.port_path, timings=timings)

        def slow_pipeline(event) -> None:
            if isinstance(event, SquareChange):
                before = len(chain.bus_received)
                time.sleep(0.1)  # the board's outputs on a loaded Pi: the loop is held
                polled_meanwhile.append(len(chain.bus_received) - before)

        link.add_board(1025, slow_pipeline)
        link.add_board(3000, lambda event: None)
        task = asyncio.create_task(link.run())
        try:
            assert await _until(lambda: link.connected(1025) and link.connected(3000))
            for n, square in enumerate(("e2", "d2", "c2"), start=1):
                chain.set_square_on(0, square, None)
                assert await _until(lambda n=n: len(polled_meanwhile) >= n, 10)
            assert all(count >= 3 for count in polled_meanwhile), polled_meanwhile
        finally:
            link.close()
            await task


async def test_each_reply_wakes_the_line_once_and_a_reply_cut_short_is_still_read(
    tmp_path: Path,
) -> None:
    """A reply comes in parts (the header, then the rest, as the line carries it):
    the line is woken once a reply, not once a part (the terminal's VMIN: each wake
    was much of a poll's CPU on a Pi Zero 2 W's budget, issue 28). A reply cut short,
    too short to wake the line, is still read at its time-out and the change list
    asked again: no piece set down is lost."""
    from drivers.sensors import SquareChange

    timings = BusTimings(discovery_interval=0.0)
    seen: list[SquareChange] = []
    with BusChainEmulator(tmp_path, serials=["01025", "03000"]) as chain:
        link = BusLink(chain.port_path, timings=timings, discover=False)
        link.add_board(1025, lambda e: seen.append(e) if isinstance(e, SquareChange) else None)
        link.add_board(3000, lambda event: None)
        task = asyncio.create_task(link.run())
        try:
            assert await _until(lambda: link.connected(1025) and link.connected(3000))
            assert await _until(lambda: link.stats.replies > 0)
            first = link.stats
            assert await _until(lambda: link.stats.replies >= first.replies + 20)
            replies = link.stats.replies - first.replies
            wakes = link.stats.wakes - first.wakes
            assert wakes <= replies + 2, (wakes, replies)

            chain.cut_next_reply(0)
            chain.set_square_on(0, "e2", None)
            assert await _until(lambda: any(e.square == "e2" for e in seen), 5)
            assert await _until(lambda: link.stats.repeats >= 1, 3), "the list asked again"
        finally:
            link.close()
            await task
