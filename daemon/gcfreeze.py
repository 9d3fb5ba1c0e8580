"""Start-up's objects out of the garbage collector's way (issue 19: press -> move).

A full (generation 2) collection walks every object the interpreter tracks; after
the daemon's start that is some 35,000 (modules, classes, functions, the
configuration), about 8 ms of CPU on a desktop core and so 100-150 ms on a Pi Zero
2 W's budget: the one slow move of 30 in a game (press -> ``move`` event 158 ms
against 50). They live as long as the process, so once the daemon is ready they
are moved to the permanent generation (``gc.freeze``): later collections walk only
what was made since (a game's state), and nothing is lost but the collection of
cycles among start-up objects, which do not become garbage.
"""

from __future__ import annotations

import gc


def freeze_startup() -> None:
    """Collect once (start-up's own garbage), then freeze what is left; only the
    first time in a process (a test suite starts many daemons: each game's objects
    frozen by the next would never be collected)."""
    if gc.get_freeze_count():
        return
    gc.collect()
    gc.freeze()
