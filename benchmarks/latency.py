"""Board-to-announcement latency through the daemon's real path.

    python -m benchmarks.latency [--moves N] [--engine pyttsx3|espeak-ng] [--quick]

The board emulator (``drivers.simulators.emulator``) sits on a pseudo-terminal and plays a
real game as human hands would (``drivers.simulators.handling``); the daemon (``daemon.app``,
the same object ``dgt-bridge run`` builds, from the shipped configuration) reads it
through the serial link, the rules core decides, and the announcer speaks with the
configured engine. Measured per move:

- to the event: from the deciding byte leaving the emulator (the clock press's time
  message; without a clock the last piece set down, plus the settle time the Laws
  make us wait) to the daemon handing the ``move`` event to its outputs;
- to the speech: from the same moment to the first loud sample of the move's phrase
  being heard. There is no sound card here: ``speech.stream_player`` (the player kept
  running that the phrase is streamed into) is ``benchmarks/record_stream_player.py``,
  which notes when the first loud sample it was fed would be played, so the figure
  includes the synthesis up to that sample and the pipe, not the sound card (a real
  aplay adds one period, 25 ms, and the card's delay).

A pseudo-terminal has no baud rate: a real board adds the line time of the deciding
message (5 bytes at 9600 baud: about 5 ms; a clock message, 10 bytes: about 10 ms).

Targets: p99 under 20 ms to the event, under 150 ms to the start of speech.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from benchmarks.common import GAMES_PGN, ROOT, footer, header, percentile, spread_ms
from daemon.app import Daemon
from daemon.config import load_file
from daemon.files import resources
from drivers.sensors import SensorEvent
from drivers.simulators.emulator import BoardEmulator
from drivers.simulators.handling import ALL, Hands, Timing

RECORD_PLAYER = ROOT / "benchmarks" / "record_player.sh"
RECORD_STREAM_PLAYER = ROOT / "benchmarks" / "record_stream_player.py"


def stream_player_setting(log: Path) -> str:
    """``speech.stream_player`` (as an environment value) for the stand-in noting in
    ``log`` when each phrase's first loud sample would be heard."""
    return json.dumps([sys.executable, str(RECORD_STREAM_PLAYER), str(log), "{rate}",
                       "{channels}"])  # fmt: skip


def read_player_log(log: Path) -> tuple[list[float], list[float]]:
    """When each phrase's first loud sample was heard, and when each phrase but the
    last ended (its last loud sample heard), from ``record_stream_player.py``'s log."""
    starts: list[float] = []
    ends: list[float] = []
    for line in log.read_text().splitlines():
        fields = line.split()
        if len(fields) >= 2:
            (starts if fields[1] == "stream" else ends).append(float(fields[0]))
    return sorted(starts), sorted(ends)


#: Think long enough that every move settles before the reply starts (else a fast
#: reply is decided with the next move, and the settle wait is not the one measured).
BENCH_TIMING = Timing(think=(1.0, 1.6))


class StampingEmulator(BoardEmulator):
    """The emulator, noting when each sensor event's bytes have been written to the pty."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.applied_at: dict[int, float] = {}

    def apply(self, event: SensorEvent) -> None:
        super().apply(event)
        self.applied_at[id(event)] = time.time()


@dataclass
class Plan:
    """A game's sensor log and, for each ply, the event whose bytes decide the move."""

    events: list[SensorEvent]
    deciding: dict[int, SensorEvent] = field(default_factory=dict)


def plan_game(game: chess.pgn.Game, moves: int, with_clock: bool, seed: int) -> Plan:
    """Human hands play the first ``moves`` plies, each completed by a press or not."""
    hands = Hands(game.board(), seed=seed, with_clock=with_clock, timing=BENCH_TIMING)
    plan = Plan(hands.events)
    for ply, move in enumerate(list(game.mainline_moves())[:moves], start=1):
        hands.think()
        hands.play(move, ALL - {"fast_reply"})
        if with_clock:
            hands.wait(hands.rng.uniform(*hands.timing.before_press))
            hands.press()
        plan.deciding[ply] = hands.events[-1]
    hands.wait(1.5)
    return plan


def first_game_with(moves: int) -> chess.pgn.Game:
    with open(GAMES_PGN, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            if game.board().fen() == chess.STARTING_FEN and game.end().ply() >= moves:
                return game
    raise SystemExit(f"no standard game of {moves} plies in {GAMES_PGN}")


@dataclass
class Result:
    to_event: list[float]
    to_speech: list[float]
    wrong: int  # moves the daemon got wrong or missed
    unspoken: int  # moves with no player start before the next move
    journal: list[float] = field(default_factory=list)  # journal append of each move
    rest: list[float] = field(default_factory=list)  # to event, less the journal's write
    problems: list[str] = field(default_factory=list)  # speech failures reported
    #: to speech of the moves decided after the previous phrase had ended, and of
    #: those decided while it still sounded (they wait for it: issue 14's schedule
    #: never cuts a move), with how long it still sounded
    speech_free: list[float] = field(default_factory=list)
    speech_behind: list[float] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)


async def run_once(game: chess.pgn.Game, moves: int, with_clock: bool, engine: str) -> Result:
    work = Path(tempfile.mkdtemp(prefix="dgt-bench-latency-"))
    player_log = work / "player.log"
    player_log.touch()
    environ = {
        "DGT_BRIDGE_SPEECH__ENGINE": engine,
        "DGT_BRIDGE_SPEECH__DEVICE": '"null"',  # YAML: a bare null is no value
        "DGT_BRIDGE_SPEECH__STREAM_PLAYER": stream_player_setting(player_log),
        "DGT_BRIDGE_CLOCK__DEVICE": "dgt" if with_clock else "none",
        "DGT_BRIDGE_BROADCAST__ADDRESS": "127.0.0.1",
        "DGT_BRIDGE_BROADCAST__PORT": "0",
    }
    settings = load_file(resources.default_config_file(), environ)
    settle = settings.rules.settle_time
    plan = plan_game(game, moves, with_clock, seed=7)
    moves_seen: dict[int, tuple[str, float]] = {}
    expected = [m.uci() for m in list(game.mainline_moves())[:moves]]
    done = threading.Event()
    speech_problems: list[str] = []  # an engine that failed: the figure is another engine's

    def on_event(event: dict[str, Any]) -> None:
        if event.get("type") == "notice" and "speech" in str(event.get("code")):
            speech_problems.append(str(event.get("message")))
        if event.get("type") == "move":
            moves_seen[int(event["ply"])] = (str(event["uci"]), time.time())
            if len(moves_seen) >= moves:
                done.set()

    emulator = StampingEmulator().start()
    daemon = Daemon(
        settings,
        port=emulator.port_path,
        speech=True,
        storage_dir=work / "games",
        resume=False,
        on_event=on_event,
    )
    journal_times: dict[int, float] = {}
    append = daemon.journal.append

    def timed_append(event: dict[str, Any]) -> Any:
        """Only times the journal's write that comes before every output (disk first);
        its fsync and PGN rewrite follow the outputs (``Journal.sync``)."""
        before = time.perf_counter()
        try:
            return append(event)
        finally:
            if event.get("type") == "move":
                journal_times[int(event["ply"])] = time.perf_counter() - before

    daemon.journal.append = timed_append  # type: ignore[method-assign]
    try:
        await daemon.start()
        for _ in range(300):
            if daemon.link is not None and daemon.link.connected:
                break
            await asyncio.sleep(0.1)
        else:
            raise SystemExit("the daemon did not connect to the emulator in 30 s")
        await asyncio.sleep(0.5)
        emulator.play(plan.events)
        duration = plan.events[-1].t - plan.events[0].t
        await asyncio.to_thread(emulator.wait_played, duration + 30)
        await asyncio.to_thread(done.wait, 10)
        await asyncio.sleep(1.0)  # the last announcement
    finally:
        daemon.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(daemon.close(), 30)
        emulator.stop()
    starts, ends = read_player_log(player_log)
    result = Result([], [], 0, 0, problems=speech_problems)
    for ply in range(1, moves + 1):
        seen = moves_seen.get(ply)
        if seen is None or seen[0] != expected[ply - 1]:
            result.wrong += 1
            continue
        deciding = plan.deciding[ply]
        byte_time = emulator.applied_at.get(id(deciding))
        if byte_time is None:
            result.wrong += 1
            continue
        decided = byte_time + (0.0 if with_clock else settle)
        event_time = seen[1]
        result.to_event.append(event_time - decided)
        if ply in journal_times:
            result.journal.append(journal_times[ply])
            result.rest.append(event_time - decided - journal_times[ply])
        following = moves_seen.get(ply + 1, (None, float("inf")))[1]
        spoken = [s for s in starts if event_time <= s < following]
        if spoken:
            result.to_speech.append(spoken[0] - decided)
            before = [e for e in ends if e < spoken[0]]
            if before and before[-1] > decided:
                result.speech_behind.append(spoken[0] - decided)
                result.waits.append(before[-1] - decided)
            else:
                result.speech_free.append(spoken[0] - decided)
        else:
            result.unspoken += 1
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=40, help="plies per run (40)")
    parser.add_argument("--runs", type=int, default=3, help="runs per clock mode (3)")
    parser.add_argument("--engine", choices=("pyttsx3", "espeak-ng"), default="pyttsx3")
    parser.add_argument("--quick", action="store_true", help="4 plies, one run each")
    args = parser.parse_args(argv)
    if args.quick:
        args.moves, args.runs = 4, 1
    header(f"board-to-announcement latency (emulator on a pty, daemon, {args.engine})")
    game = first_game_with(args.moves)
    print(
        f"game: {game.headers.get('White')} - {game.headers.get('Black')}, first {args.moves} "
        f"plies; player: {RECORD_STREAM_PLAYER.name} (no sound card: time to the first "
        "loud sample fed to the running player)"
    )
    failed = False
    for with_clock in (True, False):
        mode = "with clock (from the press)" if with_clock else "without clock (from settle)"
        p99_events, p99_speech = [], []
        all_events: list[float] = []
        all_speech: list[float] = []
        all_journal: list[float] = []
        all_rest: list[float] = []
        all_free: list[float] = []
        all_behind: list[float] = []
        all_waits: list[float] = []
        for run in range(1, args.runs + 1):
            result = asyncio.run(run_once(game, args.moves, with_clock, args.engine))
            all_events += result.to_event
            all_speech += result.to_speech
            all_journal += result.journal
            all_rest += result.rest
            all_free += result.speech_free
            all_behind += result.speech_behind
            all_waits += result.waits
            if result.to_event:
                p99_events.append(percentile(result.to_event, 0.99))
            if result.to_speech:
                p99_speech.append(percentile(result.to_speech, 0.99))
            failed |= bool(result.wrong or result.unspoken or result.problems)
            for problem in result.problems[:3]:
                print(f"SPEECH PROBLEM (the engine fell back): {problem}")
            print(
                f"{mode}, run {run}: to event {spread_ms(result.to_event)}; "
                f"to speech {spread_ms(result.to_speech)}; "
                f"wrong/missed moves {result.wrong}, unspoken {result.unspoken}"
            )
        if p99_events and p99_speech:
            event_p99 = statistics.median(p99_events)
            speech_p99 = statistics.median(p99_speech)
            print(
                f"{mode}: median of the runs' p99: to event {event_p99 * 1e3:.1f} ms "
                f"(target < 20 ms: {'meets' if event_p99 < 0.020 else 'MISSES'}), "
                f"to speech {speech_p99 * 1e3:.1f} ms "
                f"(target < 150 ms: {'meets' if speech_p99 < 0.150 else 'MISSES'})"
            )
            print(f"{mode}: all runs pooled: to event {spread_ms(all_events)}")
            print(f"{mode}: all runs pooled: to speech {spread_ms(all_speech)}")
            print(
                f"{mode}: ... of the moves decided after the previous phrase ended: "
                f"{spread_ms(all_free)}"
            )
            print(
                f"{mode}: ... of those decided while it still sounded: {spread_ms(all_behind)}; "
                f"it sounded on for {spread_ms(all_waits)}"
            )
            print(
                f"{mode}: of which the journal's append of the move, before any output "
                f"sees it (fsync and PGN follow the outputs): {spread_ms(all_journal)}"
            )
            print(f"{mode}: to event without the journal's write: {spread_ms(all_rest)}")
    if failed:
        print("WARNING: some moves were wrong, missed or not spoken (see above)")
    footer()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
