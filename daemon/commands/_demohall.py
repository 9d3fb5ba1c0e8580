"""``dgt-bridge demo --boards N``: a hall of N boards for the organiser to watch.

The single-board demo shows one game; an organiser deciding whether to run a round
on it wants to see the hall: the wall screen (``/?wall=fit``) with every board, the
names, the clocks. Here N emulated boards stand on one DGT bus chain (the club's
daisy chain, ``drivers/simulators/busemulator.py``, at the line's real 9600 baud), each
playing a shipped game as human hands would (board i the next game of the file,
round and round, each with hands of its own), and the real daemon reads the chain
exactly as it reads a real one, with a journal and a PGN per board. Nothing is
short-circuited: the demo also shows that a hall works on this machine.

Silent (a hall's boards are), and its transcript is one line a game: a hall's moves
would scroll past faster than anyone reads them; they are on the wall screen.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import chess
import chess.pgn

from daemon.commands._waiting import play_then_serve, wait_until
from daemon.files import resources
from daemon.game.events import DomainEvent, GameEnd, Move, Takeback
from drivers.records import Record

#: The chain's first serial number (``dgt-bridge emulate --bus`` numbers as well).
FIRST_SERIAL = 1025
MAX_BOARDS = 64  # a DGT bus chain's limit, as ``emulate --bus``


@dataclass(eq=False, repr=False)
class HallGame(Record):
    """One board of the hall: its game, and what the daemon said of it."""

    board: str
    game: chess.pgn.Game
    moves: list[chess.Move]
    heard: dict[int, str] = field(default_factory=dict)  # ply -> uci
    ended: GameEnd | None = None

    @property
    def names(self) -> tuple[str, str]:
        return self.game.headers.get("White", "?"), self.game.headers.get("Black", "?")

    def recognised(self) -> list[str]:
        return [self.heard[p] for p in sorted(self.heard)]

    def done(self) -> bool:
        return self.ended is not None or len(self.heard) >= len(self.moves)


def shipped_games() -> list[chess.pgn.Game]:
    """Every shipped demo game."""
    text = resources.demo_games_file().read_text(encoding="utf-8")
    stream = io.StringIO(text)
    games = []
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    return games


def hall_games(count: int, first: int, half_moves: int | None) -> list[HallGame]:
    """Board i plays shipped game ``first + i`` (1-based, round and round), cut
    after ``half_moves`` when given."""
    games = shipped_games()
    hall = []
    for index in range(count):
        game = games[(first - 1 + index) % len(games)]
        moves = list(game.mainline_moves())
        if half_moves is not None:
            moves = moves[:half_moves]
        hall.append(HallGame(str(index + 1), game, moves))
    return hall


class HallTranscript:
    """The feed of every board: moves kept per board; a line when a game ends or
    an irregularity is seen (the wall screen shows the rest). ``outputs()``: each
    board's output, for the daemon."""

    def __init__(self, games: list[HallGame]) -> None:
        self.games = {g.board: g for g in games}
        self.changed = asyncio.Event()

    def outputs(self) -> dict[str, BoardTranscript]:
        return {board: BoardTranscript(game, self.changed) for board, game in self.games.items()}


@dataclass(eq=False, repr=False)
class BoardTranscript(Record):
    """One board's part of the hall's transcript: an output of its pipeline."""

    SHOWN: ClassVar[tuple[str, ...]] = ("irregularity", "game_end")

    game: HallGame
    changed: asyncio.Event

    def receive(self, event: DomainEvent) -> None:
        from daemon.game.formatting import describe

        game = self.game
        match event:
            case Move(ply=ply, uci=uci):
                game.heard = {p: u for p, u in game.heard.items() if p < ply}
                game.heard[ply] = uci
            case Takeback(ply=ply):
                game.heard = {p: u for p, u in game.heard.items() if p <= ply}
            case GameEnd():
                game.ended = event
        if event.type in self.SHOWN:
            white, black = game.names
            print(f"  board {game.board} ({white} - {black}): {describe(event)}", flush=True)
        self.changed.set()


def settings_for_hall(chain_port: str, games: list[HallGame], serials: list[str]) -> Any:
    """The shipped defaults, with the chain's boards listed as ``boards:`` and each
    board's players from its game (as ``dgt-bridge pairings`` would name them)."""
    from daemon.config import BoardEntry, load_file

    settings = load_file(resources.default_config_file(), os.environ)
    settings.boards = [
        BoardEntry(
            id=g.board, bus_port=chain_port, bus_serial=serial, white=g.names[0], black=g.names[1]
        )
        for g, serial in zip(games, serials, strict=True)
    ]
    settings.broadcast = replace(settings.broadcast, event="dgt-bridge hall demo", round="1")
    settings.game = replace(settings.game, event="dgt-bridge hall demo", round="1")
    return settings


async def run_hall(args: argparse.Namespace, port: int, stop: Any) -> int:
    """The hall demo, start to end: 0 when every board's every move was recognised."""
    from daemon.app import Daemon
    from daemon.commands.emulate import chain_serials
    from daemon.config import ConfigError
    from drivers.simulators.busemulator import BusChainEmulator
    from drivers.simulators.handling import human_sensor_log

    games = hall_games(args.boards, args.game, args.half_moves)
    serials = chain_serials(args.boards, FIRST_SERIAL)
    directory = Path(tempfile.mkdtemp(prefix="dgt-bridge-hall-"))
    chain = BusChainEmulator(directory, serials=serials, seed=args.seed).start()
    try:
        settings = settings_for_hall(chain.port_path, games, serials)
    except ConfigError as exc:
        chain.stop()
        print(f"dgt-bridge demo: configuration error: {exc}", file=sys.stderr)
        return 2
    settings.broadcast = replace(settings.broadcast, port=port)
    daemon = Daemon(
        settings,
        speech=False,
        storage_dir=directory / "games",
        resume=False,
        time_scale=args.speed,
        outputs=(transcript := HallTranscript(games)).outputs(),
    )
    stop.daemon = daemon
    total = sum(len(g.moves) for g in games)
    print(f"dgt-bridge demo: a hall of {len(games)} boards on one DGT bus chain, "
          f"{total} half-moves in all, speed x{args.speed:g}", flush=True)  # fmt: skip
    for game in games:
        white, black = game.names
        print(f"  board {game.board}: {white} - {black}, {len(game.moves)} half-moves")
    code = 0
    try:
        await daemon.start()
        stop.install()
        if daemon.http_url:
            print(f"dgt-bridge demo: wall screen at {daemon.http_url}?wall=fit "
                  f"(the arbiter's console: {daemon.http_url}arbiter)", flush=True)  # fmt: skip
        play = asyncio.create_task(_play(args, games, daemon, chain, transcript, human_sensor_log))
        code = await play_then_serve(
            daemon,
            play,
            args.once,
            f"{daemon.http_url}?wall=fit",
            played=f"dgt-bridge demo: journals and PGNs in {directory / 'games'}",
        )
    finally:
        daemon.stop()
        await daemon.close()
        chain.stop()
    return code


async def _play(
    args: argparse.Namespace,
    games: list[HallGame],
    daemon: Any,
    chain: Any,
    transcript: HallTranscript,
    human_sensor_log: Any,
) -> int:
    from drivers.sensors import Request

    connected = await wait_until(
        transcript.changed, lambda: all(b.connected for b in daemon.boards.values()), 30
    )
    if not connected:
        missing = [b.id for b in daemon.boards.values() if not b.connected]
        print(f"dgt-bridge demo: the daemon did not find boards {', '.join(missing)} on the "
              "chain", file=sys.stderr)  # fmt: skip
        return 1
    longest = 0.0
    for index, game in enumerate(games):
        log = human_sensor_log(chess.Board(), game.moves, seed=args.seed + index, with_clock=True)
        longest = max(longest, log[-1].t - log[0].t)
        chain.play_on(index, log, speed=args.speed)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + longest / args.speed + 60
    while not chain.wait_played(0) and loop.time() < deadline:
        await asyncio.sleep(0.1)
    await wait_until(transcript.changed, lambda: all(g.done() for g in games), 15)
    for game in games:  # a game the board cannot end (a resignation): its result
        result = game.game.headers.get("Result", "*")
        whole = len(game.moves) == len(list(game.game.mainline_moves()))
        if game.ended is None and whole and result in ("1-0", "0-1", "1/2-1/2"):
            daemon.submit(Request(daemon.now(), "result", {"result": result}), board=game.board)
    wrong = [g for g in games if g.recognised() != [m.uci() for m in g.moves]]
    if wrong:
        for game in wrong:
            print(f"dgt-bridge demo: MISMATCH on board {game.board}: {len(game.heard)} "
                  f"recognised of {len(game.moves)}", file=sys.stderr)  # fmt: skip
        return 1
    total = sum(len(g.moves) for g in games)
    print(f"dgt-bridge demo: all {len(games)} games recognised, every one of the {total} "
          "half-moves.", flush=True)  # fmt: skip
    return 0
