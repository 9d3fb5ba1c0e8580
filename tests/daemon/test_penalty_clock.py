"""The arbiter's penalty reaches a DGT clock read through a single board (issue 29):
the daemon sets the emulated DGT 3000 to the last reported times plus the penalty,
with the same side running, sees the next report show it, and the console's answer
says the clock was set. When it cannot (whose side is White's not known) the answer
says to set the clock by hand, and why; a bus board is always told so."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import aiohttp

from daemon.app import Daemon
from daemon.broadcast.web import penalty_clock
from daemon.clock.penalty import ClockReports, PenaltyOutcome, frame_for, new_times, put_on_clock
from daemon.config import load_text
from daemon.game.events import ClockUpdate, Penalty
from drivers.clock.dgt3000 import set_and_run
from drivers.simulators.emulator import BoardEmulator

TOKEN = "arbiter-token"


async def _until(check: Any, timeout: float = 10.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


async def _penalty(daemon: Daemon, body: dict[str, Any]) -> dict[str, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            daemon.http_url + "control/penalty",
            json=body,
            headers={"Authorization": f"Bearer {TOKEN}"},
        ) as response,
    ):
        assert response.status == 202, await response.text()
        return await response.json()


def _daemon(tmp_path: Path, emulator: BoardEmulator, sides: str) -> Daemon:
    settings = load_text(
        f"broadcast:\n  port: 0\n  address: 127.0.0.1\n  token: {TOKEN}\n"
        f"clock:\n  sides: {sides}\n  show_moves_on_clock: false\n",
        "test.yaml",
        environ={},
    )
    return Daemon(
        settings,
        port=emulator.port_path,
        speech=False,
        storage_dir=tmp_path / "games",
        resume=False,
    )


async def test_a_penalty_sets_the_emulated_clock_and_the_answer_says_so(tmp_path: Path) -> None:
    """9.5b: +3:00 to White while White's clock runs (White on the right): the
    clock's right side goes from about 5:00 to about 8:00 and keeps running, the
    next report says so, and so does the penalty's answer."""
    with BoardEmulator(tmp_path, white_on_left=False) as emulator:
        daemon = _daemon(tmp_path, emulator, "right_white")
        await daemon.start()
        try:
            board = daemon.board
            await _until(lambda: board.journal is not None and board.journal.pgn_path is not None)
            emulator.press_lever()  # White's (right) clock runs
            display = board.clock_display
            assert display is not None
            await _until(lambda: (r := display.reports.last) is not None and r.running == "white")
            before = display.reports.last
            assert before is not None and before.white <= 300
            answer = await _penalty(daemon, {"to": "white", "seconds": 180, "article": "9.5b"})
            assert answer["clock_set"] is True, answer
            said = re.fullmatch(
                r"Clock set: \+3:00 to White; White 0:0(\d):(\d\d), Black 0:05:00", answer["clock"]
            )
            assert said is not None, answer["clock"]
            assert 470 <= int(said[1]) * 60 + int(said[2]) <= 480  # 5:00 + 3:00, less a few s
            assert 470 <= emulator.clock.right <= 480 and emulator.clock.left == 300
            assert emulator.clock.running and not emulator.clock.left_to_move  # White's runs
            after = display.reports.last
            assert after is not None and after.running == "white" and 470 <= after.white <= 480
        finally:
            daemon.stop()
            await daemon.close()


async def test_a_penalty_before_the_clock_s_sides_are_known_is_set_by_hand(
    tmp_path: Path,
) -> None:
    """``clock.sides: auto`` and no move yet: whose side is White's is not known, so
    the clock is left alone and the arbiter is told to set it by hand, and why."""
    with BoardEmulator(tmp_path) as emulator:
        daemon = _daemon(tmp_path, emulator, "auto")
        await daemon.start()
        try:
            board = daemon.board
            await _until(lambda: board.journal is not None and board.journal.pgn_path is not None)
            display = board.clock_display
            assert display is not None
            await _until(lambda: display.reports.last is not None)
            answer = await _penalty(daemon, {"to": "black", "seconds": 120})
            assert answer["clock_set"] is False
            assert answer["clock"] == (
                "Set the clock by hand: +2:00 on Black's clock "
                "(which clock side is White's is not known yet: set clock.sides)"
            )
            assert emulator.clock.left == emulator.clock.right == 300  # untouched
        finally:
            daemon.stop()
            await daemon.close()


async def test_a_clock_out_of_mode_23_refuses_and_the_answer_says_by_hand(
    tmp_path: Path,
) -> None:
    """The DGT 3000 not in mode 23 answers the set-and-run with an error ack: its
    times stay, and the arbiter is told to set the clock by hand, and why."""
    with BoardEmulator(tmp_path, white_on_left=False) as emulator:
        emulator.clock_mode23 = False
        daemon = _daemon(tmp_path, emulator, "right_white")
        await daemon.start()
        try:
            board = daemon.board
            await _until(lambda: board.journal is not None and board.journal.pgn_path is not None)
            display = board.clock_display
            assert display is not None
            await _until(lambda: display.reports.last is not None)
            answer = await _penalty(daemon, {"to": "white", "seconds": 180, "article": "9.5b"})
            assert answer == {
                **answer,
                "clock_set": False,
                "clock": "Set the clock by hand: +3:00 on White's clock "
                "(the clock refused the new times: is it in mode 23?)",
            }
            assert emulator.clock.left == emulator.clock.right == 300  # untouched
        finally:
            daemon.stop()
            await daemon.close()


def test_a_bus_board_s_penalty_is_still_set_by_hand() -> None:
    """No outcome from the daemon (a bus board has no clock display): the board's
    standing reason is the answer."""
    why = "this board is on a DGT bus chain: bus mode cannot set the clock"
    assert penalty_clock(None, why, {"to": "white", "seconds": 180}) == {
        "clock": f"Set the clock by hand: +3:00 on White's clock ({why})",
        "clock_set": False,
    }
    assert penalty_clock(None, "", {"to": "white"}) == {}  # nothing said (a relay's board)


def _report(t: float, white: float, black: float, running: str | None) -> ClockUpdate:
    return ClockUpdate(t, white, black, running)  # type: ignore[arg-type]


def test_the_new_times_are_the_last_report_less_what_the_runner_spent_plus_the_penalty() -> None:
    last = _report(10.0, 300.0, 250.0, "black")
    penalty = Penalty(13.0, "white", 120.0, "7.4b")
    assert new_times(last, penalty) == {"white": 420.0, "black": 247.0}
    stopped = _report(10.0, 300.0, 250.0, None)  # a paused clock lost nothing
    assert new_times(stopped, penalty) == {"white": 420.0, "black": 250.0}


def test_a_paused_clock_is_set_paused_and_an_unknown_side_is_refused() -> None:
    penalty = Penalty(11.0, "black", 180.0, "9.5b")
    planned = frame_for(_report(10.0, 300.0, 250.0, None), penalty, "left")
    assert not isinstance(planned, str)
    frame, times = planned
    assert times == {"white": 300, "black": 430}
    assert frame == set_and_run(300, 430, None)  # White's on the left
    assert frame[-2] == 0x04  # the run byte: paused
    assert frame_for(None, penalty, "left") == "the clock has not reported its times yet"
    assert "not known" in str(frame_for(_report(10.0, 1, 1, None), penalty, None))


def test_the_penalty_goes_onto_the_sides_the_daemon_knows() -> None:
    """7.4b: Black gets two minutes; White's clock is on the right, Black's runs: the
    new times go left (Black's) and right (White's), the left side running."""
    penalty = Penalty(10.0, "black", 120.0, "7.4b")
    planned = frame_for(_report(10.0, 250.0, 200.0, "black"), penalty, "right")
    assert not isinstance(planned, str)
    frame, times = planned
    assert times == {"white": 250.0, "black": 320.0}
    assert frame == set_and_run(320, 250, "left")
    assert frame[-2] == 0x01  # the run byte: the left side runs


async def test_the_clock_must_show_the_new_times_else_it_is_set_by_hand() -> None:
    """A report a second later that still shows the old times is no success; one
    that shows the new times (the runner's second gone) is."""
    last = _report(10.0, 300.0, 250.0, "white")
    penalty = Penalty(10.0, "white", 180.0, "9.5b")
    now = [10.0]

    async def ack(frame: bytes) -> bool:
        return True

    def reports(*queued: ClockUpdate) -> Any:
        async def next_report(timeout: float) -> ClockUpdate | None:
            if not queued_list:
                now[0] += timeout
                return None
            report = queued_list.pop(0)
            now[0] = report.t
            return report

        queued_list = list(queued)
        return next_report

    stale = _report(11.0, 299.0, 250.0, "white")
    outcome = await put_on_clock(penalty, last, "right", ack, reports(stale), lambda: now[0])
    assert outcome == PenaltyOutcome(
        False, "the clock shows White 0:04:59, Black 0:04:10, not White 0:08:00, Black 0:04:10"
    )
    now[0] = 10.0
    good = _report(11.0, 479.0, 250.0, "white")
    outcome = await put_on_clock(penalty, last, "right", ack, reports(stale, good), lambda: now[0])
    assert outcome.to_answer() == {
        "clock": "Clock set: +3:00 to White; White 0:07:59, Black 0:04:10"
    }

    async def silent(frame: bytes) -> bool:
        raise TimeoutError("no ack for clock command")

    now[0] = 10.0
    outcome = await put_on_clock(penalty, last, "right", silent, reports(), lambda: now[0])
    assert outcome.to_answer() == {
        "by_hand": "the clock did not acknowledge the new times: no ack for clock command"
    }


async def test_a_report_that_came_with_the_ack_is_not_missed() -> None:
    """The clock's report right after a set-and-run arrives with its ack, before the
    task that sent it runs again: the listener keeps it (the answer does not wait a
    second for the next one)."""
    reports = ClockReports()
    listener = reports.listen()
    reports.heard(_report(1.0, 480.0, 300.0, "white"))
    report = await listener.next(0.01)
    assert report is not None and report.white == 480.0
    assert await listener.next(0.01) is None
    listener.close()
    reports.heard(_report(2.0, 479.0, 300.0, "white"))
    assert listener.queue.empty()  # closed: it hears no more
