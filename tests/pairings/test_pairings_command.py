"""``dgt-bridge pairings FILE``: the boards printed; ``--config`` writes every board's
players and the round into the configuration, comments kept, and the daemon's own
loader reads them; ``--send`` names them in a running daemon's page over its POST
controls; a bad file, a bad configuration or a daemon out of reach is one clear line
and a non-zero status, never a traceback."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.broadcast import BoardSettings, Broadcaster, BroadcastSettings
from daemon.cli import main
from daemon.config import load_file

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = Path(__file__).parent / "samples"
TRF = SAMPLES / "club-round3.trf"

HALL = """# The club's hall: one chain of four boards.
broadcast:
  round: "?"   # set by dgt-bridge pairings
  event: "Hall Club Championship 2026"
boards:
  - {id: "1", bus_port: /dev/ttyUSB0, bus_serial: "01025"}
  - {id: "2", bus_port: /dev/ttyUSB0, bus_serial: "01026", white: Ann, black: Bob}
  # the third board stands by the window
  - id: "3"
    bus_port: /dev/ttyUSB0
    bus_serial: "01027"
    white: "?"
  - id: "4"
    bus_port: /dev/ttyUSB0
    bus_serial: "01028"
    clock:
      time_control: "90+30"
"""


def test_the_boards_are_printed(capsys):
    assert main(["pairings", str(TRF)]) == 0
    out = capsys.readouterr().out
    assert "round 3 of Hall Club Championship 2026, 4 boards" in out
    assert "  board 1: Kramnik, Vladimir - Anand, Viswanathan" in out
    assert "  board 4: Okonkwo, Chidi - Dubois, Élodie" in out
    assert "  no board: Bye, Late Entry" in out


def test_the_configuration_gets_every_boards_players_and_the_round(tmp_path, capsys):
    config = tmp_path / "hall.yaml"
    config.write_text(HALL, encoding="utf-8")
    assert main(["pairings", str(TRF), "--config", str(config)]) == 0
    assert "4 boards named, round 3" in capsys.readouterr().out
    settings = load_file(config, {})
    assert [(b.id, b.white, b.black) for b in settings.boards] == [
        ("1", "Kramnik, Vladimir", "Anand, Viswanathan"),
        ("2", "Dreev, Aleksey", "Hou, Yifan"),
        ("3", "Lindqvist, Åke", "Müller, Käthe"),
        ("4", "Okonkwo, Chidi", "Dubois, Élodie"),
    ]
    assert settings.broadcast.round == "3"
    text = config.read_text(encoding="utf-8")
    for kept in ("# The club's hall", "# set by dgt-bridge pairings",
                 "# the third board stands by the window", 'time_control: "90+30"'):  # fmt: skip
        assert kept in text
    # A later round's file names them again, in place.
    assert main(["pairings", str(TRF), "--round", "1", "--config", str(config)]) == 0
    settings = load_file(config, {})
    assert settings.broadcast.round == "1"
    assert ("Kramnik, Vladimir", "Müller, Käthe") in [(b.white, b.black) for b in settings.boards]
    assert len(config.read_text(encoding="utf-8").splitlines()) == len(text.splitlines())


def test_boards_the_configuration_lacks_are_named(tmp_path, capsys):
    config = tmp_path / "hall.yaml"
    config.write_text(HALL.split('  - id: "3"')[0], encoding="utf-8")
    assert main(["pairings", str(TRF), "--config", str(config)]) == 1
    captured = capsys.readouterr()
    assert "2 boards named" in captured.out
    assert "not in the configuration's boards: 3, 4" in captured.err
    assert load_file(config, {}).boards[1].white == "Dreev, Aleksey"


def test_a_configuration_without_boards_is_left_alone(tmp_path, capsys):
    config = tmp_path / "one.yaml"
    config.write_text("board:\n  port: auto\n", encoding="utf-8")
    assert main(["pairings", str(TRF), "--config", str(config)]) == 2
    assert "lists no boards" in capsys.readouterr().err
    assert config.read_text() == "board:\n  port: auto\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not a text file"),
        (b"Bo.;White;Black\n1;A;B\n", "does not say its round"),
    ],
)
def test_a_bad_pairings_file_is_one_line_and_status_2(tmp_path, content, message):
    bad = tmp_path / "round.csv"
    bad.write_bytes(content)
    done = subprocess.run(
        [sys.executable, "-m", "daemon", "pairings", str(bad)],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"dgt-bridge pairings: {bad}: ") and message in done.stderr


def test_a_missing_file(tmp_path, capsys):
    assert main(["pairings", str(tmp_path / "nope.trf")]) == 2
    assert "cannot be read" in capsys.readouterr().err


async def test_send_names_every_board_of_the_running_daemon(capsys):
    requests = []
    boards = [BoardSettings(id=str(n)) for n in range(1, 5)]
    broadcaster = Broadcaster(
        BroadcastSettings(address="127.0.0.1", port=0, token="s3cret", boards=boards),
        on_request=lambda board, request: requests.append((board, request)),
    )
    await broadcaster.start()
    url = f"http://127.0.0.1:{broadcaster.port}"
    try:
        code = await asyncio.to_thread(
            main, ["pairings", str(SAMPLES / "vega-round3.csv"), "--send", url, "--token", "s3cret"]
        )
        assert code == 0
        assert f"{url}: 4 boards named, round 3" in capsys.readouterr().out
        assert [(board, r.action, r.args) for board, r in requests] == [
            ("1", "players", {"white": "Kramnik, Vladimir", "black": "Anand, Viswanathan",
                              "round": "3"}),
            ("2", "players", {"white": "Dreev, Aleksey", "black": "Hou, Yifan", "round": "3"}),
            ("3", "players", {"white": "Lindqvist, Åke", "black": "Müller, Käthe", "round": "3"}),
            ("4", "players", {"white": "Okonkwo, Chidi", "black": "Dubois, Élodie", "round": "3"}),
        ]  # fmt: skip
        # A wrong token: refused, one line.
        code = await asyncio.to_thread(main, ["pairings", str(TRF), "--send", url, "--token", "x"])
        assert code == 2 and "refused the token" in capsys.readouterr().err
        # Boards the daemon does not have are named.
        requests.clear()
        code = await asyncio.to_thread(
            main, ["pairings", str(TRF), "--send", url, "--token", "s3cret", "--first-board", "3"]
        )
        err = capsys.readouterr().err
        assert code == 1 and "board 5: no board '5'" in err and "board 6" in err
        assert [board for board, _ in requests] == ["3", "4"]
    finally:
        await broadcaster.stop()


def test_send_to_nobody_is_one_line(capsys):
    code = main(["pairings", str(TRF), "--send", "http://127.0.0.1:9", "--token", "t"])
    assert code == 2 and "cannot be reached" in capsys.readouterr().err


def test_the_help_says_what_it_reads():
    done = subprocess.run(
        [sys.executable, "-m", "daemon", "pairings", "--help"], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0
    for word in ("TRF", "Swiss-Manager", "Vega", "--config", "--send", "--round"):
        assert word in done.stdout
