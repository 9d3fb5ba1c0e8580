"""What a game leaves behind goes back between games (issue 28: a tournament day's
memory grew 15 kB a game over its first 40 games). Besides glibc's free pages, a
game's reference cycles and the interpreter's free lists wait for a full garbage
collection, which a frozen daemon (``gc.freeze``) hardly ever reaches by itself."""

from __future__ import annotations

import gc
import weakref

import chess

from daemon.boards.outputs import MemoryBetweenGames
from daemon.service.memory import release_freed_memory


class Node:
    """Part of a cycle: it and its partner refer to each other."""

    partner: Node | None = None


def test_a_game_s_cycles_are_freed_when_the_game_ends() -> None:
    first, second = Node(), Node()
    first.partner, second.partner = second, first
    left = weakref.ref(first)
    gc.disable()  # as a frozen daemon between its rare collections
    try:
        del first, second
        assert left() is not None  # reference counting alone keeps a cycle
        release_freed_memory()  # what the board calls at a game's end and start
        assert left() is None
    finally:
        gc.enable()


# -- when: once no board's game is under way (MemoryBetweenGames) ----------------------


def _games(longest_wait: float = 600.0) -> tuple[list[str], list, MemoryBetweenGames]:
    released: list[str] = []
    soon: list = []
    games = MemoryBetweenGames(
        release=lambda: released.append("released"),
        call_soon=soon.append,
        longest_wait=longest_wait,
    )
    return released, soon, games


def _move(t: float, ply: int = 1):
    from daemon.game.events import Move

    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    return Move(t, ply, "e2e4", "e4", fen, "white", "e2 e4")


def _start(t: float):
    from daemon.game.events import GameStart

    return GameStart(t, chess.STARTING_FEN)


def _end(t: float):
    from daemon.game.events import GameEnd

    return GameEnd(t, "1-0", "checkmate")


def _run(soon: list) -> None:
    while soon:
        soon.pop(0)()


def test_a_single_board_releases_after_each_game_not_when_the_next_begins() -> None:
    released, soon, games = _games()
    board = games.for_board("1")
    board.receive(_start(0.0))  # the daemon's first game: nothing to give back
    _run(soon)
    assert released == []
    board.receive(_move(1.0))
    board.receive(_end(2.0))
    _run(soon)
    assert released == ["released"]
    board.receive(_start(3.0))  # the next game: its start frees nothing more
    _run(soon)
    assert released == ["released"]


def test_a_hall_releases_when_its_last_game_under_way_is_left() -> None:
    released, soon, games = _games()
    boards = [games.for_board(name) for name in ("1", "2", "3")]
    for board in boards:
        board.receive(_start(0.0))
        board.receive(_move(1.0))
    boards[0].receive(_end(10.0))
    boards[1].receive(_start(11.0))  # set up again mid-game: that game is left too
    _run(soon)
    assert released == [], "a release while board 3's game was under way"
    boards[2].receive(_end(12.0))
    _run(soon)
    assert released == ["released"]


def test_games_left_in_one_turn_of_the_loop_make_one_release() -> None:
    released, soon, games = _games()
    boards = [games.for_board(name) for name in ("1", "2")]
    for board in boards:
        board.receive(_move(1.0))
    boards[0].receive(_end(5.0))
    boards[1].receive(_end(5.0))
    _run(soon)
    assert released == ["released"]


def test_a_hall_never_between_games_still_releases_after_the_longest_wait() -> None:
    released, soon, games = _games(longest_wait=600.0)
    one, two = games.for_board("1"), games.for_board("2")
    one.receive(_move(0.0))
    two.receive(_move(0.0))
    one.receive(_end(100.0))  # due from now; board 2 plays on
    one.receive(_start(101.0))
    one.receive(_move(102.0))
    one.receive(_end(650.0))
    _run(soon)
    assert released == []
    one.receive(_start(651.0))
    one.receive(_move(652.0))
    one.receive(_end(701.0))  # 601 s after the first game left
    _run(soon)
    assert released == ["released"]


def test_without_an_event_loop_the_release_is_made_at_once() -> None:
    released: list[str] = []
    games = MemoryBetweenGames(release=lambda: released.append("released"))
    board = games.for_board("1")
    board.receive(_move(1.0))
    board.receive(_end(2.0))
    assert released == ["released"]
