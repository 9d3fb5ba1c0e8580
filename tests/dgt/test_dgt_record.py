"""``record``: a sensor log played by the emulator comes back out of the link unchanged."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
import time
from pathlib import Path

from daemon.commands.record import record_to
from daemon.config import load_text
from drivers.sensorlog import read_events, read_log
from drivers.sensors import BoardDump, ClockReading, ClockReport, ConnectionChange, SquareChange
from drivers.simulators.emulator import BoardEmulator

ROOT = Path(__file__).resolve().parents[2]


def board_lines(events) -> list[tuple]:
    return [
        ("board", e.placement) if isinstance(e, BoardDump) else ("square", e.square, e.piece)
        for e in events
        if isinstance(e, BoardDump | SquareChange)
    ]


async def test_recording_the_emulated_capture_gives_back_its_board_changes_and_clock(shared):
    source = read_log(str(shared / "data" / "dgt-capture-1" / "sensor-log.jsonl"))
    out = io.StringIO()
    # The daemon's own clock interpreter, told the capture's time control (3 minutes,
    # 2 seconds a move) so that it takes each press's increment at once, as `run` does.
    settings = load_text("clock:\n  time_control: '3+2'\n", "test.yaml", environ={})
    with BoardEmulator(white_on_left=False) as emulator:  # White's clock on the right
        recording = asyncio.create_task(record_to(out, emulator.port_path, 60, settings))
        await asyncio.sleep(0.5)  # let the link start up
        emulator.play(source, speed=60)
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(None, emulator.wait_played, 30)
        await asyncio.sleep(0.5)
        recording.cancel()
        await asyncio.gather(recording, return_exceptions=True)
    recorded = list(read_events(io.StringIO(out.getvalue())))
    assert board_lines(recorded) == board_lines(source)
    # The log holds what the clock showed, left and right, not colours: with White on
    # the right every reading of the capture comes in order (the first one is the
    # emulated clock before the capture's first reading).
    assert not any(isinstance(e, ClockReport) for e in recorded)
    colour = {"right": "white", "left": "black", None: None}
    clocks = [(e.right, e.left, colour[e.running]) for e in recorded if isinstance(e, ClockReading)]
    truth = [(e.white, e.black, e.running) for e in source if isinstance(e, ClockReport)]
    assert clocks[1:] == truth
    assert not any(isinstance(e, ConnectionChange) for e in recorded)


def test_record_command_writes_and_flushes_a_log_for_its_duration(tmp_path):
    out = tmp_path / "game.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with BoardEmulator() as emulator:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "daemon",
                "record",
                "--port",
                emulator.port_path,
                str(out),
                "--duration",
                "20",
            ],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and not (out.exists() and out.read_text()):
                time.sleep(0.05)
            # The first line is on disk while the recorder still runs.
            assert process.poll() is None
            emulator.set_square("e2", None)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and '"e2"' not in out.read_text():
                time.sleep(0.05)
        finally:
            process.send_signal(2)  # Ctrl-C
            _, stderr = process.communicate(timeout=15)
    assert process.returncode == 0, stderr
    events = read_log(str(out))
    assert isinstance(events[0], BoardDump)
    changes = [e for e in events if isinstance(e, SquareChange)]
    assert changes == [SquareChange(changes[0].t, "e2", None)]
    assert f"recorded {len(events)} events" in stderr


def test_record_command_refuses_a_bad_duration(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "daemon", "record", str(tmp_path / "x.jsonl"), "--duration", "0"],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2 and "--duration" in result.stderr


async def test_recording_stops_by_itself_after_its_duration():
    out = io.StringIO()
    with BoardEmulator() as emulator:
        count = await asyncio.wait_for(record_to(out, emulator.port_path, 1.5), 20)
    events = list(read_events(io.StringIO(out.getvalue())))
    assert count == len(events) >= 1
    assert isinstance(events[0], BoardDump)
