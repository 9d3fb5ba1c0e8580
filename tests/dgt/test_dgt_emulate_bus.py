"""``dgt-bridge emulate --bus N --pgn FILE``: a rehearsal of a hall without hardware.

The command (a real subprocess) prints its port and the ``boards:`` list; the real
daemon, configured with that list, reads every board's game exactly; the faults typed
on its standard input (unplug, replug, corrupt, status, and a mistake) act on the
chain and are answered in words; ``--help`` lists them; bad arguments are one line."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import chess.pgn

from daemon.app import Daemon
from daemon.config import load_text

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

GAMES = """[Event "rehearsal"]
[White "A"]
[Black "B"]
[Result "*"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *

[Event "rehearsal"]
[White "C"]
[Black "D"]
[Result "*"]

1. d4 d5 2. c4 e6 3. Nc3 Nf6 *
"""


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], list[str]]:
    pgn = tmp_path / "games.pgn"
    pgn.write_text(GAMES)
    process = subprocess.Popen(
        [sys.executable, "-m", "daemon", "emulate", "--bus", "2", "--pgn", str(pgn),
         "--dir", str(tmp_path / "emu"), "--speed", "4", "--delay", "0.5", *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=ENV, bufsize=1,
    )  # fmt: skip
    assert process.stdout is not None
    head = [process.stdout.readline() for _ in range(6)]
    return process, head


def _end(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()


async def test_the_daemon_reads_every_boards_game_from_the_emulated_chain(tmp_path):
    process, head = _start(tmp_path)
    try:
        port = head[0].strip()
        assert port == str(tmp_path / "emu" / "dgt-bus")
        assert head[2] == "boards:\n"
        assert head[3] == f'  - {{id: "1", bus_port: {port}, bus_serial: "01025"}}\n'
        yaml = "".join(head[2:5]) + "broadcast:\n  enabled: false\n"
        settings = load_text(yaml, "hall.yaml", {})
        moves: dict[str, list[str]] = {"1": [], "2": []}

        def seen(event):
            if event["type"] == "move":
                moves[event["board"]].append(event["uci"])

        daemon = Daemon(settings, speech=False, storage_dir=tmp_path / "games", resume=False,
                        on_event=seen)  # fmt: skip
        with open(tmp_path / "games.pgn") as handle:
            games = [chess.pgn.read_game(handle), chess.pgn.read_game(handle)]
        wanted = {str(n): [m.uci() for m in g.mainline_moves()] for n, g in enumerate(games, 1)}
        await daemon.start()
        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 90
            while moves != wanted and loop.time() < deadline:
                await asyncio.sleep(0.2)
        finally:
            daemon.stop()
            await daemon.close()
        assert moves == wanted
    finally:
        _end(process)


def test_faults_typed_on_standard_input_act_on_the_chain(tmp_path):
    process, head = _start(tmp_path)
    try:
        assert head[5].startswith("# type a fault")
        assert process.stdin is not None and process.stdout is not None
        answers = []
        for line in ("unplug 2", "status", "corrupt 1 3", "replug 2", "status", "unplug 9",
                     "shake 1", "help"):  # fmt: skip
            process.stdin.write(line + "\n")
            process.stdin.flush()
            answers.append(process.stdout.readline())
            if line == "help":
                break
            if line == "status":
                answers[-1] += process.stdout.readline() + process.stdout.readline()
        assert answers[0] == "board 2 unplugged\n"
        assert "board 2 (01026): UNPLUGGED" in answers[1]
        assert answers[2] == "board 1: the next 3 replies corrupted\n"
        assert answers[3] == "board 2 plugged back\n"
        assert "board 2 (01026): plugged" in answers[4]
        assert answers[5] == "? board 9: the chain has boards 1 to 2\n"
        assert answers[6].startswith("? 'shake' is not a fault")
        assert answers[7].startswith("faults on the chain")
    finally:
        _end(process)


def test_help_lists_the_faults_and_bad_arguments_are_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "daemon", "emulate", "--help"],
                          capture_output=True, text=True, env=ENV, timeout=60)  # fmt: skip
    assert done.returncode == 0
    for word in ("--bus N", "--fault", "unplug B", "replug B", "corrupt B [N]", "status"):
        assert word in done.stdout
    for args, message in (
        (["--bus", "0"], "--bus 0: a chain has 1 to 64 boards"),
        (["--fault", "unplug 1"], "--fault is for a chain of boards"),
        (["--bus", "2", "--fault", "unplug 3 at 10"], "the chain has boards 1 to 2"),
        (["--bus", "2", "--fault", "unplug 1 at soon"], "give seconds"),
        (["--bus", "2", "--pgn", str(tmp_path / "none.pgn")], "none.pgn"),
    ):
        done = subprocess.run([sys.executable, "-m", "daemon", "emulate", *args],
                              capture_output=True, text=True, env=ENV, timeout=60)  # fmt: skip
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr and message in done.stderr, done.stderr
