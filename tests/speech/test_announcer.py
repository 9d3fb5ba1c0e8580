"""The announcer on the event feed, with an engine that plays until told to stop."""

from __future__ import annotations

import asyncio

import chess
import pytest

from daemon.events import Irregularity, Move
from daemon.speech.announcer import Announcer
from daemon.speech.settings import SpeechSettings

WAIT = 10.0  # generous: only hit when something is broken


class HeldEngine:
    """Each announcement 'plays' until ``release()``; records what was heard or cut."""

    name = "held"

    def __init__(self) -> None:
        self.started: list[str] = []
        self.heard: list[str] = []
        self.cut: list[str] = []
        self.spoken_forms: list[str] = []
        self._release = asyncio.Event()
        self.playing = asyncio.Event()

    async def start(self) -> None:
        return None

    async def speak(self, written: str, spoken: str) -> None:
        self.started.append(written)
        self.spoken_forms.append(spoken)
        self.playing.set()
        try:
            await self._release.wait()
        except asyncio.CancelledError:
            self.cut.append(written)
            raise
        finally:
            self.playing.clear()
        self._release.clear()
        self.heard.append(written)

    def release(self) -> None:
        self._release.set()

    async def close(self) -> None:
        return None


class Game:
    """Builds the rules core's event dicts for a line of SAN moves."""

    def __init__(self) -> None:
        self.board = chess.Board()
        self.t = 0.0

    def start(self) -> dict:
        return {"t": 0.0, "type": "game_start", "fen": self.board.fen()}

    def move(self, san: str, *, correction: bool = False) -> dict:
        if correction:
            self.board.pop()
        move = self.board.parse_san(san)
        by = "white" if self.board.turn == chess.WHITE else "black"
        self.board.push(move)
        self.t += 1.0
        return Move(
            t=self.t, ply=self.board.ply(), uci=move.uci(), san=san, fen=self.board.fen(),
            by=by, speech="(rules core text)", correction=correction,
        ).to_dict()  # fmt: skip


async def started(engine: HeldEngine, count: int) -> None:
    async def wait() -> None:
        while len(engine.started) < count:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(wait(), WAIT)


@pytest.fixture
async def running():
    made: list[tuple[Announcer, asyncio.Task]] = []

    def make(**settings) -> tuple[Announcer, HeldEngine]:
        engine = HeldEngine()
        announcer = Announcer(SpeechSettings(engine="text", **settings), engine)
        made.append((announcer, asyncio.create_task(announcer.run())))
        return announcer, engine

    yield make
    for announcer, task in made:
        await announcer.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_new_move_cuts_the_stale_one(running) -> None:
    announcer, engine = running()
    game = Game()
    announcer.handle(game.start())
    await started(engine, 1)
    engine.release()  # "Neue Partie" heard
    announcer.handle(game.move("e4"))
    await started(engine, 2)
    announcer.handle(game.move("c5"))  # arrives while "Bauer Eva vier" plays
    await started(engine, 3)
    assert engine.cut == ["Bauer Eva vier"]
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.heard == ["Neue Partie", "Bauer Cesar fuenf"]
    assert engine.spoken_forms[-1] == "Bauer Zäsar fünf"  # the voice gets the lexicon


async def test_an_irregularity_survives_later_moves_and_a_request_goes_first(running) -> None:
    announcer, engine = running()
    game = Game()
    announcer.handle(game.move("e4"))
    await started(engine, 1)
    announcer.handle(
        Irregularity(
            t=1.5, kind="illegal_move", article="7.4", by="black", squares=["g8", "e5"],
            restore=[{"square": "g8", "piece": "n"}, {"square": "e5", "piece": None}],
        ).to_dict()
    )  # fmt: skip
    announcer.handle(game.move("e5"))  # cuts "Bauer Eva vier", never the irregularity
    announcer.handle({"t": 3.0, "type": "info_request", "what": "move_number", "by": "white"})
    for _ in range(3):
        await started(engine, len(engine.started) + 1)
        engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.cut == ["Bauer Eva vier"]
    assert engine.heard == [
        "Zug 2, Weiß am Zug",
        "Unmöglicher Zug. Springer zurück auf Gustav acht",
        "Bauer Eva fuenf",
    ]


async def test_a_correction_is_announced_as_such(running) -> None:
    announcer, engine = running()
    game = Game()
    announcer.handle(game.move("Nf3"))
    await started(engine, 1)
    announcer.handle(game.move("Nh3", correction=True))
    await started(engine, 2)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.cut == ["Springer Felix drei"]
    assert engine.heard == ["Korrektur: Springer Hector drei"]


async def test_only_the_chosen_sides_and_event_types_are_spoken(running) -> None:
    announcer, engine = running(sides=("black",), announce=("move", "irregularity"))
    game = Game()
    announcer.handle(game.start())  # not in announce
    announcer.handle(game.move("d4"))  # white: not spoken
    announcer.handle(game.move("Nf6"))
    await started(engine, 1)
    engine.release()
    announcer.handle({"t": 9.0, "type": "info_request", "what": "last"})  # not in announce
    announcer.handle({"t": 9.5, "type": "position_restored", "fen": game.board.fen()})
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.heard == ["Springer Felix sechs"]
    # The record still followed every event: a later answer knows White's move.
    assert announcer.record.ply == 2


async def test_handle_never_raises_into_the_rules_core(running) -> None:
    announcer, engine = running()
    announcer.handle({"type": "move", "ply": "not a number", "by": "white"})
    announcer.handle({"type": "irregularity", "kind": "illegal_move", "restore": [{"x": 1}]})
    announcer.handle({})
    announcer.handle(["not", "a", "dict"])  # type: ignore[arg-type]
    announcer.handle({"type": "flag", "side": "white"})
    await started(engine, 1)
    assert engine.started == ["Unmöglicher Zug."]  # still said, without a fix to give
    engine.release()
    await started(engine, 2)
    assert engine.started[-1] == "Zeit abgelaufen: Weiß"


async def test_ask_returns_the_answer_and_speaks_it(running) -> None:
    announcer, engine = running()
    game = Game()
    announcer.handle(game.move("e4"))
    await started(engine, 1)
    engine.release()
    assert announcer.ask("square", {"square": "e4"}) == "Eva vier: Bauer Weiß"
    await started(engine, 2)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.heard == ["Bauer Eva vier", "Eva vier: Bauer Weiß"]


async def test_make_announcer_with_the_text_engine_prints_where_told() -> None:
    import io

    from daemon.speech.announcer import make_announcer

    printed = io.StringIO()
    announcer = await make_announcer(SpeechSettings(engine="text"), text_stream=printed)
    runner = asyncio.create_task(announcer.run())
    try:
        announcer.handle(Game().move("Nf3"))
        await asyncio.wait_for(announcer.drain(), WAIT)
        assert printed.getvalue() == "Springer Felix drei\n"
    finally:
        await announcer.close()
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)


async def test_a_clock_button_gives_the_blind_players_time_first(running) -> None:
    announcer, engine = running(own_side="black")
    announcer.handle({"t": 1.0, "type": "clock", "white": 600.0, "black": 125.0, "running": None})
    announcer.handle({"t": 2.0, "type": "info_request", "what": "clock", "args": {}, "by": None})
    await started(engine, 1)
    assert engine.started == ["Schwarz 2 Minuten 5 Sekunden. Weiß 10 Minuten 0 Sekunden"]
    engine.release()
