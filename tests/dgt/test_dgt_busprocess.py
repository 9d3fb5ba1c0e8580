"""The chain's line polled in a process of its own (``drivers/dgt/busprocess.py``),
against the emulated chain over a real pseudo-terminal: what the daemon's boards get
is what the line on the daemon's own loop gave, and the child never outlives its
use: killed, it is started again and the moves made meanwhile come back; the link
closed or the daemon killed, it ends."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from drivers.dgt.bus import BusTimings
from drivers.dgt.buslink import BusLink
from drivers.dgt.busprocess import BusLineProcess, FrameReader, frame
from drivers.sensors import BoardDump, ConnectionChange, SensorEvent, SquareChange
from drivers.simulators.busemulator import BusChainEmulator

TIMINGS = BusTimings(reply_timeout=0.4, discovery_interval=0.0)
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"


async def _until(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.02)
    return bool(condition())


def _gone(pid: int) -> bool:
    """No such process, or only its exit status left (a zombie nobody reaps)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _child_pid(link: BusLink) -> int:
    line = link.line
    assert isinstance(line, BusLineProcess)
    assert line._child is not None, "the line's process runs"
    return line._child.pid


def test_messages_cut_anywhere_on_the_pipe_come_out_whole_and_in_order() -> None:
    messages = [("events", [SquareChange(1.5, "e2", None)]), ("stats", None), ("opened",)]
    data = b"".join(frame(m) for m in messages)
    reader = FrameReader()
    out = []
    for i in range(0, len(data), 7):
        out.extend(reader.feed(data[i : i + 7]))
    assert out == messages


async def test_a_chain_read_through_its_line_process_gives_each_board_its_changes(
    tmp_path: Path,
) -> None:
    events: list[SensorEvent] = []
    with BusChainEmulator(tmp_path, serials=["01025", "01026"]) as chain:
        link = BusLink(chain.port_path, timings=TIMINGS, discover=False)
        link.add_board(1025, events.append)
        link.add_board(1026, lambda event: None)
        task = asyncio.create_task(link.run())
        try:
            assert await _until(lambda: link.connected(1025) and link.connected(1026))
            assert _child_pid(link) != os.getpid()
            chain.set_square_on(0, "e2", None)
            chain.set_square_on(0, "e4", "P")
            assert await _until(
                lambda: (
                    [(e.square, e.piece) for e in events if isinstance(e, SquareChange)]
                    == [("e2", None), ("e4", "P")]
                )
            )
            assert await _until(lambda: link.stats.replies >= 10), "its counts come back"
        finally:
            link.close()
            await asyncio.wait_for(task, 10)


async def test_a_line_process_killed_mid_game_is_started_again_and_the_move_made_meanwhile_comes_back(  # noqa: E501
    tmp_path: Path,
) -> None:
    """The child dies (the OOM killer, a bug in the interpreter): its boards are
    reported lost, a new child polls them, and the move made while nobody polled is in
    the board's dump as what it passed through, as after any outage."""
    events: list[SensorEvent] = []
    with BusChainEmulator(tmp_path, serials=["01025", "01026"]) as chain:
        link = BusLink(chain.port_path, timings=TIMINGS, discover=False, backoff_initial=0.05)
        link.add_board(1025, events.append)
        link.add_board(1026, lambda event: None)
        task = asyncio.create_task(link.run())
        try:
            assert await _until(lambda: link.connected(1025) and link.connected(1026))
            first = _child_pid(link)
            os.kill(first, signal.SIGKILL)
            chain.set_square_on(0, "e2", None)  # 1. e4 while the line is dead
            chain.set_square_on(0, "e4", "P")
            assert await _until(
                lambda: any(
                    isinstance(e, ConnectionChange) and e.state == "connected" for e in events
                )
            ), events
            lost = [e for e in events if isinstance(e, ConnectionChange) and e.state == "lost"]
            assert lost and "bus line process ended" in lost[0].detail
            assert _child_pid(link) != first and _gone(first)
            dumps = [e for e in events if isinstance(e, BoardDump)]
            assert dumps[-1].placement == AFTER_E4
            assert AFTER_E4 in dumps[-1].history, "what it passed through meanwhile"
            assert not [e for e in events if isinstance(e, SquareChange)], "not replayed"
        finally:
            link.close()
            await asyncio.wait_for(task, 10)


async def test_closing_the_link_ends_its_line_process(tmp_path: Path) -> None:
    with BusChainEmulator(tmp_path, serials=["01025"]) as chain:
        link = BusLink(chain.port_path, timings=TIMINGS, discover=False)
        link.add_board(1025, lambda event: None)
        task = asyncio.create_task(link.run())
        assert await _until(lambda: link.connected(1025))
        child = _child_pid(link)
        link.close()
        await asyncio.wait_for(task, 10)
        assert _gone(child)


def test_a_daemon_killed_leaves_no_line_process_behind(tmp_path: Path) -> None:
    """SIGKILL of the daemon: its line's process sees its input end and ends too (a
    process left polling would hold the port, and the restarted daemon could not
    open it)."""
    with BusChainEmulator(tmp_path, serials=["01025"]) as chain:
        script = textwrap.dedent(
            f"""
            import asyncio, sys
            from drivers.dgt.buslink import BusLink

            async def main():
                link = BusLink({chain.port_path!r}, discover=False)
                link.add_board(1025, lambda event: None)
                task = asyncio.create_task(link.run())
                while not link.connected(1025):
                    await asyncio.sleep(0.02)
                print(link.line._child.pid, flush=True)
                await task

            asyncio.run(main())
            """
        )
        daemon = subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        try:
            assert daemon.stdout is not None
            child = int(daemon.stdout.readline())
            daemon.kill()
            daemon.wait(10)
            deadline = time.monotonic() + 10
            while not _gone(child) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert _gone(child), "the line's process outlived the daemon"
        finally:
            daemon.kill()
            daemon.wait(10)
