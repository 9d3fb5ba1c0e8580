"""The announcer on the event feed, with an engine that plays until told to stop."""

from __future__ import annotations

import asyncio

import chess
import pytest

from daemon.game.events import Irregularity, Move
from daemon.speech.announcer import Announcer
from daemon.speech.engines import Delivery
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

    async def speak(self, written: str, spoken: str, budget: float | None = None) -> Delivery:
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
        return Delivery(self.name)

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

    def make(clock=None, on_outcome=None, **settings) -> tuple[Announcer, HeldEngine]:
        engine = HeldEngine()
        extra = {"clock": clock} if clock else {}
        announcer = Announcer(
            SpeechSettings(engine="text", **settings), engine, on_outcome=on_outcome, **extra
        )
        made.append((announcer, asyncio.create_task(announcer.run())))
        return announcer, engine

    yield make
    for announcer, task in made:
        await announcer.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_move_is_never_cut_and_waiting_moves_are_said_together(running) -> None:
    announcer, engine = running()
    game = Game()
    announcer.receive(game.start())
    await started(engine, 1)
    engine.release()  # "Neue Partie" heard
    announcer.receive(game.move("e4"))
    await started(engine, 2)
    announcer.receive(game.move("c5"))  # both arrive while "Bauer Eva vier" plays
    announcer.receive(game.move("Nf3"))
    await asyncio.sleep(0.05)
    assert engine.cut == [] and len(engine.started) == 2
    engine.release()
    await started(engine, 3)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.heard == [
        "Neue Partie",
        "Bauer Eva vier",
        "Bauer Cesar fuenf, Springer Felix drei",  # one phrase: no gap, no backlog
    ]
    assert engine.spoken_forms[-1] == "Bauer Zäsar fünf, Springer Felix drei"  # the lexicon


async def test_a_move_reaches_the_engine_before_the_work_its_event_leaves_to_the_loop(
    running,
) -> None:
    # The pipeline leaves the journal's fsync and PGN rewrite to the loop's next turn
    # (JournalSync: call_soon after the outputs): on a Pi's budget that is tens of ms
    # the first sound would wait for, if the engine heard of the move after it.
    announcer, engine = running()
    game = Game()
    announcer.receive(game.start())
    await started(engine, 1)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    order: list[str] = []
    speak = engine.speak

    async def noted(written: str, spoken: str, budget: float | None = None) -> Delivery:
        order.append("engine")
        return await speak(written, spoken, budget)

    engine.speak = noted  # type: ignore[method-assign]  # the order, not the sound
    announcer.receive(game.move("e4"))
    announcer.receive(game.move("c5"))  # the same turn: still one phrase
    asyncio.get_running_loop().call_soon(order.append, "journal sync")
    await started(engine, 2)
    await asyncio.sleep(0.05)
    assert order == ["engine", "journal sync"]
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.heard[-1] == "Bauer Eva vier, Bauer Cesar fuenf"


def black_knight_moved_illegally() -> dict:
    """Black's Ng8-e5 (7.4), after 1. e4: the knight must go back to g8."""
    return Irregularity(
        t=1.5, kind="illegal_move", article="7.4", by="black", squares=["g8", "e5"],
        restore=[{"square": "g8", "piece": "n"}, {"square": "e5", "piece": None}],
    ).to_dict()  # fmt: skip


async def test_moves_and_irregularities_keep_their_order_and_a_request_waits(running) -> None:
    announcer, engine = running()
    game = Game()
    announcer.receive(game.move("e4"))
    await started(engine, 1)
    announcer.receive(black_knight_moved_illegally())
    announcer.receive({"t": 3.0, "type": "info_request", "what": "move_number", "by": "white"})
    announcer.receive(game.move("e5"))
    for count in (2, 3, 4):
        engine.release()
        await started(engine, count)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.cut == []
    # The opponent's irregularity gives way to his next move at its first sentence;
    # after the move, its fix is not said: the move shows the board was put right.
    assert engine.heard[:3] == ["Bauer Eva vier", "Schwarz: Unmöglicher Zug", "Bauer Eva fuenf"]
    assert engine.heard[3] == "Zug 2, Weiß am Zug"  # composed when said: after e5


async def test_the_players_own_irregularity_is_said_whole_before_a_later_move(running) -> None:
    """What he must put right on his own board is never broken up; the same message
    about the opponent gives way to a move at its first sentence (test above)."""
    announcer, engine = running(own_side="black")
    game = Game()
    announcer.receive(game.move("e4"))
    await started(engine, 1)
    announcer.receive(black_knight_moved_illegally())
    announcer.receive(game.move("e5"))
    for count in (2, 3):
        engine.release()
        await started(engine, count)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.heard == [
        "Bauer Eva vier",
        "Schwarz: Unmöglicher Zug. Springer zurück auf Gustav acht",
        "Bauer Eva fuenf",
    ]


async def test_a_correction_is_said_as_one_only_after_the_move_was_heard(running) -> None:
    announcer, engine = running()
    game = Game()
    announcer.receive(game.move("Nf3"))
    await started(engine, 1)
    announcer.receive(game.move("Nh3", correction=True))  # while Nf3 plays: not cut
    engine.release()
    await started(engine, 2)
    announcer.receive(game.move("e5"))
    announcer.receive(game.move("Nf6", correction=True))  # e5 not said yet: replaced
    engine.release()
    await started(engine, 3)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.cut == []
    assert engine.heard == [
        "Springer Felix drei",
        "Korrektur: Springer Hector drei",
        "Springer Felix sechs",
    ]


async def test_only_the_chosen_sides_and_event_types_are_spoken(running) -> None:
    announcer, engine = running(sides=("black",), announce=("move", "irregularity"))
    game = Game()
    announcer.receive(game.start())  # not in announce
    announcer.receive(game.move("d4"))  # white: not spoken
    announcer.receive(game.move("Nf6"))
    await started(engine, 1)
    engine.release()
    announcer.receive({"t": 9.0, "type": "info_request", "what": "last"})  # not in announce
    announcer.receive({"t": 9.5, "type": "position_restored", "fen": game.board.fen()})
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.heard == ["Springer Felix sechs"]
    # The record still followed every event: a later answer knows White's move.
    assert announcer.record.ply == 2


async def test_receive_never_raises_into_the_rules_core(running) -> None:
    announcer, engine = running()
    announcer.receive({"type": "move", "ply": "not a number", "by": "white"})
    announcer.receive({"type": "irregularity", "kind": "illegal_move", "restore": [{"x": 1}]})
    announcer.receive({})
    announcer.receive(["not", "a", "dict"])  # type: ignore[arg-type]
    announcer.receive({"type": "flag", "side": "white"})
    await started(engine, 1)
    assert engine.started == ["Unmöglicher Zug."]  # still said, without a fix to give
    engine.release()
    await started(engine, 2)
    assert engine.started[-1] == "Zeit abgelaufen: Weiß"


async def test_ask_returns_the_answer_and_speaks_it(running) -> None:
    announcer, engine = running()
    game = Game()
    announcer.receive(game.move("e4"))
    await started(engine, 1)
    engine.release()
    assert announcer.ask("square", {"square": "e4"}) == "Eva vier: Bauer Weiß"
    await started(engine, 2)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.heard == ["Bauer Eva vier", "Eva vier: Bauer Weiß"]


async def test_the_composed_announcer_with_the_text_engine_prints_where_told() -> None:
    import io

    from daemon.compose import build_announcer
    from daemon.config import Settings
    from daemon.speech.vocabulary import load_vocabulary

    printed = io.StringIO()
    settings = Settings(speech=SpeechSettings(engine="text"))
    announcer = build_announcer(settings, load_vocabulary(), text_stream=printed)
    assert announcer is not None
    await announcer.start()
    runner = asyncio.create_task(announcer.run())
    try:
        announcer.receive(Game().move("Nf3"))
        await asyncio.wait_for(announcer.drain(), WAIT)
        assert printed.getvalue() == "Springer Felix drei\n"
    finally:
        await announcer.close()
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)


async def test_a_clock_button_gives_the_blind_players_time_first(running) -> None:
    announcer, engine = running(own_side="black", time_left=True)
    announcer.receive({"t": 1.0, "type": "clock", "white": 600.0, "black": 125.0, "running": None})
    announcer.receive({"t": 2.0, "type": "info_request", "what": "clock", "args": {}, "by": None})
    for count in range(1, 6):  # moves completed, time used by each, time left by each
        await started(engine, count)
        engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    assert engine.heard[1].startswith("Schwarz verbraucht")
    assert engine.heard[-2:] == ["Schwarz 2 Minuten 5 Sekunden", "Weiß 10 Minuten 0 Sekunden"]


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_clock_answer_gives_the_times_of_when_it_is_said(running) -> None:
    clock = FakeClock()
    announcer, engine = running(clock=clock, time_left=True)
    game = Game()
    announcer.receive(
        {"t": 1.0, "type": "clock", "white": 300.0, "black": 300.0, "running": "white"}
    )
    announcer.receive(game.move("e4"))
    await started(engine, 1)  # the move plays...
    announcer.receive({"t": 2.0, "type": "info_request", "what": "clock", "by": "white"})
    clock.now += 12.0  # ...for a long while (White's clock ran on, no report since)
    for count in range(2, 6):  # moves completed, the time used by each
        engine.release()
        await started(engine, count)
    assert engine.started[-1] == "Weiß 4 Minuten 48 Sekunden"


async def test_a_board_reading_gives_way_to_a_move_then_goes_on(running) -> None:
    announcer, engine = running()
    game = Game()
    announcer.receive({"t": 1.0, "type": "info_request", "what": "board", "by": "white"})
    await started(engine, 1)
    assert engine.started[0] == "Weiß: Koenig Eva eins"  # a short phrase, not 40 s
    announcer.receive(game.move("e4"))
    engine.release()
    await started(engine, 2)
    assert engine.started[1] == "Bauer Eva vier"  # at the first phrase boundary
    engine.release()
    await started(engine, 3)
    assert engine.started[2] == "Weiß: Dame David eins"  # names its colour again
    engine.release()
    await started(engine, 4)
    assert engine.started[3] == "Tuerme Anna eins, Hector eins"


async def test_an_answer_interrupted_too_often_is_dropped_and_the_player_told(running) -> None:
    announcer, engine = running(max_interruptions=1)
    game = Game()
    announcer.receive({"t": 1.0, "type": "info_request", "what": "clock", "by": "white"})
    for san in ("e4", "e5"):
        await started(engine, len(engine.started) + 1)
        announcer.receive(game.move(san))
        engine.release()
        await started(engine, len(engine.started) + 1)
        engine.release()  # the move
    await started(engine, 5)
    engine.release()
    await asyncio.wait_for(announcer.drain(), WAIT)
    # (A board reading is never given up: tests/speech/test_board_reading_blitz.py.)
    assert engine.heard[0] == "Züge gespielt: 0"
    assert engine.heard[1] == "Bauer Eva vier"
    assert engine.heard[2].startswith("Weiter, Uhrzeit: Weiß verbraucht")
    assert engine.heard[3:] == ["Bauer Eva fuenf", "Uhrzeit abgebrochen"]


async def say_all(announcer: Announcer, engine: HeldEngine) -> None:
    """Let every phrase play to its end until nothing is left."""

    async def loop() -> None:
        while not (announcer.schedule.idle and announcer._current is None):
            if engine.playing.is_set():
                engine.release()
            await asyncio.sleep(0.005)

    await asyncio.wait_for(loop(), WAIT)


async def test_a_second_press_of_last_move_says_the_last_few_moves(running) -> None:
    clock = FakeClock()
    outcomes: list[dict] = []
    announcer, engine = running(clock=clock, repeat_moves=3, on_outcome=outcomes.append)
    game = Game()
    for san in ("e4", "c5", "Nf3", "d6"):
        announcer.receive(game.move(san))
    await say_all(announcer, engine)
    announcer.receive({"t": 9.0, "type": "info_request", "what": "last"})
    await started(engine, 3)
    clock.now += 1.0
    announcer.receive({"t": 9.5, "type": "info_request", "what": "last"})  # pressed again
    await say_all(announcer, engine)
    assert engine.heard == [
        "Bauer Eva vier, Bauer Cesar fuenf, Springer Felix drei",  # three at most
        "Bauer David sechs",
        "Letzter Zug: Bauer David sechs",
        "Letzte Züge",
        "1. Schwarz: Bauer Cesar fuenf",
        "2. Weiß: Springer Felix drei",
        "2. Schwarz: Bauer David sechs",
    ]
    assert outcomes[0] == {
        "type": "speech", "outcome": "heard", "kind": "move",
        "text": "Bauer Eva vier, Bauer Cesar fuenf, Springer Felix drei", "plies": [1, 2, 3],
    }  # fmt: skip
    clock.now += 60.0
    announcer.receive({"t": 70.0, "type": "info_request", "what": "last"})  # a new first press
    await say_all(announcer, engine)
    assert engine.heard[-1] == "Letzter Zug: Bauer David sechs"


async def test_a_board_reading_in_blitz_gives_way_to_a_move_at_once(running, caplog) -> None:
    """Moves 1.2 s apart, both sides said: the reading's next square does not fit
    what is left of the gap, so it is said beyond it, and the move made meanwhile
    cuts it at once (the player hears the move now, not after the square), and the
    square is said again, with its colour, after the move."""
    now = [0.0]
    outcomes: list[dict] = []
    announcer, engine = running(clock=lambda: now[0], on_outcome=outcomes.append)
    game = Game()
    announcer.receive(game.start())
    await started(engine, 1)
    engine.release()
    for n, san in enumerate(["e4", "e5", "Nf3", "Nc6"]):
        now[0] = 1.2 * (n + 1)
        announcer.receive(game.move(san))
        await started(engine, n + 2)
        engine.release()
    announcer.ask("board", {}, by="white")
    await started(engine, 6)
    assert engine.started[-1] == "Weiß: Koenig Eva eins"
    now[0] = 5.9  # past the gap: the queen is said beyond it
    engine.release()
    await started(engine, 7)
    assert engine.started[-1] == "Dame David eins"
    now[0] = 6.0
    announcer.receive(game.move("Bb5"))
    await started(engine, 8)
    assert engine.cut == ["Dame David eins"]  # given way at once
    assert engine.started[-1] == "Laeufer Bella fuenf"
    engine.release()
    await started(engine, 9)
    assert engine.started[-1] == "Weiß: Dame David eins"
    assert {"type": "speech", "outcome": "cut", "kind": "answer", "text": "Dame David eins",
            "reason": "gave way: said again"} in outcomes  # fmt: skip
    assert not [r for r in caplog.records if r.levelname == "WARNING"]  # expected, no fault
