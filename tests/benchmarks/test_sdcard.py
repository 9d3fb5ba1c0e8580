"""The slow card's check of docs/daemon.md's promise, "a move shown on the page is on
the card" (benchmarks/sdcard.py, issue 28): a move the page showed before an fsync of
its journal line had returned is named; one shown after is not."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.sdcard import Fsync, read_fsyncs, shown_before_on_card


def _journal(storage: Path) -> tuple[str, list[int]]:
    """Board 1's journal: a game start and two moves; the end of each move's line."""
    folder = storage / "board-1"
    folder.mkdir(parents=True)
    lines = [{"type": "game_start"}, {"type": "move", "ply": 1, "uci": "e2e4"},
             {"type": "move", "ply": 2, "uci": "e7e5"}]  # fmt: skip
    text = "".join(json.dumps(line) + "\n" for line in lines)
    path = folder / "20261204-120000-01.jsonl"
    path.write_text(text)
    ends = [len("".join(json.dumps(x) + "\n" for x in lines[: n + 1])) for n in range(3)]
    return str(path.resolve()), ends[1:]


def test_a_move_shown_before_its_line_was_fsynced_is_named(tmp_path: Path) -> None:
    journal, (first, second) = _journal(tmp_path)
    fsyncs = [Fsync(50.0, 10.0, first, journal), Fsync(80.0, 20.0, second, journal)]
    on_time = {"1": [("e2e4", 10.5), ("e7e5", 20.1)]}
    assert shown_before_on_card(tmp_path, fsyncs, on_time) == (2, [])
    # e7e5 on the page at 15.0, its line on the card only at 20.0
    early = {"1": [("e2e4", 10.5), ("e7e5", 15.0)]}
    assert shown_before_on_card(tmp_path, fsyncs, early) == (2, ["board 1 ply 2 e7e5"])
    # an fsync called before the line was written does not cover it
    short = [Fsync(50.0, 10.0, first, journal), Fsync(80.0, 12.0, first, journal)]
    assert shown_before_on_card(tmp_path, short, on_time)[1] == ["board 1 ply 2 e7e5"]
    # nor does another file's (the PGN's temporary file)
    other = [Fsync(50.0, 10.0, first, journal), Fsync(80.0, 12.0, 10**6, journal + ".pgn")]
    assert shown_before_on_card(tmp_path, other, on_time)[1] == ["board 1 ply 2 e7e5"]


def test_the_shims_notes_are_read_with_their_paths(tmp_path: Path) -> None:
    log = tmp_path / "delays.txt"
    log.write_text("31.5 1204.25 180 /tmp/a b/x.jsonl\n120.000 1205.5 0 ?\n")
    assert read_fsyncs(log) == [Fsync(31.5, 1204.25, 180, "/tmp/a b/x.jsonl"),
                                Fsync(120.0, 1205.5, 0, "?")]  # fmt: skip
    assert read_fsyncs(tmp_path / "none.txt") == []
