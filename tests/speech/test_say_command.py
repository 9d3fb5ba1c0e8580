"""``dgt-bridge say``: from an event file, and what it says of the running daemon."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import chess
import pytest

from daemon.cli import main
from daemon.game.events import ClockUpdate, GameStart, Move
from daemon.game.record import replay


def feed(sans: list[str]) -> list[dict]:
    board = chess.Board()
    events = [GameStart(t=0.0, fen=board.fen()).to_dict()]
    for ply, san in enumerate(sans, 1):
        move = board.parse_san(san)
        by = "white" if board.turn else "black"
        board.push(move)
        events.append(
            Move(t=ply, ply=ply, uci=move.uci(), san=san, fen=board.fen(), by=by,
                 speech="").to_dict()
        )  # fmt: skip
    events.append(ClockUpdate(t=9.0, white=300.0, black=61.0, running="white").to_dict())
    return events


@pytest.fixture
def event_file(tmp_path: Path) -> Path:
    path = tmp_path / "game.jsonl"
    lines = [json.dumps(e) for e in feed(["e4", "c5", "Nf3", "d6", "d4", "cxd4"])]
    lines.insert(3, "{not json")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_say_from_an_event_file_prints_with_the_text_engine(event_file, capsys) -> None:
    assert main(["say", "last", "--events", str(event_file), "--engine", "text"]) == 0
    out, err = capsys.readouterr()
    assert out == "Letzter Zug: Bauer Cesar schlägt David vier\n"
    assert f"{event_file}, line 4: not JSON" in err  # reported, and nothing else lost

    assert main(["say", "clock", "--by", "black", "--events", str(event_file),
                 "--engine", "text"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert out.startswith("Züge gespielt: ") and ". Schwarz verbraucht " in out

    assert main(["say", "square", "d4", "--events", str(event_file), "--engine", "text"]) == 0
    assert capsys.readouterr().out == "David vier: Bauer Schwarz\n"

    assert main(["say", "piece", "N", "--events", str(event_file), "--engine", "text",
                 "--vocabulary", "en"]) == 0  # fmt: skip
    assert capsys.readouterr().out == "White Knights: Bravo one, Foxtrot three\n"


def test_say_needs_the_square(event_file, capsys) -> None:
    assert main(["say", "square", "--events", str(event_file), "--engine", "text"]) == 2
    assert "say square needs an argument" in capsys.readouterr().err


class _StateHandler(BaseHTTPRequestHandler):
    body = b"{}"

    def do_GET(self) -> None:
        if self.path != "/state.json":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args) -> None:
        return None


@pytest.fixture
def daemon_url():
    record = replay(feed(["d4", "Nf6", "c4", "e6", "Nc3", "Bb4"]))
    _StateHandler.body = json.dumps({"seq": 7, "boards": {"1": record.state()}}).encode()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StateHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_say_names_the_daemons_boards_when_asked_for_another(daemon_url, capsys) -> None:
    # the daemon saying the answer: tests/speech/test_say_through_daemon.py
    args = ["say", "last", "--url", daemon_url, "--board", "9", "--token", "t"]
    assert main(args) == 1
    assert "no board '9'" in capsys.readouterr().err


def test_say_without_a_daemon_says_so(capsys) -> None:
    assert main(["say", "last", "--url", "http://127.0.0.1:9", "--engine", "text"]) == 1
    err = capsys.readouterr().err
    assert "cannot reach the daemon at http://127.0.0.1:9" in err
    assert "--events FILE" in err
