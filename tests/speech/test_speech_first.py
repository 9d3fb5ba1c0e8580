"""A move's phrase first (issue 28, the one-core Zero model): the page and MQTT of a
move wait until its phrase's first sample has gone to the player, a quarter of a
second at most, and get every event, in order (``daemon.speech.speechfirst``).

The gate itself on simulated time; then the announcer, the real stream player (the
benchmarks' stand-in for aplay) and the page's view of the record as the board's
pipeline calls them, with a synthesis that takes loop turns as the synthesis
thread's does, on a loop where the page's work would run in those turns."""

from __future__ import annotations

import array
import asyncio
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from daemon.boards.pageview import PageView
from daemon.game.events import from_dict
from daemon.game.record import GameRecord
from daemon.speech import synthesis
from daemon.speech.announcer import Announcer
from daemon.speech.engines import Delivery, pyttsx3_available
from daemon.speech.settings import SpeechSettings
from daemon.speech.speechfirst import SpeechFirst
from daemon.speech.stream import StreamPlayer
from tests.daemon.feed import feed_of_game

WAIT = 10.0  # generous: only hit when something is broken
RECORDER = Path(__file__).resolve().parents[2] / "benchmarks" / "record_stream_player.py"
OPENING = ["e2e4", "c7c5", "g1f3", "d7d6"]


class Timer:
    def __init__(self, at: float, callback: Callable[[], None]) -> None:
        self.at = at
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class SimulatedTime:
    """``call_later`` on a clock the test moves (``advance``)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[Timer] = []

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        timer = Timer(self.now + delay, callback)
        self.timers.append(timer)
        return timer

    def advance(self, seconds: float) -> None:
        end = self.now + seconds
        while due := sorted(
            (t for t in self.timers if not t.cancelled and t.at <= end), key=lambda t: t.at
        ):
            timer = due[0]
            self.timers.remove(timer)
            self.now = timer.at
            timer.callback()
        self.now = end


# -- the gate, on simulated time ---------------------------------------------------------


def test_the_page_waits_while_a_phrase_holds_and_then_gets_everything_in_order() -> None:
    time = SimulatedTime()
    gate = SpeechFirst(cap=0.25, call_later=time.call_later)
    shown: list[str] = []
    gate.later(lambda: shown.append("clock before the move"))  # nothing held: at once
    hold = gate.hold()
    for what in ("move 1", "clock", "move 1 in MQTT"):
        gate.later(lambda what=what: shown.append(what))
    time.advance(0.1)
    assert shown == ["clock before the move"], "held: the phrase's first sound comes first"
    hold.release()
    time.advance(0.0)  # the loop's next turn: the phrase's next samples go first
    assert shown == ["clock before the move", "move 1", "clock", "move 1 in MQTT"]
    gate.later(lambda: shown.append("next"))
    assert shown[-1] == "next", "released: at once again"
    assert gate.deferred == 3 and gate.expired == 0


def test_a_hold_whose_first_sound_never_comes_lasts_a_quarter_second_at_most() -> None:
    time = SimulatedTime()
    gate = SpeechFirst(cap=0.25, call_later=time.call_later)
    shown: list[float] = []
    gate.hold()  # never released: a synthesis that hangs
    gate.later(lambda: shown.append(time.now))
    time.advance(0.2)
    assert shown == []
    time.advance(0.1)
    assert shown == [pytest.approx(0.25)]
    assert not gate.held and gate.expired == 1
    gate.later(lambda: shown.append(time.now))
    assert shown[-1] == pytest.approx(0.3), "the expired hold no longer holds anything"


def test_the_page_is_never_starved_by_holds_that_follow_one_another() -> None:
    # A hall's speaking boards: a new move's hold before the last one's is released.
    time = SimulatedTime()
    gate = SpeechFirst(cap=0.25, call_later=time.call_later)
    shown: list[tuple[str, float]] = []
    holds = [gate.hold()]
    gate.later(lambda: shown.append(("first", time.now)))
    for n in range(5):
        time.advance(0.1)
        holds.append(gate.hold())
        holds.pop(0).release()
        gate.later(lambda n=n: shown.append((f"then {n}", time.now)))
    time.advance(1.0)
    assert [what for what, _ in shown] == ["first"] + [f"then {n}" for n in range(5)]
    queued_at = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    waits = [at - start for (_, at), start in zip(shown, queued_at, strict=True)]
    assert max(waits) <= 0.25 + 1e-9, "no work waits longer than the cap, holds or not"


def test_one_failing_output_does_not_cost_the_others_their_events(caplog) -> None:
    time = SimulatedTime()
    gate = SpeechFirst(cap=0.25, call_later=time.call_later)
    shown: list[str] = []
    hold = gate.hold()

    def broken() -> None:
        raise RuntimeError("an output's bug")

    gate.later(broken)
    gate.later(lambda: shown.append("after it"))
    hold.release()
    time.advance(0.0)
    assert shown == ["after it"]
    assert "deferred output work failed" in caplog.text


async def test_what_waited_goes_out_one_event_a_loop_turn_beside_the_phrase() -> None:
    # A hall's page events let out at once would hold the loop, and the phrase's next
    # samples (100 ms of sound each) with them, for as long as they all take.
    gate = SpeechFirst(cap=WAIT)
    order: list[str] = []
    hold = gate.hold()
    for board in range(1, 4):
        gate.later(lambda board=board: order.append(f"page board {board}"))
    hold.release()  # the first sample is out; espeak-ng's next chunk is on its way
    loop = asyncio.get_running_loop()
    loop.call_soon(order.append, "next samples")
    for _ in range(5):
        await asyncio.sleep(0)
    assert order == ["page board 1", "next samples", "page board 2", "page board 3"]


def test_without_an_event_loop_nothing_is_held() -> None:
    # A replay on simulated time has no loop to end a hold: its page gets all at once.
    gate = SpeechFirst()
    gate.hold()
    shown: list[int] = []
    gate.later(lambda: shown.append(1))
    assert shown == [1] and not gate.held


# -- the announcer, the player and the page, as the board's pipeline calls them -----------


class ThreadLikeSynthesis:
    """An engine whose samples come ``turns`` loop turns after the text (as the
    synthesis thread's first chunk does), into the output's real running player
    (``StreamPlayer``, the benchmarks' recording stand-in for aplay). ``log`` gets
    "sound <text>" as its first loud samples go into the player's pipe."""

    name = "thread-like"

    def __init__(self, log: list[str], player: StreamPlayer, turns: int = 20) -> None:
        self.log = log
        self.player = player
        self.turns = turns

    async def start(self) -> None:
        await self.player.open(8000)

    async def speak(self, written: str, spoken: str, budget: float | None = None) -> Delivery:
        async with self.player.phrase(8000) as phrase:
            for _ in range(self.turns):  # the synthesis thread at work, the loop free
                await asyncio.sleep(0)
            # logged first: the write puts the samples into the player's pipe before
            # anything else runs (no await before it), then lets what waited go
            self.log.append(f"sound {written}")
            await phrase.write(array.array("h", [8000] * 400))
        return Delivery(self.name, phrase.seconds)

    async def close(self) -> None:
        await self.player.close()


class NextTurnCard:
    """A card whose fsync is done by the loop's next turn (the disk writer's reply)."""

    def when_durable(self, callback: Callable[[], None]) -> None:
        asyncio.get_running_loop().call_soon(callback)


class Board:
    """The board's pipeline as far as the test needs it: the record folds each
    event, then the speech and the page receive it, in the daemon's order."""

    def __init__(self, tmp_path: Path, gate: SpeechFirst | None, log: list[str]) -> None:
        self.record = GameRecord()
        self.log = log
        self.page = PageView(
            self.record,
            self.show,
            NextTurnCard().when_durable,
            later=gate.later if gate is not None else None,
        )
        recorder = (sys.executable, str(RECORDER), str(tmp_path / "heard.log"), "{rate}", "1")
        settings = SpeechSettings(engine="text", stream_player=recorder)
        self.engine = ThreadLikeSynthesis(log, StreamPlayer(settings))
        self.announcer = Announcer(settings, self.engine, record=self.record, speech_first=gate)

    def show(self, data: dict[str, Any]) -> None:
        current = self.page.current()
        self.log.append(f"page {data['type']} {data.get('ply', '')}".strip())
        # what the page reads with the event is the game as of that event
        assert len(current.moves) == int(data.get("ply", 0))

    def publish(self, data: dict[str, Any]) -> None:
        self.page.before_fold()
        self.record.apply(data)
        event = from_dict(data)
        self.announcer.receive(event)
        self.page.receive(event)


@pytest.fixture
async def board(tmp_path: Path):
    made: list[tuple[Board, asyncio.Task]] = []

    async def make(gate: SpeechFirst | None, log: list[str]) -> Board:
        made_board = Board(tmp_path, gate, log)
        await asyncio.wait_for(made_board.announcer.start(), WAIT)
        made.append((made_board, asyncio.create_task(made_board.announcer.run())))
        await asyncio.sleep(0)  # run() is speaking
        return made_board

    yield make
    for made_board, task in made:
        await made_board.announcer.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _play(board: Board, feed: list[dict[str, Any]]) -> None:
    """Each event in turn; the next once everything the last one started is over."""
    for data in feed:
        board.publish(data)
        await asyncio.wait_for(board.announcer.drain(), WAIT)
        for _ in range(5):
            await asyncio.sleep(0)  # the card's reply and what it lets through


async def test_each_moves_phrase_sounds_before_the_page_shows_that_move(board) -> None:
    log: list[str] = []
    made = await board(SpeechFirst(cap=WAIT), log)  # no cap in the way: the order alone
    await _play(made, feed_of_game(OPENING))
    said = ["Bauer Eva vier", "Bauer Cesar fuenf", "Springer Felix drei", "Bauer David sechs"]
    for ply, text in enumerate(said, 1):
        assert log.index(f"sound {text}") < log.index(f"page move {ply}"), log
    pages = [line for line in log if line.startswith("page")]
    assert pages == ["page game_start"] + [f"page move {n}" for n in range(1, 5)], (
        "the page still gets every event, once, in order"
    )


async def test_without_the_gate_the_page_took_its_turn_before_the_first_sound(board) -> None:
    # What the gate is for: the card answers within a loop turn, the synthesis takes
    # several, so the page's fan-out and MQTT ran while the phrase was being made; on
    # a Pi's one slow core that CPU came before the first sample.
    log: list[str] = []
    made = await board(None, log)
    await _play(made, feed_of_game(OPENING[:1]))
    assert log.index("page move 1") < log.index("sound Bauer Eva vier"), log


async def test_a_move_behind_a_phrase_still_sounding_does_not_hold_the_page(board) -> None:
    # It waits for that phrase by design; holding the page meanwhile would gain nothing.
    log: list[str] = []
    gate = SpeechFirst(cap=WAIT)
    made = await board(gate, log)
    made.engine.turns = 2000  # a long synthesis: the first move's phrase is not over
    feed = feed_of_game(OPENING[:2])
    made.publish(feed[0])
    await asyncio.wait_for(made.announcer.drain(), WAIT)
    made.publish(feed[1])  # e4: said at once, holds the page
    await asyncio.sleep(0)
    made.publish(feed[2])  # c5 while e4 is still being made
    assert gate.held and len(made.announcer._holds) == 1, "only the move said at once holds"
    await asyncio.wait_for(made.announcer.drain(), WAIT)
    for _ in range(5):
        await asyncio.sleep(0)
    assert [line for line in log if line.startswith("page move")] == ["page move 1", "page move 2"]
    assert not gate.held


async def test_the_arbiters_silence_lets_the_page_go_at_once(board) -> None:
    log: list[str] = []
    gate = SpeechFirst(cap=WAIT)
    made = await board(gate, log)
    made.engine.turns = 10_000
    feed = feed_of_game(OPENING[:1])
    made.publish(feed[0])
    await asyncio.wait_for(made.announcer.drain(), WAIT)
    made.publish(feed[1])
    for _ in range(5):
        await asyncio.sleep(0)
    assert "page move 1" not in log and gate.held
    made.announcer.silence()
    await asyncio.sleep(0)
    assert not gate.held and log[-1] == "page move 1"


# -- espeak-ng's own thread, on one core ---------------------------------------------------


@pytest.mark.skipif(not pyttsx3_available(), reason="pyttsx3/espeak-ng missing")
async def test_espeak_makes_no_more_of_a_phrase_until_the_loop_has_its_first_samples() -> None:
    # On the one-core Zero model espeak-ng's thread made the whole phrase (and the loop
    # woke for every 100 ms chunk) before the first sample reached the player: CPU
    # that the first sound waited for. Here the loop is starved for 0.2 s with the
    # first chunk in hand; espeak-ng made nothing more meanwhile, and the phrase still
    # comes whole afterwards.
    thread = synthesis.shared()
    made_while_starved: list[int] = []
    chunks: list[int] = []

    async def on_pcm(pcm: bytes) -> None:
        if not chunks:
            time.sleep(0.2)  # the loop busy elsewhere (a starved one: no await)
            made_while_starved.append(thread.synthesizer.tap.frames)
        chunks.append(len(pcm) // 2)

    text = "Läufer schlägt Zäsar sechs Schach"
    frames = await asyncio.wait_for(
        synthesis.run(thread, WAIT, voice="de", volume=1.0, rate=150, text=text, on_pcm=on_pcm),
        WAIT,
    )
    assert made_while_starved == [chunks[0]], "only the first chunk was made meanwhile"
    assert len(chunks) > 5 and sum(chunks) == frames, "and then the whole phrase"


async def test_the_clocks_display_shows_a_move_after_its_first_sound_and_in_order() -> None:
    # The move's text on the DGT clock is for the sighted: it waits with the page.
    import chess

    from daemon.clock.display import ClockDisplay
    from daemon.clock.sides import SideMapper
    from daemon.game.events import GameStart, Move
    from drivers.clock.dgt3000 import ClockWriter
    from drivers.dgt.protocol import Clock, CommandParser
    from drivers.timecontrol import parse_time_control

    def decoded(frame: bytes):
        [command] = CommandParser().feed(frame)
        return command

    gate = SpeechFirst(cap=WAIT)
    writer = ClockWriter(
        "dgt3000", time_control=parse_time_control("5+3"), set_and_run_at_start=True,
        hold_seconds=0.01,
    )  # fmt: skip
    display = ClockDisplay(
        writer, None, lambda: None, sides=SideMapper("left_white"), later=gate.later
    )
    display.receive(GameStart(1.0, chess.STARTING_FEN))
    hold = gate.hold()  # the move's phrase on its way
    display.receive(Move(2.0, 1, "e2e4", "e4", "fen", "white", "Bauer e4"))
    await asyncio.sleep(0.05)  # longer than the text is shown: its END must not come first
    frames = []
    while not display._frames.empty():
        frames.append(decoded(display._frames.get_nowait()))
    assert [f.clock for f in frames] == [Clock.SETNRUN], "the move's text waits"
    hold.release()
    await asyncio.sleep(0.05)
    while not display._frames.empty():
        frames.append(decoded(display._frames.get_nowait()))
    assert [f.clock for f in frames] == [Clock.SETNRUN, Clock.ASCII, Clock.END]


async def test_the_journal_is_fsynced_at_once_and_its_pgn_rebuilt_after_the_first_sound(
    tmp_path: Path, monkeypatch
) -> None:
    # Disk first: the move's journal line is on the card before anything else; the
    # PGN beside it (for live PGN readers) is a rebuild of the whole game that can wait.
    import os

    from daemon.boards.pipeline import JournalSync
    from daemon.storage.journal import Journal
    from tests.daemon.test_journal import pgn_moves

    fsynced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsynced.append(fd), real_fsync(fd)))
    gate = SpeechFirst(cap=WAIT)
    journal = Journal(tmp_path, fsync=True)
    sync = JournalSync(journal, lambda event: None, gate)
    feed = feed_of_game(OPENING[:2])
    for data in feed[:2]:  # the game's start, 1. e4: nothing held
        journal.append(data)
        sync.soon()
        await asyncio.sleep(0)
    assert pgn_moves(journal.pgn_path.read_text()) == ["e2e4"]
    hold = gate.hold()  # 1... c5 about to be said
    before = len(fsynced)
    journal.append(feed[2])
    sync.soon()
    for _ in range(3):
        await asyncio.sleep(0)
    assert len(fsynced) > before, "the move's line is on the card at once"
    assert json.loads(journal.path.read_text().splitlines()[-1]) == feed[2]
    assert pgn_moves(journal.pgn_path.read_text()) == ["e2e4"], "the PGN waits"
    hold.release()
    for _ in range(3):
        await asyncio.sleep(0)
    assert pgn_moves(journal.pgn_path.read_text()) == ["e2e4", "c7c5"]


async def test_moves_held_by_one_phrase_rebuild_the_pgn_once_and_leave_the_next_phrase_be(
    tmp_path: Path, monkeypatch
) -> None:
    # Three moves come while one phrase holds the gate (a blitz flurry said as one
    # phrase): the PGN waits, then is rebuilt once for the three. Its rebuild was
    # queued once per move, and when the next move's phrase held the gate before the
    # queue had drained, each queued copy found the gate held and queued itself again:
    # the journal was synced at every turn of the loop (thousands a second) while
    # that phrase was on its way to its first sound, the CPU a Pi's phrase needs.
    from daemon.boards.pipeline import JournalSync
    from daemon.storage import journal as journal_module
    from daemon.storage.journal import Journal
    from tests.daemon.test_journal import pgn_moves

    rebuilds: list[Path] = []
    real_write = journal_module.write_atomically
    monkeypatch.setattr(
        journal_module,
        "write_atomically",
        lambda path, text, **kw: (rebuilds.append(path), real_write(path, text, **kw)),
    )
    gate = SpeechFirst(cap=WAIT)  # no hold runs out here: only a release ends it
    journal = Journal(tmp_path, fsync=False)
    sync = JournalSync(journal, lambda event: None, gate)
    syncs = 0
    real_sync = journal.sync

    def counted_sync(**options: bool) -> list[dict[str, Any]]:
        nonlocal syncs
        syncs += 1
        return real_sync(**options)

    monkeypatch.setattr(journal, "sync", counted_sync)
    feed = feed_of_game(OPENING)
    journal.append(feed[0])  # the game's start, nothing held
    sync.soon()
    await asyncio.sleep(0)
    rebuilds.clear()
    hold = gate.hold()
    for data in feed[1:4]:  # 1. e4 c5 2. Nf3, all while one phrase is on its way
        journal.append(data)
        sync.soon()
        for _ in range(2):
            await asyncio.sleep(0)
    assert rebuilds == [], "the PGN waits for the first sound"
    hold.release()
    await asyncio.sleep(0)
    next_hold = gate.hold()  # 2... d6's phrase, before the PGN's turn came
    journal.append(feed[4])
    sync.soon()
    before = syncs
    for _ in range(50):  # the loop's turns while that phrase makes its first samples
        await asyncio.sleep(0)
    assert syncs - before <= 2, f"{syncs - before} journal syncs in 50 loop turns"
    next_hold.release()
    for _ in range(10):
        await asyncio.sleep(0)
    assert pgn_moves(journal.pgn_path.read_text()) == OPENING
    assert len(rebuilds) == 1, "one rebuild for the four moves the phrases held"


@pytest.mark.skipif(not pyttsx3_available(), reason="pyttsx3/espeak-ng missing")
async def test_the_synthesis_thread_sleeps_while_espeak_makes_the_phrase(monkeypatch) -> None:
    # pyttsx3's driver woke every 10 ms to see whether the phrase had ended: on one
    # slow core each wake-up took the GIL and CPU while the first samples were due.
    from pyttsx3.drivers import espeak

    looks: list[float] = []
    iterate = espeak.EspeakDriver.iterate

    def counted(self) -> None:
        looks.append(time.monotonic())
        iterate(self)

    monkeypatch.setattr(espeak.EspeakDriver, "iterate", counted)
    chunks: list[float] = []

    async def on_pcm(pcm: bytes) -> None:
        if not chunks:  # a slow core: the first samples reach the player late, and
            await asyncio.sleep(0.2)  # espeak-ng waits for them meanwhile
        chunks.append(time.monotonic())

    thread = synthesis.shared()
    text = "Läufer schlägt Zäsar sechs Schach"
    await asyncio.wait_for(
        synthesis.run(thread, WAIT, voice="de", volume=1.0, rate=150, text=text, on_pcm=on_pcm),
        WAIT,
    )
    assert len(looks) <= 2, f"the driver looked {len(looks)} times, not once at its end"
