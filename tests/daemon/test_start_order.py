"""What READY means: the board is read before the speech and the live page are up,
and what the board says meanwhile is still spoken and shown, in order.

systemd's READY (and ``start -> READY`` on a Pi's budget, issue 19) comes once a move
is read, decided and journalled; the speech and the page start after it. A player
who moves in those seconds must lose nothing: the move is said and shown once they
are up.
"""

from __future__ import annotations

import asyncio
import io
import threading
from pathlib import Path

import chess
import pytest

from daemon import compose
from daemon.app import Daemon
from daemon.config import load_text
from daemon.service.notify import Notifier
from drivers.sensors import BoardDump, SquareChange

SETTINGS = (
    "broadcast:\n  address: 127.0.0.1\n  port: 0\n"
    "speech:\n  engine: text\n"
    "clock:\n  device: none\n"
    "rules:\n  settle_time: 0.05\n"
)


class RecordingNotifier(Notifier):
    """The sd_notify messages, as systemd would get them."""

    def __init__(self) -> None:
        super().__init__(environ={})
        self.sent: list[list[str]] = []

    def send(self, *states: str) -> bool:
        self.sent.append(list(states))
        return True

    def ready(self, status: str = "") -> bool:
        self.ready_at = len(self.sent)
        return super().ready(status)


async def test_ready_comes_before_speech_and_page_and_what_is_played_meanwhile_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_text(SETTINGS, "test.yaml", environ={})
    notifier = RecordingNotifier()
    spoken = io.StringIO()
    release = threading.Event()
    real_import = compose.import_after_ready

    def slow_import(speech: bool, broadcast: bool) -> None:
        release.wait(30)  # the speech and the page take long to start (a slow Pi)
        real_import(speech, broadcast)

    monkeypatch.setattr(compose, "import_after_ready", slow_import)
    daemon = Daemon(
        settings,
        port=str(tmp_path / "no-board"),
        storage_dir=tmp_path / "games",
        resume=False,
        notifier=notifier,
        speech_text=spoken,
    )
    starting = asyncio.create_task(daemon.start())
    try:
        for _ in range(200):
            if any("READY=1" in states for states in notifier.sent):
                break
            await asyncio.sleep(0.05)
        ready = next(states for states in notifier.sent if "READY=1" in states)
        # READY, while the speech and the page are still starting, and systemd is told
        assert daemon.announcer is None and daemon.hub is None
        assert any("speech and the live page starting" in s for s in ready), ready
        # The board is read and the move decided and journalled meanwhile.
        start = chess.Board().board_fen()
        daemon.submit(BoardDump(daemon.now(), start))
        daemon.submit(SquareChange(daemon.now(), "e2", None))
        daemon.submit(SquareChange(daemon.now(), "e4", "P"))
        for _ in range(200):
            if any(e.get("type") == "move" for e in daemon.journal.game_events):
                break
            await asyncio.sleep(0.05)
        moves = [e for e in daemon.journal.game_events if e.get("type") == "move"]
        assert [m["uci"] for m in moves] == ["e2e4"]
        said = moves[0]["speech"]  # the move's words (Appendix E), as the feed has them
        release.set()
        await asyncio.wait_for(starting, 30)
        # Once up, the page has the game and its move, and the move is said.
        assert daemon.hub is not None and daemon.http_url
        # ... once the move is on the card (the page shows only what the disk has)
        for _ in range(200):
            if "1. e4" in daemon.hub.hub.pgn():
                break
            await asyncio.sleep(0.05)
        assert "1. e4" in daemon.hub.hub.pgn()
        for _ in range(200):
            if said in spoken.getvalue():
                break
            await asyncio.sleep(0.05)
        lines = spoken.getvalue().splitlines()
        assert said in lines, lines
        last = notifier.sent[-1]
        assert any("live page http://127.0.0.1:" in s for s in last), last
    finally:
        release.set()
        daemon.stop()
        if not starting.done():
            await asyncio.wait_for(starting, 30)
        await daemon.close()
