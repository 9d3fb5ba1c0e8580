"""A speech engine for tests that hears every phrase at once: what the announcer
gave it to say, in order, without a real voice's time."""

from __future__ import annotations

from daemon.speech.engines import Delivery


class Recorder:
    """An engine that says each phrase at once and keeps it."""

    name = "recorder"

    def __init__(self) -> None:
        self.heard: list[str] = []

    async def start(self) -> None:
        return None

    async def speak(self, written: str, spoken: str, budget: float | None = None) -> Delivery:
        self.heard.append(written)
        return Delivery(self.name)

    async def close(self) -> None:
        return None
