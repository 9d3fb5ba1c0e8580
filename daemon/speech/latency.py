"""How long from a move event to the first sound: ``python -m daemon.speech.latency``.

Feeds a real game's moves to the announcer with the chosen engine and a player that
notes when it is asked to play (no sound card needed), one move at a time, and
prints the median and worst time from ``receive(event)`` to the player starting.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

import chess

from daemon.game.events import Colour, Move
from daemon.speech.announcer import Announcer
from daemon.speech.engines import EspeakEngine, Pyttsx3Engine
from daemon.speech.settings import SpeechSettings

GAME = ("e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Nb8 d4 Nbd7").split()  # noqa: SIM905


class TimingPlayer:
    def __init__(self) -> None:
        self.started: list[float] = []

    async def play(self, path: Path) -> None:
        self.started.append(time.perf_counter())


async def measure(engine_name: str, rounds: int) -> list[float]:
    settings = SpeechSettings(engine=engine_name)
    player = TimingPlayer()
    engine_class = Pyttsx3Engine if engine_name == "pyttsx3" else EspeakEngine
    engine = engine_class(settings, "de", player)
    await engine.start()
    announcer = Announcer(settings, engine)
    runner = asyncio.create_task(announcer.run())
    delays = []
    board = chess.Board()
    try:
        for ply, san in enumerate((GAME * ((rounds // len(GAME)) + 1))[:rounds], 1):
            if board.ply() == len(GAME):
                board = chess.Board()
            move = board.parse_san(san)
            by: Colour = "white" if board.turn else "black"
            board.push(move)
            event = Move(t=ply, ply=ply, uci=move.uci(), san=san, fen=board.fen(), by=by, speech="")
            before = len(player.started)
            sent = time.perf_counter()
            announcer.receive(event)
            while len(player.started) == before:
                await asyncio.sleep(0.001)
            delays.append(player.started[-1] - sent)
            await announcer.drain()
    finally:
        await announcer.close()
        runner.cancel()
    return delays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engine", choices=("pyttsx3", "espeak-ng"), default="pyttsx3")
    parser.add_argument("-n", "--rounds", type=int, default=20)
    args = parser.parse_args()
    delays = asyncio.run(measure(args.engine, args.rounds))
    print(
        f"{args.engine}: {len(delays)} moves, event to player start:"
        f" median {statistics.median(delays) * 1000:.0f} ms, worst {max(delays) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
