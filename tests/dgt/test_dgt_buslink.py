"""The bus link against the emulated chain over a real pseudo-terminal: a board added
to the chain later is found. (A chain of boards playing real games with corrupted
replies and a board unplugged from its middle, through the whole daemon, is in
tests/daemon/test_hall.py.)"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from drivers.dgt.bus import BusTimings
from drivers.dgt.buslink import BusLink
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


async def test_a_bug_in_one_poll_step_ends_run_with_it_instead_of_leaving_the_chain_unpolled(
    tmp_path: Path,
) -> None:
    """The sending runs in callbacks (issue 19): an unexpected error in one of them
    must still end ``run()``, which the hall reports on every board's card and
    restarts, not stop the polling with every board shown connected."""
    timings = BusTimings(reply_timeout=0.4, discovery_interval=1.0)
    with BusChainEmulator(tmp_path, serials=["01025"]) as chain:
        link = BusLink(chain.port_path, timings=timings)
        link.add_board(1025, lambda event: None)
        task = asyncio.create_task(link.run())
        try:
            assert await _until(lambda: link.connected(1025))
            poller = link.poller
            real_next = poller.next_command
            raised: list[bool] = []

            def next_command_once_broken(now: float):
                if not raised:
                    raised.append(True)
                    raise KeyError("a bug in one step")
                return real_next(now)

            poller.next_command = next_command_once_broken  # type: ignore[method-assign]
            done, _ = await asyncio.wait({task}, timeout=10)
            assert raised and task in done, "the chain stalled: run() still waiting"
            assert isinstance(task.exception(), KeyError)
        finally:
            link.close()
            if not task.done():
                await asyncio.wait_for(task, 10)


async def test_the_next_command_is_on_the_line_while_a_board_s_change_is_handled(
    tmp_path: Path,
) -> None:
    """A board's change runs its whole pipeline (rules core, journal, page, MQTT): on
    a Pi, with a hall's boards moving together, tens of milliseconds. The chain's next
    poll goes out first, so the other boards' presses are read meanwhile (issue 28:
    the line waited for every move's handling, and the first moves of 24 boards
    queued behind one another)."""
    from drivers.sensors import SquareChange

    # every board due at once (a 12-board chain's line is never idle)
    timings = BusTimings(reply_timeout=0.4, discovery_interval=0.0, poll_interval=0.0)
    line_busy: list[bool] = []
    with BusChainEmulator(tmp_path, serials=["01025", "03000"]) as chain:
        link = BusLink(chain.port_path, timings=timings)

        def slow_pipeline(event) -> None:
            if isinstance(event, SquareChange):
                line_busy.append(link.poller.busy)
                time.sleep(0.05)  # the board's outputs on a loaded Pi

        link.add_board(1025, slow_pipeline)
        link.add_board(3000, lambda event: None)
        task = asyncio.create_task(link.run())
        try:
            assert await _until(lambda: link.connected(1025) and link.connected(3000))
            for n, square in enumerate(("e2", "d2", "c2"), start=1):
                chain.set_square_on(0, square, None)
                assert await _until(lambda n=n: len(line_busy) >= n, 10)
            assert line_busy and all(line_busy), line_busy
        finally:
            link.close()
            await task


async def test_each_reply_wakes_the_link_once_and_a_reply_cut_short_is_still_read(
    tmp_path: Path,
) -> None:
    """A reply comes in parts (the header, then the rest, as the line carries it):
    the link is called back once a reply, not once a part (the terminal's VMIN: each
    wake was much of a poll's CPU on a Pi Zero 2 W's budget, issue 28). A reply cut
    short, too short to wake the link, is still read at its time-out and the change
    list asked again: no piece set down is lost."""
    from drivers.sensors import SquareChange

    timings = BusTimings(discovery_interval=0.0)
    seen: list[SquareChange] = []
    with BusChainEmulator(tmp_path, serials=["01025", "03000"]) as chain:
        link = BusLink(chain.port_path, timings=timings, discover=False)
        link.add_board(1025, lambda e: seen.append(e) if isinstance(e, SquareChange) else None)
        link.add_board(3000, lambda event: None)
        wakes = 0
        received = link._received

        def counted(data: bytes) -> None:
            nonlocal wakes
            wakes += 1
            received(data)

        link._received = counted  # type: ignore[method-assign]
        task = asyncio.create_task(link.run())
        try:
            assert await _until(lambda: link.connected(1025) and link.connected(3000))
            replies_before, wakes_before = link.poller.stats.replies, wakes
            await asyncio.sleep(1.0)
            replies = link.poller.stats.replies - replies_before
            assert replies >= 10
            assert wakes - wakes_before <= replies + 2, (wakes - wakes_before, replies)

            chain.cut_next_reply(0)
            chain.set_square_on(0, "e2", None)
            assert await _until(lambda: any(e.square == "e2" for e in seen), 5)
            assert link.poller.stats.repeats >= 1, "the list cut short was asked again"
        finally:
            link.close()
            await task
