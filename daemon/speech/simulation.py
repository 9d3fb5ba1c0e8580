"""The announcer on simulated time, with a player that takes each WAV's true length.

Used by the tests and by ``benchmarks/speech_schedule.py``: events are fed to a
real ``Announcer`` (the same ``receive``, the same schedule, the same answers) whose
clock is the simulation's; each phrase is rendered by the real espeak-ng
(``EspeakDurations``: the WAV written, trimmed like the speaker trims it, its length
read with ``wave``), at the rate the speaker would choose, and "plays" for exactly
that long. Time only jumps, so an hour of bullet takes seconds.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from daemon.speech import wavs
from daemon.speech.announcer import Announcer
from daemon.speech.schedule import Phrase, quicker_rate
from daemon.speech.settings import SpeechSettings
from daemon.speech.vocabulary import Vocabulary
from drivers.records import FrozenRecord, Record


class Durations(Protocol):
    def seconds(self, spoken: str, rate: int) -> float:
        """How long ``spoken`` lasts at ``rate`` words per minute."""


class EspeakDurations:
    """Real espeak-ng renders, trimmed as the speaker trims them, cached per text."""

    def __init__(self, voice: str, program: str = "espeak-ng") -> None:
        self.voice = voice
        self.program = program
        self.cache: dict[tuple[str, int], float] = {}
        self.render_times: list[float] = []  # wall seconds per render (synthesis latency)
        self._dir = tempfile.TemporaryDirectory(prefix="dgt-bridge-durations-")

    def seconds(self, spoken: str, rate: int) -> float:
        key = (spoken, rate)
        if key not in self.cache:
            path = Path(self._dir.name) / "phrase.wav"
            started = time.perf_counter()
            subprocess.run(
                [self.program, "-v", self.voice, "-s", str(rate), "-w", str(path)],
                input=spoken.encode("utf-8"),
                check=True,
                capture_output=True,
                timeout=30,
            )
            self.render_times.append(time.perf_counter() - started)
            self.cache[key] = wavs.trim(path)
        return self.cache[key]


@dataclass(eq=False, repr=False, slots=True)
class Heard(FrozenRecord):
    """One phrase as the player heard it."""

    phrase: Phrase
    start: float
    end: float
    rate: int
    seconds: float


@dataclass(eq=False, repr=False)
class Run(Record):
    """What a simulated game sounded like."""

    heard: list[Heard] = field(default_factory=list)
    move_times: dict[int, float] = field(default_factory=dict)  # ply -> event time (spoken sides)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    cut: list[Heard] = field(default_factory=list)  # reading phrases that gave way, as far as said

    def move_end(self, ply: int) -> float | None:
        """When the player had heard the phrase with this move in full."""
        for item in self.heard:
            if ply in item.phrase.plies:
                return item.end
        return None

    def lags(self) -> dict[int, float]:
        """Per move: seconds from its event to the end of its phrase."""
        lags = {}
        for ply, t in self.move_times.items():
            end = self.move_end(ply)
            if end is not None:
                lags[ply] = end - t
        return lags

    def answer_phrases_before(self, ply: int) -> int:
        """How many answer phrases the player heard between this move and its phrase
        (one at most: the one already playing when the move came)."""
        t = self.move_times[ply]
        end = self.move_end(ply)
        if end is None:
            return 0
        return sum(
            1 for h in self.heard if h.phrase.kind == "answer" and h.end > t and h.end <= end
        )


def simulate(
    events: Iterable[tuple[float, dict[str, Any]]],
    settings: SpeechSettings,
    vocabulary: Vocabulary,
    durations: Durations,
    *,
    latency: float = 0.03,
) -> Run:
    """Feed timed events to an announcer and play every phrase for its true length.

    ``latency``: seconds from a phrase being chosen to its sound starting (the
    synthesis; a quicker re-render adds it again).
    """
    now = 0.0
    run = Run()
    announcer = Announcer(
        settings,
        engine=None,  # type: ignore[arg-type]  # the simulation plays
        vocabulary=vocabulary,
        clock=lambda: now,
        on_outcome=run.outcomes.append,
    )
    schedule = announcer.schedule
    pending = sorted(events, key=lambda pair: pair[0])
    index = 0
    playing: Heard | None = None
    while True:
        next_event = pending[index][0] if index < len(pending) else None
        wake_at = schedule.wake_at(now) if playing is None else None
        if wake_at is not None and wake_at > now and (next_event is None or wake_at < next_event):
            now = max(now, wake_at)  # an answer held back may go now
        elif playing is not None and (next_event is None or playing.end <= next_event):
            now = playing.end
            schedule.done(playing.phrase, now)
            announcer.spoken.append(playing.phrase)
            run.heard.append(playing)
            playing = None
        elif next_event is not None:
            now = max(now, next_event)
            event = pending[index][1]
            index += 1
            if event.get("type") == "move" and event.get("by") in settings.sides:
                run.move_times[int(event["ply"])] = now
            announcer.receive(event)
            if playing is not None and schedule.give_way(now):  # cut: said again later
                schedule.done(playing.phrase, now, heard=False, reason="cut")
                run.cut.append(replace(playing, end=max(now, playing.start)))
                playing = None
        else:
            break
        if playing is None:
            phrase = schedule.next(now)
            announcer._report()
            if phrase is not None:
                playing = _play(phrase, now, settings, announcer, durations, latency)
    announcer._report()
    return run


def _play(
    phrase: Phrase,
    now: float,
    settings: SpeechSettings,
    announcer: Announcer,
    durations: Durations,
    latency: float,
) -> Heard:
    """What the speaker does (``_WavEngine.speak``): render, quicker if over budget."""
    spoken = announcer.vocabulary.pronounce(phrase.written)
    rate = int(settings.rate)
    seconds = durations.seconds(spoken, rate)
    start = now + latency
    quicker = quicker_rate(seconds, phrase.budget, rate, int(settings.max_rate))
    if quicker is not None:
        rate = quicker
        seconds = durations.seconds(spoken, rate)
        start += latency
    return Heard(phrase, start, start + seconds, rate, seconds)


def game_timeline(
    sans: list[str], think: Iterable[float], *, start: float = 0.0, clock_base: float = 300.0
) -> list[tuple[float, dict[str, Any]]]:
    """The feed of a game played at the given thinking times (one per half-move):
    ``game_start``, then each ``move`` with the clocks at its completion, and a
    ``clock`` report every second in between (what a DGT clock sends)."""
    import chess

    board = chess.Board()
    events: list[tuple[float, dict[str, Any]]] = [
        (start, {"t": start, "type": "game_start", "fen": board.fen()})
    ]
    clocks = {"white": clock_base, "black": clock_base}
    t = start
    for ply, (san, seconds) in enumerate(zip(sans, think, strict=False), 1):
        mover = "white" if board.turn else "black"
        tick = 1.0
        while tick < seconds:
            events.append(
                (
                    t + tick,
                    {
                        "t": t + tick,
                        "type": "clock",
                        "white": clocks["white"] - (tick if mover == "white" else 0),
                        "black": clocks["black"] - (tick if mover == "black" else 0),
                        "running": mover,
                    },
                )
            )
            tick += 1.0
        t += seconds
        clocks[mover] -= seconds
        move = board.parse_san(san)
        speech_board = board.copy(stack=False)
        board.push(move)
        events.append(
            (
                t,
                {
                    "t": t,
                    "type": "move",
                    "ply": ply,
                    "uci": move.uci(),
                    "san": speech_board.san(move),
                    "fen": board.fen(),
                    "by": mover,
                    "speech": "",
                    "clock": dict(clocks),
                },
            )
        )
    return events


def standard_games(pgn: Path, count: int, min_plies: int = 40) -> list[list[str]]:
    """The first ``count`` games of a PGN file from the standard start with at least
    ``min_plies`` half-moves, as SAN lists."""
    import chess.pgn

    games: list[list[str]] = []
    with open(pgn, encoding="utf-8") as handle:
        while len(games) < count:
            game = chess.pgn.read_game(handle)
            if game is None:
                break
            if "FEN" in game.headers or game.headers.get("Variant", "Standard") != "Standard":
                continue
            board = game.board()
            sans = []
            for move in game.mainline_moves():
                sans.append(board.san(move))
                board.push(move)
            if len(sans) >= min_plies:
                games.append(sans)
    return games
