"""Reading Server-Sent Events the way a display does, for the tests."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import aiohttp

WAIT = 10.0  # generous: the machine is shared


@dataclass
class SseMessage:
    id: int | None
    event: str | None
    data: dict[str, Any]


async def read_sse(response: aiohttp.ClientResponse, timeout: float = WAIT) -> SseMessage:
    """The next SSE message with data (comments and retry lines skipped)."""

    async def _read() -> SseMessage:
        fields: dict[str, str] = {}
        while True:
            line = await response.content.readline()
            if not line:
                raise ConnectionError("the stream ended")
            text = line.decode().rstrip("\n")
            if text == "":
                if "data" in fields:
                    raw_id = fields.get("id")
                    return SseMessage(
                        int(raw_id) if raw_id else None,
                        fields.get("event"),
                        json.loads(fields["data"]),
                    )
                fields = {}
                continue
            if text.startswith(":"):
                continue
            name, _, value = text.partition(":")
            fields[name] = value[1:] if value.startswith(" ") else value

    return await asyncio.wait_for(_read(), timeout)
