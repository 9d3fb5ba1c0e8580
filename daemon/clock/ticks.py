"""Which clock readings tell a page's viewers something their own count does not.

The board's clock is read every second or two, and every reading of a running clock
differs from the one before: a ``clock`` event each time, for every board. The page
(the daemon's and the relay's) counts the running side down by itself between events
(``clockNow`` in ``daemon.broadcast.page``), so a reading that shows what that count
already shows tells a viewer nothing, yet in a long think each board's clock was a
message a second to every viewer: 24 boards and 100 viewers, 2,400 writes a second on
a Pi's one slow core shared with the bus's polls (issue 28). At blitz pace most
readings are presses and the reading after one (the increment), which are news: the
Pi 4 hall's viewers were sent 2,413 messages each before, 2,381 after.

:class:`ClockTicks` lets a reading through when it is news: the side running
changed (a press, a pause, a start), the waiting side's time changed (an increment,
the arbiter's correction), the running side is more than :data:`TOLERANCE` from
where the count from the last reading shown has it (a clock set, a jump), or
:data:`RESYNC` has passed since the last one shown (``daemon.broadcast.hub``). The
journal, the feed and MQTT keep every reading (a relay's newcomer must read a fresh
clock); the page's ``/state.json`` and a newcomer's snapshot read the newest.
"""

from __future__ import annotations

from typing import Any

#: How far (s) the running side may be from the count and still be foreseen: the
#: clock reports whole seconds and its report lags its display by up to 1 s.
TOLERANCE = 1.0

#: A reading is shown at least this often (s), whatever the count says.
RESYNC = 10.0


class ClockTicks:
    """One board's last clock reading shown, and whether the next one is news."""

    def __init__(self) -> None:
        self._shown: tuple[float, float, float, str | None] | None = None

    def is_news(self, event: dict[str, Any]) -> bool:
        """Whether feed event ``event`` is worth showing (anything but a ``clock``
        event is); a clock event that is news becomes the one counted from."""
        if event.get("type") != "clock":
            return True
        try:
            t, white, black = float(event["t"]), float(event["white"]), float(event["black"])
        except (KeyError, TypeError, ValueError):
            return True
        running = event.get("running")
        reading = (t, white, black, running if isinstance(running, str) else None)
        if not self._foreseen(reading):
            self._shown = reading
            return True
        return False

    def _foreseen(self, reading: tuple[float, float, float, str | None]) -> bool:
        shown = self._shown
        if shown is None:
            return False
        t0, white0, black0, running0 = shown
        t, white, black, running = reading
        if running != running0 or running not in ("white", "black") or t - t0 >= RESYNC:
            return False
        elapsed = t - t0
        if running == "white":
            return black == black0 and abs(white - (white0 - elapsed)) <= TOLERANCE
        return white == white0 and abs(black - (black0 - elapsed)) <= TOLERANCE
