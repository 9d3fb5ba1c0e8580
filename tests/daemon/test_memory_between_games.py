"""What a game leaves behind goes back between games (issue 28: a tournament day's
memory grew 15 kB a game over its first 40 games). Besides glibc's free pages, a
game's reference cycles and the interpreter's free lists wait for a full garbage
collection, which a frozen daemon (``gc.freeze``) hardly ever reaches by itself."""

from __future__ import annotations

import gc
import weakref

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
