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

import contextlib
import gc

from daemon.files import codecache

_frozen_after_start = False


class Building:
    """While a command imports and builds, no garbage collection: what it makes then
    lives as long as the command, and collecting it over and over was ~2 % of a
    replay's instructions (benchmarks/cli_startup.py). When the building is done (the
    block left, or ``done()`` earlier, once what lasts is made), collection again,
    what was built set aside (gc.freeze) so that later collections do not walk it.
    And while it builds, the dataclasses it makes take their code from the cache,
    compiled at an earlier start (``daemon.files.codecache``: a tenth of the start to
    READY); what it had to compile is kept when the building is done.

    One context manager rather than a pair of calls, so that no path out of the
    build (an error, an early return) leaves the collector off."""

    def __init__(self) -> None:
        self._code = contextlib.ExitStack()

    def __enter__(self) -> Building:
        gc.disable()
        self._code.enter_context(codecache.kept())
        return self

    def __exit__(self, *exc: object) -> None:
        self.done()

    def done(self) -> None:
        """The build is over: freeze what it made and collect again (once), and keep
        the dataclasses' code it compiled."""
        self._code.close()
        if not gc.isenabled():
            gc.freeze()
            gc.enable()


def building() -> Building:
    """``with building():`` around a command's imports and construction."""
    return Building()


def freeze_startup() -> None:
    """Once the daemon is up (the speech and the page imported after READY too):
    freeze what start-up made. Only the first time in a process (a test suite starts
    many daemons: each game's objects frozen by the next would never be collected).
    Its own flag, not ``gc.get_freeze_count()``: ``building()`` has frozen what came
    before READY already, and the page's objects, made after it, would then never be
    frozen.

    No collection first: it walked the ~29,000 objects of a hall's start to find 0-5
    unreachable ones, 6-7 ms of CPU on a desktop core in one turn of the loop, and so
    a stall of 50 ms at a Pi 4's budget and 140 ms at a Zero 2 W's, at the moment a
    daemon restarted in mid-round reads its boards again (issue 28). The
    few objects it would have freed stay, frozen (``gc.freeze`` itself only splices
    the collector's lists)."""
    global _frozen_after_start
    if _frozen_after_start:
        return
    _frozen_after_start = True
    gc.freeze()
