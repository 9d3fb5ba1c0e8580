"""``dgt-bridge demo --once``: the first command of the README, start to finish."""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import chess.pgn
import pytest

from daemon.commands.demo import ILLEGAL_MOVE_BEFORE_PLY, demo_sensor_log
from daemon.files import resources
from daemon.game.record import format_clock
from drivers.sensors import ClockReport

ROOT = Path(__file__).resolve().parents[2]


def shipped_game(number: int) -> chess.pgn.Game:
    stream = io.StringIO(resources.demo_games_file().read_text())
    for _ in range(number):
        game = chess.pgn.read_game(stream)
    assert game is not None
    return game


def test_the_shipped_games_are_public_domain_and_show_the_move_kinds() -> None:
    text = resources.demo_games_file().read_text()
    stream = io.StringIO(text)
    games = []
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    assert len(games) >= 3
    kinds = set()
    for game in games:
        assert game.headers["Source"] == "gnuchess-book"  # the only ones we may copy
        assert game.headers["Result"] in ("1-0", "0-1", "1/2-1/2")
        assert not game.errors
        board = game.board()
        for move in game.mainline_moves():
            if board.is_kingside_castling(move):
                kinds.add("O-O")
            if board.is_queenside_castling(move):
                kinds.add("O-O-O")
            if board.is_capture(move):
                kinds.add("capture")
            if move.promotion:
                kinds.add("promotion")
            board.push(move)
        if board.is_checkmate():
            kinds.add("mate")
    assert kinds == {"O-O", "O-O-O", "capture", "promotion", "mate"}
    for game in games:  # headers a newcomer reads in the banner and the PGN
        for tag in ("White", "Black"):
            assert re.fullmatch(r"[^(),]+, [^(),]+", game.headers[tag]), game.headers[tag]
        for tag in ("Event", "Site"):
            value = game.headers[tag]
            assert ";" not in value and "  " not in value and not value.isdigit(), value


def test_demo_once_plays_the_game_to_the_end_and_prints_every_move(tmp_path: Path) -> None:
    game = shipped_game(1)
    # No config and no state of anyone's; the package found as installed (or via
    # PYTHONPATH when the tests run from a bare checkout).
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "LANG": "en_GB.UTF-8"}
    env.pop("DGT_BRIDGE_CONFIG", None)
    env.pop("LC_ALL", None)
    env.pop("LC_MESSAGES", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "daemon",
            "demo",
            "--once",
            "--speed",
            "20",
            "--no-speech",
            "--port",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=tmp_path,  # not the source tree
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    board = game.board()
    printed = re.findall(r"^  \d+\.(?:\.\.)?\s+(\S+)", out, flags=re.MULTILINE)
    expected = []
    for move in game.mainline_moves():
        expected.append(board.san(move))
        board.push(move)
    assert printed == expected
    assert "Springer Felix drei" in out  # 2. Nf3, in the Appendix E words
    assert "Lange Rochade" in out and "Kurze Rochade" in out
    # What the player hears (German), then plain English for the terminal; no codes.
    assert ": Unmöglicher Zug." in out and "llegal move." in out  # "!! Weiß: Unmöglicher Zug."
    assert "!! Figur verschoben" in out and "(Piece displaced" in out
    assert out.count("** Position wiederhergestellt") >= 2 and "(Position restored)" in out
    assert "illegal_move (7.4)" not in out and "displaced_pieces" not in out
    assert "the board stands the normal way: White's pieces on the side of its cable" in out
    assert "** Partie beendet. Schwarz gewinnt." in out  # 0-1
    assert re.search(r"live page at http://[\d.]+:\d+/", out)
    assert f"{game.headers['Event']}" in out.splitlines()[0] + out.splitlines()[1]
    assert f"all {len(expected)} half-moves recognised" in out
    journal_dir = re.search(r"journal and PGN in (\S+)", out).group(1)
    pgn = chess.pgn.read_game(io.StringIO(next(Path(journal_dir).glob("*.pgn")).read_text()))
    assert [m.uci() for m in pgn.mainline_moves()] == [m.uci() for m in game.mainline_moves()]
    # Every [%clk] is what the emulated clock showed the mover after his press.
    assert [node.comment for node in pgn.mainline()] == [
        f"[%clk {format_clock(seconds)}]" for seconds in clock_after_each_press(game)
    ]


def clock_after_each_press(game: chess.pgn.Game) -> list[int]:
    """The mover's time as the demo's emulated clock shows it after each of his
    presses (whole seconds, rounded up as a clock counts down)."""
    reports = [e for e in demo_sensor_log(game, seed=1) if isinstance(e, ClockReport)]
    after: dict[str, list[int]] = {"white": [], "black": []}
    for before, now in itertools.pairwise(reports):
        for colour, times in after.items():
            if before.running == colour and now.running != colour:
                shown = math.ceil(getattr(now, colour) - 1e-6)
                if not times or times[-1] != shown:  # the arbiter's restore: no press
                    times.append(shown)
    # The demo's illegal move is pressed (its increment lands) and then taken back.
    illegal_mover = "white" if ILLEGAL_MOVE_BEFORE_PLY % 2 else "black"
    del after[illegal_mover][(ILLEGAL_MOVE_BEFORE_PLY - 1) // 2]
    plies = len(list(game.mainline_moves()))
    return [after["white" if ply % 2 == 0 else "black"][ply // 2] for ply in range(plies)]


def processes_in_session(session: int) -> list[str]:
    """The command lines of every process still in a session (the demo started one)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if int(fields[3]) == session and fields[0] != "Z":  # field 6 of stat: the session
            found.append(cmdline.decode(errors="replace"))
    return found


@pytest.mark.parametrize(
    ("signal_number", "after", "status"), [(signal.SIGINT, 5.0, 130), (signal.SIGTERM, 0.0, 0)]
)
def test_a_signal_stops_the_demo_mid_game_and_leaves_nothing_running(
    tmp_path: Path, signal_number: int, after: float, status: int
) -> None:
    """Ctrl-C (or systemd's SIGTERM) during the game: the demo ends at once, not when
    the game would have; no process of it is left, the page no longer answers."""
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("DGT_BRIDGE_CONFIG", None)
    demo = subprocess.Popen(
        [sys.executable, "-m", "daemon", "demo", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
        start_new_session=True,  # its own session: whatever it starts is found by it
    )
    started = time.monotonic()
    try:
        lines = []
        while not any("live page at" in line for line in lines):
            line = demo.stdout.readline()
            assert line, "".join(lines) + demo.stderr.read()
            lines.append(line)
        url = re.search(r"(http://\S+)", lines[-1]).group(1)
        time.sleep(max(0.0, after - (time.monotonic() - started)))
        assert demo.poll() is None  # the game is still being played
        demo.send_signal(signal_number)
        sent = time.monotonic()
        demo.wait(timeout=20)  # the game itself lasts about 90 s
        took = time.monotonic() - sent
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()
    out, err = demo.communicate()
    assert demo.returncode == status, out + err
    assert "Traceback" not in err, err
    assert took < 10, took  # the figure: benchmarks/RESULTS.md (well under a second)
    assert processes_in_session(demo.pid) == []
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=2)


def test_the_hall_demo_plays_a_game_on_every_board_of_a_bus_chain_for_the_wall_screen(
    tmp_path: Path,
) -> None:
    """``demo --boards 3``: three emulated boards on one bus chain, each its own
    shipped game, read by the real daemon; the wall screen's address is printed and
    serves every board with its players; each board's game is exact on disk."""
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("DGT_BRIDGE_CONFIG", None)
    demo = subprocess.Popen(
        [sys.executable, "-m", "daemon", "demo", "--boards", "3", "--half-moves", "8",
         "--speed", "4", "--no-speech", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
        start_new_session=True,
    )  # fmt: skip
    lines: list[str] = []
    try:
        while not any("still serving" in line for line in lines):
            line = demo.stdout.readline()
            assert line, "".join(lines) + demo.stderr.read()
            lines.append(line)
        out = "".join(lines)
        wall = re.search(r"wall screen at (http://\S+)", out).group(1)
        assert wall.endswith("/?wall=fit")
        base = wall.removesuffix("?wall=fit").replace("//0.0.0.0", "//127.0.0.1")
        with urllib.request.urlopen(base + "?wall=fit", timeout=5) as response:
            assert response.status == 200
        games = [shipped_game(n) for n in (1, 2, 3)]
        wanted = [[m.uci() for m in list(g.mainline_moves())[:8]] for g in games]
        # The page shows a move once it is on the card (the disk writer's fsync), so
        # on a loaded machine the last one may come a moment after the demo's line.
        deadline = time.monotonic() + 10
        while True:
            with urllib.request.urlopen(base + "state.json", timeout=5) as response:
                boards = json.load(response)["boards"]
            shown = [[m["uci"] for m in state["moves"]] for state in boards.values()]
            if shown == wanted or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert list(boards) == ["1", "2", "3"]
        for (board, state), game in zip(boards.items(), games, strict=True):
            expected = [m.uci() for m in list(game.mainline_moves())[:8]]
            assert [m["uci"] for m in state["moves"]] == expected, board
            assert state["headers"]["white"] == game.headers["White"]
        assert "all 3 games recognised, every one of the 24 half-moves" in out
        stored = Path(re.search(r"journals and PGNs in (\S+)", out).group(1))
        pgns = sorted(stored.glob("board-*/*.pgn"))
        assert len(pgns) == 3, pgns
        for path in pgns:
            with path.open(encoding="utf-8") as handle:
                on_disk = chess.pgn.read_game(handle)
            assert on_disk is not None and len(list(on_disk.mainline_moves())) == 8
        demo.send_signal(signal.SIGINT)
        demo.wait(timeout=20)
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()
    _, err = demo.communicate()
    assert demo.returncode == 130 and "Traceback" not in err, err
