"""Failures that used to be silent, or said the wrong thing, now say what is wrong.

- ``run`` with no board: "no board found on PORT, still looking", spoken in every
  vocabulary's own words, never "connection lost" for a board never connected; the
  port's errno text once.
- ``relay`` with no broker: it says the broker cannot be reached, and keeps trying.
- an empty sensor log: it held no events; ``say square z9`` / ``say piece x``: usage
  errors (exit 2).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from daemon.app import Daemon
from daemon.cli import main
from daemon.config import load_text
from daemon.speech.messages import event_text
from daemon.speech.vocabulary import available_vocabularies, load_vocabulary

ROOT = Path(__file__).resolve().parents[2]


async def test_run_with_no_board_says_it_is_still_looking_not_that_it_was_lost(
    tmp_path: Path,
) -> None:
    settings = load_text("broadcast:\n  enabled: false\n", "test.yaml", environ={})
    feed: list[dict] = []
    missing = str(tmp_path / "dgt-board")
    daemon = Daemon(
        settings, port=missing, speech=False, storage_dir=tmp_path, on_event=feed.append
    )
    await daemon.start()
    try:
        for _ in range(100):
            if any(e["type"] == "connection" for e in feed):
                break
            await asyncio.sleep(0.05)
    finally:
        daemon.stop()
        await daemon.close()
    connection = next(e for e in feed if e["type"] == "connection")
    assert connection["state"] == "lost" and connection["found"] is False
    detail = connection["detail"]
    assert detail.startswith(f"no board found on {missing}, still looking")
    assert detail.count("No such file or directory") == 1 and "Errno" not in detail


@pytest.mark.parametrize("name", available_vocabularies())
def test_no_board_is_said_in_each_vocabulary_and_differs_from_a_lost_one(name: str) -> None:
    vocabulary = load_vocabulary(name)
    lost = {"type": "connection", "state": "lost", "detail": "read error"}
    never = {**lost, "found": False}
    said = event_text(never, vocabulary)
    assert said == vocabulary.message("board_not_found")
    assert said != event_text(lost, vocabulary) == vocabulary.message("connection_lost")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_relay_with_no_broker_says_so_and_keeps_trying(tmp_path: Path) -> None:
    broker = free_port()  # nothing listens there
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    relay = subprocess.Popen(
        [
            *(sys.executable, "-m", "daemon", "relay", "--broker", f"127.0.0.1:{broker}"),
            *("--tournament", "t", "--round", "1", "--port", "0", "--address", "127.0.0.1"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 30
        line = ""
        while "cannot be reached" not in line and time.monotonic() < deadline:
            line = relay.stderr.readline()
            assert line or relay.poll() is None, "the relay ended"
        assert f"MQTT broker at 127.0.0.1:{broker} cannot be reached; still trying" in line
        time.sleep(1)
        assert relay.poll() is None  # still running, still trying
    finally:
        relay.terminate()
        relay.wait(timeout=15)


def test_an_empty_sensor_log_says_it_held_no_events(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("# nothing recorded\n")
    assert main(["replay", "--fast", str(empty)]) == 1
    assert capsys.readouterr().err == f"dgt-bridge replay: {empty} held no events\n"


@pytest.mark.parametrize(("what", "arg"), [("square", "z9"), ("square", "e44"), ("piece", "x")])
def test_a_bad_say_argument_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str, arg: str
) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("")
    assert main(["say", what, arg, "--engine", "text", "--events", str(events)]) == 2
    err = capsys.readouterr().err
    assert f"{arg!r} is not a" in err and err.count("say") == 1
