"""A phrase's first samples go into the player from the synthesis thread itself
(``daemon.speech.stream.Straight``, issue 28): on one slow core the event loop's turn,
twice, came between espeak-ng's first samples and the player.

The synthesis thread is the daemon's (``daemon.speech.synthesis``) with a stand-in
for pyttsx3 whose chunks are known, so the bytes the player reads can be compared
whole; the last test has the real pyttsx3 and the benchmarks' stand-in for aplay.
"""

from __future__ import annotations

import array
import asyncio
import gc
import sys
import time
import weakref
from pathlib import Path

import pytest

from daemon.speech import synthesis
from daemon.speech.engines import Pyttsx3Engine, pyttsx3_available
from daemon.speech.settings import SpeechSettings
from daemon.speech.stream import StreamPlayer
from tests.speech.test_stream import heard

WAIT = 30.0  # generous: only hit when something is broken
RATE = 8000
RECORDER = Path(__file__).resolve().parents[2] / "benchmarks" / "record_stream_player.py"
#: A player that keeps every byte it reads, in the file named after it.
KEEPER = (
    "import os, sys\n"
    "out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)\n"
    "while data := os.read(0, 65536):\n"
    "    os.write(out, data)\n"
)


def chunk(*parts: tuple[int, int]) -> bytes:
    """Samples as espeak-ng's callback gives them: (value, how many) runs, mono."""
    samples = array.array("h")
    for value, count in parts:
        samples.extend([value] * count)
    return samples.tobytes()


#: A phrase: silence first (cut but for the lead), words with a pause, silence after.
CHUNKS = [
    chunk((0, 800)),
    chunk((0, 300), (4000, 500)),
    chunk((-4000, 400), (0, 400)),
    chunk((3000, 800)),
    chunk((0, 800)),
]


class KnownSynthesizer:
    """pyttsx3 as the synthesis thread sees it, with ``CHUNKS`` for every text."""

    def use(self, voice: str, volume: float, rate: int = 150) -> str:
        return voice

    def stream(self, text: str, rate: int, sink) -> tuple[int, str | None]:
        for pcm in CHUNKS:
            sink(pcm)
        return sum(len(pcm) // 2 for pcm in CHUNKS), None


def keeping_player(path: Path, channel: str = "both") -> StreamPlayer:
    settings = SpeechSettings(
        engine="text", stream_player=(sys.executable, "-c", KEEPER, str(path)), channel=channel
    )
    return StreamPlayer(settings)


async def say(player: StreamPlayer, straight: bool, busy_loop: float = 0.0) -> tuple[float, int]:
    """The phrase through ``player`` (its first samples ``straight`` from the thread
    or through the loop); with ``busy_loop`` the loop is held that long once the
    thread has the text. Returns the phrase's seconds and the bytes the player had
    when the loop was free again."""
    thread = synthesis.SynthesisThread()
    thread.synthesizer = KnownSynthesizer()
    had = -1
    async with player.phrase(RATE) as phrase:

        async def on_pcm(pcm: bytes) -> None:
            await phrase.write(array.array("h", pcm))

        said = asyncio.create_task(
            synthesis.run(thread, WAIT, voice="de", volume=1.0, rate=150, text="x",
                          on_pcm=on_pcm, straight=phrase.straight() if straight else None)
        )  # fmt: skip
        if busy_loop:
            await asyncio.sleep(0)  # the job is submitted
            time.sleep(busy_loop)  # the loop at other work, no await
            had = kept_bytes(player)
        await asyncio.wait_for(said, WAIT)
    return phrase.seconds, had


def kept_bytes(player: StreamPlayer) -> int:
    path = Path(player.settings.stream_player[-1])
    return path.stat().st_size if path.exists() else 0


@pytest.mark.parametrize("channel", ["both", "left"])
async def test_the_player_reads_the_same_bytes_whichever_thread_wrote_the_first(
    tmp_path: Path, channel: str
) -> None:
    streams = {}
    for straight in (False, True):
        path = tmp_path / f"straight-{straight}.raw"
        player = keeping_player(path, channel)
        await player.open(RATE)
        seconds = [(await say(player, straight))[0] for _ in range(2)]
        await player.close()
        streams[straight] = (path.read_bytes(), seconds)
    assert streams[True] == streams[False]
    data, seconds = streams[True]
    assert seconds[0] > 0.2 and len(data) > 2 * 2 * RATE * 0.2


async def test_a_phrases_first_samples_reach_the_player_while_the_loop_is_busy(
    tmp_path: Path,
) -> None:
    had = {}
    for straight in (False, True):
        player = keeping_player(tmp_path / f"straight-{straight}.raw")
        await player.open(RATE)
        had[straight] = (await say(player, straight, busy_loop=0.5))[1]
        await player.close()
    assert had[False] == 0, "through the loop: nothing before the loop's turn"
    assert had[True] > 0, "straight: in the player while the loop was busy"


async def test_a_phrase_cut_while_its_first_samples_are_made_writes_nothing_more(
    tmp_path: Path,
) -> None:
    player = keeping_player(tmp_path / "cut.raw")
    await player.open(RATE)
    async with player.phrase(RATE) as phrase:
        straight = phrase.straight()
        assert straight is not None
    # the phrase is over (said, or cut): a late chunk of the thread's goes nowhere
    assert straight.write(CHUNKS[1]) is None
    await player.close()
    assert kept_bytes(player) > 0 and straight.over  # (only the phrase's own end)


@pytest.mark.skipif(not pyttsx3_available(), reason="pyttsx3/espeak-ng missing")
async def test_with_pyttsx3_a_move_is_heard_while_the_event_loop_is_busy(tmp_path: Path) -> None:
    log = tmp_path / "heard.log"
    log.touch()
    player = (sys.executable, str(RECORDER), str(log), "{rate}", "{channels}")
    settings = SpeechSettings(engine="pyttsx3", stream_player=player, synthesis="thread")
    engine = Pyttsx3Engine(settings, "de")
    try:
        await asyncio.wait_for(engine.start(), WAIT)
        await asyncio.wait_for(engine.speak("Kurze Rochade", "Kurze Rochade"), WAIT)  # warm
        before = len(heard(log))
        speaking = asyncio.create_task(engine.speak("Springer Felix drei", "Springer Felix drei"))
        for _ in range(1000):
            if synthesis.shared().busy_since is not None:
                break
            await asyncio.sleep(0)
        time.sleep(0.5)  # the loop at the hall's other boards, no await
        free_again = time.time()
        said = await asyncio.wait_for(speaking, WAIT)
        assert said.seconds is not None and said.seconds > 0.3
        first = heard(log)[before:][:1]
        assert first and first[0] < free_again, "heard before the loop was free"
    finally:
        await engine.close()


async def test_a_phrase_and_its_writer_are_freed_without_the_collector(tmp_path: Path) -> None:
    # A tournament day's memory must stay flat (issue 28's growth): nothing of a
    # phrase may wait for the collector's rare full pass.
    player = keeping_player(tmp_path / "freed.raw")
    await player.open(RATE)
    gc.collect()
    gc.disable()  # only reference counting: what a cycle keeps stays
    try:
        async with player.phrase(RATE) as phrase:
            straight = phrase.straight()
            assert straight is not None
            note = straight.write(CHUNKS[1])
            assert note
            await straight.written(note)
        refs = [weakref.ref(phrase), weakref.ref(straight)]
        del phrase, straight, note
        assert [ref() for ref in refs] == [None, None]
    finally:
        gc.enable()
        await player.close()
