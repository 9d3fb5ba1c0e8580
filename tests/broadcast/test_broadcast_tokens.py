"""Wrong tokens are rate-limited per client address, on the real server."""

from __future__ import annotations

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
