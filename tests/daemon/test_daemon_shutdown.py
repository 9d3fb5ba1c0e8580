"""The daemon's own bookkeeping across journal syncs: what is queued is said at
shutdown, and a board that answers is announced as connected once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import chess
import pytest

from daemon.app import Daemon
from daemon.config import load_text
from daemon.service.notify import Notifier
from daemon.speech import announcer as announcer_module
from drivers.sensors import BoardDump, SquareChange

SETTINGS = (
    "broadcast:\n  enabled: false\nclock:\n  device: none\n"
    "rules:\n  settle_time: 0.1\nspeech:\n  engine: text\n"
)


class SlowSpeaker:
    """An engine that takes as long as a voice does to say a phrase."""

    name = "slow"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = asyncio.Event()
        self.heard: list[str] = []

    async def start(self) -> None:
        self.started.set()

    async def speak(self, written: str, spoken: str, budget: float | None = None) -> None:
        await asyncio.sleep(self.seconds)
        self.heard.append(written)

    async def close(self) -> None:
        return None


class StatusLines(Notifier):
    """What ``systemctl status`` would show, line by line."""

    def __init__(self) -> None:
        super().__init__(environ={})
        self.lines: list[str] = []

    def status(self, status: str) -> bool:
        self.lines.append(status)
        return True


def play_e4(daemon: Daemon) -> None:
    t = daemon.now()
    daemon.submit(BoardDump(t, chess.Board().board_fen()))
    daemon.submit(SquareChange(t + 0.01, "e2", None))
    daemon.submit(SquareChange(t + 0.02, "e4", "P"))


async def wait_for(condition, seconds: float = 20.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")


async def test_shutdown_says_what_is_still_queued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    feed: list[dict] = []
    speaker = SlowSpeaker(0.8)
    # the earphone's engine, as the daemon builds it (the phone pages' announcers
    # beside it have their own engines and no page listening here)
    monkeypatch.setattr(announcer_module, "build_engine", lambda *a, **k: speaker)
    settings = load_text(SETTINGS, "test.yaml", environ={})
    daemon = Daemon(
        settings,
        port=str(tmp_path / "no-board-here"),
        storage_dir=tmp_path / "games",
        resume=False,
        on_event=feed.append,
        notifier=StatusLines(),
    )
    await daemon.start()
    await asyncio.wait_for(speaker.started.wait(), 20)
    play_e4(daemon)
    await wait_for(lambda: any(e["type"] == "move" for e in feed))
    await asyncio.sleep(0.1)  # the journal's sync after the move has run
    daemon.stop()
    await daemon.close()
    move = next(e for e in feed if e["type"] == "move")
    assert speaker.heard[-1] == move["speech"] == "Bauer Eva vier"


async def test_a_board_that_answers_is_announced_connected_once(tmp_path: Path) -> None:
    settings = load_text(SETTINGS, "test.yaml", environ={})
    status = StatusLines()
    feed: list[dict] = []
    daemon = Daemon(
        settings,
        speech=False,
        storage_dir=tmp_path / "games",
        resume=False,
        on_event=feed.append,
        notifier=status,
    )
    play_e4(daemon)
    await wait_for(lambda: any(e["type"] == "move" for e in feed))
    await asyncio.sleep(0.05)  # the journal's sync after the move has run
    after = chess.Board()
    after.push_uci("e2e4")
    daemon.submit(BoardDump(daemon.now(), after.board_fen()))  # the link's next dump
    await asyncio.sleep(0.05)
    daemon.pipeline.close()
    daemon.journal.close()
    assert [line for line in status.lines if "connected" in line] == ["board connected ()"]
