"""A move whose phrase a restart cut is said again after "game resumed"
(``daemon.speech.restart``): the daemon killed between a move's journal line and the end
of its phrase came back with the move in the game and the blind player never told it
(found by ``benchmarks.pihall --restart-at``: the move under way at the kill was never
heard, and the player's next phrase was the moves made while the daemon was down)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from daemon.app import Daemon
from daemon.config import load_text
from daemon.speech.restart import MOST_SAID_AGAIN, unheard_moves
from drivers.simulators.emulator import BoardEmulator
from tests.daemon.test_one_daemon import _until


def move(ply: int, uci: str = "e2e4") -> dict[str, Any]:
    return {"type": "move", "ply": ply, "uci": uci, "speech": f"move {ply}"}


def heard(*plies: int, board: str | None = None, output: str = "") -> dict[str, Any]:
    line: dict[str, Any] = {"type": "speech", "outcome": "heard", "kind": "move",
                            "plies": list(plies)}  # fmt: skip
    if board is not None:
        line["board"] = board
    if output:
        line["output"] = output
    return line


START = [{"type": "game_start"}, {"type": "speech", "outcome": "heard", "kind": "important"}]


def plies(events: list[dict[str, Any]]) -> list[int]:
    return [e["ply"] for e in events]


def test_the_move_journalled_but_not_heard_is_said_again() -> None:
    events = [*START, move(1), heard(1), move(2), heard(2), move(3)]
    assert plies(unheard_moves(events)) == [3]


def test_every_move_heard_nothing_is_said_again() -> None:
    assert unheard_moves([*START, move(1), heard(1), move(2), heard(2)]) == []


def test_a_phrase_cut_or_dropped_is_not_heard() -> None:
    cut = {**heard(2), "outcome": "cut"}
    assert plies(unheard_moves([*START, move(1), heard(1), move(2), cut])) == [2]


def test_at_most_the_phrase_under_way_and_the_one_waiting_for_it() -> None:
    events = [*START, move(1), heard(1), move(2), move(3), move(4), move(5)]
    assert plies(unheard_moves(events)) == [4, 5][-MOST_SAID_AGAIN:]


def test_two_moves_heard_in_one_phrase_count_both() -> None:
    events = [*START, move(1), move(2), heard(1, 2), move(3)]
    assert plies(unheard_moves(events)) == [3]


def test_a_move_taken_back_is_not_said_again() -> None:
    events = [*START, move(1), heard(1), move(2), {"type": "takeback", "ply": 2}]
    assert unheard_moves(events) == []
    events += [move(2, "d2d4")]
    assert [e["uci"] for e in unheard_moves(events)] == ["d2d4"]


def test_no_earphone_heard_anything_in_this_game_nothing_could_be_cut() -> None:
    assert unheard_moves([{"type": "game_start"}, move(1), move(2)]) == []


def test_a_bound_board_reads_its_own_earphone_s_lines() -> None:
    """Appendix E.1: the second board's player hears the same game; his earphone's
    lines name his board."""
    events = [*START, heard(board="b2"), move(1), heard(1), heard(1, board="b2"), move(2),
              heard(2)]  # fmt: skip
    assert unheard_moves(events) == []
    assert plies(unheard_moves(events, "b2")) == [2]


def test_the_earphone_heard_least_decides_the_other_hears_a_repeat() -> None:
    events = [{"type": "game_start"}, move(1), heard(1, output="white"),
              heard(1, output="black"), move(2), heard(2, output="white")]  # fmt: skip
    assert plies(unheard_moves(events)) == [2]


# -- through the daemon: killed with a move's phrase unheard -------------------------------

HALL = (
    "rules:\n  settle_time: 0.3\n"
    "clock:\n  device: none\n"
    "broadcast:\n  enabled: false\n"
    'boards:\n  - {{id: "5", port: "{port}", speak: true}}\n'
    "speech:\n  engine: text\n"
)


@pytest.mark.parametrize("killed_before_heard", [True, False])
async def test_after_a_restart_the_player_hears_the_move_whose_phrase_the_kill_cut(
    tmp_path: Path, killed_before_heard: bool
) -> None:
    games = tmp_path / "games"

    def journal() -> tuple[Path, list[dict[str, Any]]]:
        path = sorted(games.glob("board-5/*.jsonl"))[-1]
        return path, [json.loads(x) for x in path.read_text().splitlines() if x]

    with BoardEmulator(tmp_path) as emulator:
        settings = load_text(HALL.format(port=emulator.port_path), "hall.yaml", environ={})
        first = Daemon(settings, storage_dir=games, resume=False, speech_text=io.StringIO())
        await first.start()
        try:
            assert await _until(lambda: bool(sorted(games.glob("board-5/*.jsonl"))))
            emulator.set_square("e2", None)
            await asyncio.sleep(0.05)
            emulator.set_square("e4", "P")
            assert await _until(lambda: any(e.get("plies") == [1] for e in journal()[1]))
        finally:
            first.stop()
            await first.close()
        path, lines = journal()
        said = next(e["speech"] for e in lines if e["type"] == "move")
        if killed_before_heard:  # the kill came before the phrase's end was journalled
            kept = [x for x in path.read_text().splitlines() if '"plies":[1]' not in x]
            path.write_text("\n".join(kept) + "\n")

        spoken = io.StringIO()
        again = Daemon(settings, storage_dir=games, resume=True, speech_text=spoken)
        await again.start()
        try:
            assert await _until(lambda: "fortgesetzt" in spoken.getvalue())
            await asyncio.sleep(1.0)  # what follows "game resumed"
        finally:
            again.stop()
            await again.close()
    after = spoken.getvalue().split("fortgesetzt", 1)[1]
    assert (said in after) == killed_before_heard, spoken.getvalue()
