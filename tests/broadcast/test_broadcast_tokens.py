"""Wrong tokens are rate-limited per client address, on the real server."""

from __future__ import annotations

import asyncio
import logging

import aiohttp

from daemon.broadcast.web import TOKENS_KEY

BODY = {"result": "1-0"}


async def guess(server, token: str, session: aiohttp.ClientSession | None = None):
    async with (session or server.session).post(
        server.url + "/control/result", json=BODY, headers={"Authorization": f"Bearer {token}"}
    ) as response:
        return response.status, response.headers.get("Retry-After")


def _tokens(server):
    return server.broadcaster.server.app[TOKENS_KEY]


async def test_a_few_wrong_tokens_then_a_lock_out_that_grows(live, caplog):
    server = await live(token="s3cret")
    now = [1000.0]
    _tokens(server).clock = lambda: now[0]
    with caplog.at_level(logging.WARNING):
        answers = [await guess(server, f"guess{i}") for i in range(300)]
    assert [status for status, _ in answers[:5]] == [403] * 5
    assert {status for status, _ in answers[5:]} == {429}  # 295 guesses, none compared
    assert answers[5][1] == "2"
    assert [r for r in caplog.records if "locked out 127.0.0.1" in r.getMessage()]
    assert (await guess(server, "s3cret"))[0] == 429  # even the right one waits
    assert server.requests == []
    now[0] += 2.5  # the lock-out is over; the allowance has grown by 2.5 s of refill
    again = [await guess(server, f"again{i}") for i in range(4)]
    assert again[:2] == [(403, None)] * 2 and again[2] == (429, "4")  # twice as long
    now[0] += 4.5
    assert (await guess(server, "s3cret"))[0] == 202
    assert [r.action for _, r in server.requests] == ["result"]
    async with server.session.get(server.url + "/state.json") as response:
        assert (await response.json())["status"]["token_lockouts"] == 2


async def test_the_lock_out_is_per_address(live):
    server = await live(token="s3cret")
    for i in range(8):
        await guess(server, f"guess{i}")
    assert (await guess(server, "s3cret"))[0] == 429
    other = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
    async with aiohttp.ClientSession(connector=other) as session:
        assert (await guess(server, "s3cret", session))[0] == 202


async def test_an_arbiter_s_typo_is_forgiven_by_the_right_token(live):
    server = await live(token="s3cret")
    for _ in range(3):
        for i in range(4):
            assert (await guess(server, f"typo{i}"))[0] == 403
        assert (await guess(server, "s3cret"))[0] == 202


async def guesses_from(server, source: str, tokens: list[str]) -> list[tuple[int, str | None]]:
    """One address's guesses, in order, on a session of its own."""
    connector = aiohttp.TCPConnector(local_addr=(source, 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        return [await guess(server, token, session) for token in tokens]


async def attack(server, addresses: list[str], tokens_for) -> list[tuple[int, str | None]]:
    """Every address guesses, twenty addresses at a time; the answers in order."""
    answers: list[tuple[int, str | None]] = []
    for start in range(0, len(addresses), 20):
        batch = addresses[start : start + 20]
        results = await asyncio.gather(*(guesses_from(server, a, tokens_for(a)) for a in batch))
        answers.extend(answer for result in results for answer in result)
    return answers


async def test_many_addresses_gain_nothing_and_a_logged_in_arbiter_is_let_through(live):
    server = await live(token="s3cret")
    now = [1000.0]
    _tokens(server).clock = lambda: now[0]
    assert (await guess(server, "s3cret"))[0] == 202  # the arbiter logs in (127.0.0.1)
    addresses = [f"127.0.1.{i}" for i in range(1, 201)]
    lucky = addresses[150]  # its third guess is the token: the 453rd guess of 600

    def tokens_for(address: str) -> list[str]:
        return [f"{address}-a", f"{address}-b", "s3cret" if address == lucky else "x"]

    answers = await attack(server, addresses, tokens_for)
    statuses = [status for status, _ in answers]
    assert statuses.count(403) <= 20  # compared (before: all 600)
    assert 202 not in statuses  # the right guess was never even compared
    assert [r.action for _, r in server.requests] == ["result"]  # the arbiter's only
    assert (await guess(server, "s3cret"))[0] == 202  # the arbiter is not locked out
    status, wait = (await guesses_from(server, "127.0.2.1", ["s3cret"]))[0]
    assert status == 429 and wait is not None and int(wait) <= 60  # a new address waits
    async with server.session.get(server.url + "/state.json") as response:
        locked = (await response.json())["status"]
    assert locked["token_global_lockouts"] >= 1 and locked["controls_locked_for"] > 0
    waits = []
    for _ in range(12):  # the attack goes on, each wave as soon as the lock ends
        now[0] += int(wait or 1)
        wave = await attack(server, addresses[:20], lambda a: [f"{a}-{now[0]}"])
        waits += [int(w) for s, w in wave if s == 429 and w is not None]
        assert [s for s, _ in wave].count(403) <= 1
        wait = max(waits[-20:], default=1)
    assert max(waits) <= 60  # the global lock-out never grows beyond a minute
    now[0] += 60  # the attack stops: a minute later, the arbiter's new phone gets in
    assert (await guesses_from(server, "127.0.2.1", ["s3cret"]))[0][0] == 202
