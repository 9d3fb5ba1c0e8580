"""A penalty on a board whose clock the daemon cannot set (a bus board): the POST's
answer tells the arbiter what to put on the clock by hand, and the console shows it."""

from __future__ import annotations

from daemon.broadcast import console

TOKEN = "s3cret"
PENALTY = {"to": "black", "seconds": 120, "article": "7.4b"}


async def _penalty(server) -> dict:
    async with server.session.post(
        server.url + "/control/penalty?board=1",
        json=PENALTY,
        headers={"Authorization": f"Bearer {TOKEN}"},
    ) as response:
        assert response.status == 202, await response.text()
        return await response.json()


async def test_the_penalty_s_answer_says_to_set_the_clock_by_hand(live) -> None:
    server = await live(token=TOKEN)
    assert "clock" not in await _penalty(server)  # nothing said of this board's clock
    server.broadcaster.hub.note_clock("1", "bus mode cannot set the clock")
    answer = await _penalty(server)
    assert answer["clock"] == (
        "Set the clock by hand: +2:00 on Black's clock (bus mode cannot set the clock)"
    )
    assert [r.action for _, r in server.requests] == ["penalty", "penalty"]
    assert "answer.clock" in console.CONSOLE  # the console shows it with the penalty
    async with server.session.get(server.url + "/state.json") as response:
        state = await response.json()  # ... and under its penalty buttons, at all times
    assert state["boards"]["1"]["clock_by_hand"] == "bus mode cannot set the clock"
    assert "st.clock_by_hand" in console.CONSOLE
