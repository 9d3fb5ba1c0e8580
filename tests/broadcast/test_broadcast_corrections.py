"""The arbiter's corrections end to end, through the documented POST controls.

A board's rules core and the daemon's broadcaster, wired as the daemon wires them
(the controls' requests -> core -> feed -> page, journal, MQTT, lichess), with a
real Mosquitto, a relay reading it (with the hall's key: the arbiter's mending
reaches it signed with the board's key; without keys a deep one is held for the
arbiter on the relay, test_broadcast_relay_rules), and a stand-in lichess push
endpoint. Each
correction is sent as the console sends it, and every output is read back: the
page's state, its live PGN, the journal's PGN on disk, the relay's game (what
MQTT carried) and the PGN lichess was pushed.
"""

from __future__ import annotations

import asyncio
import io
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import chess
import chess.pgn
from mqtt_helpers import wait_until
from test_broadcast_lichess import ROUND_ID, FakeLichess
from test_broadcast_lichess import TOKEN as LICHESS_TOKEN

from daemon.broadcast import (
    BoardSettings,
    Broadcaster,
    BroadcastSettings,
    MqttSettings,
    boardkeys,
)
from daemon.broadcast.relay import Relay
from daemon.broadcast.settings import LichessSettings
from daemon.game.record import GameRecord
from daemon.rules import RulesSettings
from daemon.rules.core import RulesCore
from daemon.storage.journal import Journal, resume_point
from drivers.sensors import BoardDump, ConnectionChange, Request, SquareChange

TOKEN = "s3cret-arbiter"


class Board:
    """One board: its core, the broadcaster (page, MQTT, lichess) and the journal."""

    def __init__(self, settings: BroadcastSettings, storage: Path) -> None:
        self.core = RulesCore(RulesSettings(use_clock=False))
        self.t = 0.0
        self.position = chess.Board()
        self.broadcaster = Broadcaster(settings, on_request=self.request, start_seq=0)
        self.journal = Journal(storage, fsync=False)
        self.feed_seen: list[dict[str, Any]] = []

    def judge(self, event: Any) -> None:
        for out in self.core.judge(event):
            self.publish(out.to_dict())

    def publish(self, event: dict[str, Any]) -> None:
        self.feed_seen.append(event)
        self.broadcaster.publish("1", event)
        self.journal.record_event(event)

    def settle(self) -> None:
        self.t += 3.0
        for out in self.core.tick(self.t):
            self.publish(out.to_dict())

    def request(self, board: str, request: Request) -> None:
        self.t += 0.1
        self.judge(Request(self.t, request.action, request.args))
        self.settle()

    def play(self, sans: str, *, seen: bool = True) -> None:
        """The moves made on the board (``seen``: the link reports them)."""
        for san in sans.split():
            move = self.position.parse_san(san)
            changes = [
                (move.from_square, None),
                (move.to_square, self.position.piece_at(move.from_square)),
            ]
            self.position.push(move)
            if not seen:
                continue
            for square, piece in changes:
                self.t += 0.3
                self.judge(
                    SquareChange(
                        self.t, chess.square_name(square), piece.symbol() if piece else None
                    )
                )
            self.settle()

    def outage(self, sans: str) -> None:
        """``sans`` made while the link was down; then the board's picture, no log."""
        self.t += 0.5
        self.judge(ConnectionChange(self.t, "lost", "read error"))
        self.play(sans, seen=False)
        self.t += 5.0
        self.judge(ConnectionChange(self.t, "connected", "/dev/ttyACM0"))
        self.judge(BoardDump(self.t, self.position.board_fen()))
        self.settle()


def _sans(pgn: str) -> list[str]:
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    board, sans = game.board(), []
    for move in game.mainline_moves():
        sans.append(board.san(move))
        board.push(move)
    return sans


async def _until(condition, timeout: float = 20.0) -> bool:
    return await asyncio.to_thread(wait_until, condition, timeout)


async def test_every_correction_reaches_the_page_the_pgn_the_journal_mqtt_and_lichess(
    broker, tmp_path: Path
) -> None:
    tournament = f"mend-{uuid.uuid4().hex[:6]}"
    hall = "the corrections test's hall key"
    (tmp_path / "board-1.key").write_text(boardkeys.board_key(hall, tournament, "1"))
    lichess = FakeLichess()
    await lichess.start()
    settings = BroadcastSettings(
        address="127.0.0.1", port=0, token=TOKEN, event="Club Open", round="3",
        boards=[BoardSettings(id="1", white="Morphy", black="Duke")],
        mqtt=MqttSettings(enabled=True, host="127.0.0.1", port=broker.port, tournament=tournament,
                          board_key_file=str(tmp_path / "board-{board}.key")),
        lichess=LichessSettings(enabled=True, round_id=ROUND_ID, token=LICHESS_TOKEN,
                                url=lichess.url, interval=0.3, max_backoff=0.5),
    )  # fmt: skip
    board = Board(settings, tmp_path)
    relay = Relay("127.0.0.1", broker.port, tournament, "3", address="127.0.0.1", port=0,
                  hall_key=hall)  # fmt: skip
    await board.broadcaster.start()
    await relay.start()
    session = aiohttp.ClientSession()
    url = f"http://127.0.0.1:{board.broadcaster.port}"
    auth = {"Authorization": f"Bearer {TOKEN}"}

    async def post(action: str, body: dict) -> tuple[int, dict]:
        async with session.post(f"{url}/control/{action}", json=body, headers=auth) as response:
            return response.status, await response.json()

    async def state() -> dict:
        async with session.get(f"{url}/state.json") as response:
            return (await response.json())["boards"]["1"]

    async def everywhere(sans: list[str]) -> None:
        """The page, its PGN, the journal's PGN, the relay (MQTT) and lichess agree."""
        assert [m["san"] for m in (await state())["moves"]] == sans
        async with session.get(f"{url}/game.pgn") as response:
            assert _sans(await response.text()) == sans
        assert board.journal.pgn_path is not None
        assert _sans(board.journal.pgn_path.read_text()) == sans
        assert await _until(
            lambda: (
                "1" in relay.hub.boards
                and [m.san for m in relay.hub.boards["1"].record.moves] == sans
            )
        ), "the relay, from MQTT"
        assert await _until(lambda: bool(lichess.accepted) and _sans(lichess.accepted[-1]) == sans)
        point = resume_point(board.journal.path)  # what a restarted daemon would resume
        assert point is None or point.uci_moves == [m["uci"] for m in (await state())["moves"]]

    try:
        board.judge(BoardDump(board.t, board.position.board_fen()))
        board.settle()
        board.play("e4 e5 Nf3")
        board.outage("Nc6 Bb5 a6")  # a6 Bb5 Nc6 leads there too: the arbiter decides
        offered = (await state())["recovery_lines"]
        assert offered == ["2...Nc6 3. Bb5 a6", "2...a6 3. Bb5 Nc6"]

        # Choose the line: the moves everywhere, as if the board had seen them.
        status, answer = await post("choose_line", {"line": offered[0], "preview": True})
        assert status == 200 and answer["preview"]["summary"] == "plays 2...Nc6 3. Bb5 a6"
        assert len((await state())["moves"]) == 3, "a preview changes nothing"
        status, answer = await post("choose_line", {"line": offered[0]})
        assert status == 202, answer
        await everywhere(["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"])
        assert (await state())["recovery_lines"] == [] and (await state())["irregularity"] is None

        # Moves from the scoresheet: previewed, refused when illegal, then applied.
        status, answer = await post("enter_moves", {"san": "4. Ba4 Nf6 5. Qxf7"})
        assert status == 400 and answer["field"] == "san"
        assert answer["error"] == (
            "enter_moves: 5. Qxf7 is not a legal move in this position (White to move)"
        )
        status, answer = await post("enter_moves", {"san": "4. Ba4 Nf6 5. O-O", "preview": True})
        assert status == 200, answer
        assert answer["preview"]["line"] == "4. Ba4 Nf6 5. O-O"
        assert answer["preview"]["fen"].startswith(
            "r1bqkb1r/1ppp1ppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQ1RK1 b"
        )
        status, answer = await post("enter_moves", {"san": "4. Ba4 Nf6 5. O-O"})
        assert status == 202 and answer["plan"]["summary"] == "plays 4. Ba4 Nf6 5. O-O"
        await everywhere(["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O"])

        # A past move corrected (3...a6 was 3...a5); corrections that do not replay.
        status, answer = await post("correct_move", {"ply": 1, "san": "d4"})
        assert status == 400
        assert "the later move 3. Bb5 is not a legal move" in answer["error"]
        status, answer = await post("correct_move", {"ply": 3, "san": "Nc3"})
        assert status == 400 and "the later move 5. O-O is not a legal move" in answer["error"]
        status, answer = await post("correct_move", {"ply": 6, "san": "a5"})
        assert status == 202, answer
        await everywhere(["e4", "e5", "Nf3", "Nc6", "Bb5", "a5", "Ba4", "Nf6", "O-O"])

        # Take back to a ply, out of range first.
        status, answer = await post("takeback_to", {"ply": 9})
        assert (status, answer["field"]) == (400, "ply")
        assert "ply 9 is out of range" in answer["error"]
        assert (await post("takeback_to", {"ply": 6}))[0] == 202
        await everywhere(["e4", "e5", "Nf3", "Nc6", "Bb5", "a5"])

        # The position from the board as it stands (it still shows the Ruy Lopez).
        status, answer = await post("position_from_board", {"turn": "white"})
        assert status == 202, answer
        now = await state()
        assert now["start_fen"] == board.position.fen().replace(" b ", " w ")
        assert now["moves"] == []

        # A complete game added from its PGN: the names, the moves, the result.
        pgn = '[White "Anna"]\n[Black "Bert"]\n\n1. d4 d5 2. c4 e6 3. Nc3 Nf6 1-0'
        assert (await post("add_game", {"pgn": pgn.replace("Nf6", "Nf5")}))[0] == 400
        status, answer = await post("add_game", {"pgn": pgn})
        assert status == 202 and answer["plan"]["summary"].startswith("adds the game Anna - Bert")
        await everywhere(["d4", "d5", "c4", "e6", "Nc3", "Nf6"])
        assert (await state())["result"] == "1-0"
        assert await _until(lambda: '[White "Anna"]' in lichess.accepted[-1])
        assert '[Result "1-0"]' in board.journal.pgn_path.read_text()
    finally:
        await session.close()
        await relay.stop()
        await board.broadcaster.stop()
        board.journal.close()
        await lichess.stop()


def test_a_move_replayed_by_a_correction_keeps_its_clock_in_the_pgn() -> None:
    """The later moves a correction replays keep the times of their completion."""
    record = GameRecord()
    core = RulesCore(RulesSettings(use_clock=False))
    record.apply({"t": 0, "type": "game_start", "fen": chess.STARTING_FEN})
    board = chess.Board()
    for ply, (san, left) in enumerate(
        [("e4", 5390), ("e5", 5380), ("Nf3", 5300), ("Nc6", 5200)], 1
    ):
        move = board.parse_san(san)
        board.push(move)
        record.apply({"t": ply, "type": "move", "ply": ply, "uci": move.uci(), "san": san,
                      "fen": board.fen(), "by": "white" if ply % 2 else "black",
                      "clock": {"white": left, "black": left - 1}})  # fmt: skip
    core.resume(0.0, chess.STARTING_FEN, [m.uci for m in record.moves])
    for event in core.judge(Request(9.0, "correct_move", {"ply": 3, "san": "Nc3"})):
        record.apply(event.to_dict())
    assert [m.san for m in record.moves] == ["e4", "e5", "Nc3", "Nc6"]
    assert [m.clock for m in record.moves][2:] == [
        {"white": 5300, "black": 5299},
        {"white": 5200, "black": 5199},
    ]
    assert "2. Nc3 { [%clk 1:28:20] } 2... Nc6 { [%clk 1:26:39] }" in " ".join(record.pgn().split())


def test_the_lines_are_offered_until_the_position_stands_again() -> None:
    """The players put the pieces back where the record is: no line to pick any more."""
    record = GameRecord()
    record.apply({"t": 0, "type": "game_start", "fen": chess.STARTING_FEN})
    record.apply({"t": 1, "type": "moves_recovered", "moves": [], "san": "", "how": "ambiguous",
                  "candidates": ["1. e4 e5 2. Nf3", "1. Nf3 e5 2. e4"]})  # fmt: skip
    assert record.state()["recovery_lines"] == ["1. e4 e5 2. Nf3", "1. Nf3 e5 2. e4"]
    assert GameRecord.from_state(record.state()).recovery_lines == record.recovery_lines
    record.apply({"t": 2, "type": "position_restored", "fen": chess.STARTING_FEN})
    assert record.state()["recovery_lines"] == []
