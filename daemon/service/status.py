"""Whether each board is there, told to systemd (``systemctl status``) and the page.

One status for every board of the daemon. The words differ only with the count: the
single board says what it reads ("board connected (/dev/ttyACM0)", "BOARD LOST: ...;
reconnecting"), a daemon of several says how many are read and which are not, why
("4/12 boards connected; NOT READ: 5 (no answer to SEND_CHANGES)"). The page's card
shows a game's boards: a game is connected when all its boards are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from daemon.service.notify import Notifier
from drivers.sensors import ConnectionChange

if TYPE_CHECKING:
    from daemon.boards.board import Board
    from drivers.dgt.protocol import BatteryStatus


class DaemonStatus:
    """The boards' status line and the page's connected/battery/detail flags.

    ``hub`` is read when needed: the page starts after READY."""

    def __init__(
        self, boards: dict[str, Board], notifier: Notifier, hub: Callable[[], Any]
    ) -> None:
        self.boards = boards
        self.notifier = notifier
        self._hub = hub

    def connection(self, board: Board, event: ConnectionChange) -> None:
        """A board's link came or went (a repeated "connected" changes nothing)."""
        connected = event.state == "connected"
        if board.connected is connected and event.state != "lost":
            return
        board.connected = connected
        board.detail = "" if connected else (event.detail or "no answer")
        hub = self._hub()
        if hub is not None:
            game = board.game.id
            hub.set_status(game, connected=self.game_connected(game), detail=self.detail(game))
        self.notifier.status(self.line())

    def battery(self, board: Board, battery: BatteryStatus) -> None:
        """A Bluetooth board's battery, for the page and ``/state.json``: the link asks
        at each connection and tells this when the board answers (no timer: an idle
        daemon on a Pi's budget pays for every wake-up). Before the page is up,
        ``to_page`` gives it the link's last report."""
        hub = self._hub()
        if hub is not None and battery.percent is not None:
            hub.set_status(board.game.id, battery=battery.percent)

    def to_page(self, hub: Any) -> None:
        """The page is up: every game's card as its boards are now."""
        for board in self.boards.values():
            if board.game is board:
                hub.set_status(
                    board.id,
                    connected=self.game_connected(board.id),
                    detail=self.detail(board.id),
                    battery=board.battery,
                )

    def game_connected(self, game: str) -> bool:
        return all(b.connected for b in self.boards.values() if b.game.id == game)

    def detail(self, game: str) -> str:
        """Why a game's boards are not read (empty when they are)."""
        if len(self.boards) == 1:
            return ""
        lost = [
            f"board {b.id}: {b.detail}"
            for b in self.boards.values()
            if b.game.id == game and not b.connected and b.detail
        ]
        return "; ".join(lost)

    def line(self) -> str:
        """``systemctl status``: what is read, and what is not, why."""
        if len(self.boards) == 1:
            (board,) = self.boards.values()
            if board.connected:
                return f"board connected ({getattr(board.link, 'port_path', '') or ''})"
            return f"BOARD LOST: {board.detail or 'no answer'}; reconnecting"
        ok = sum(1 for b in self.boards.values() if b.connected)
        down = [f"{b.id} ({b.detail})" for b in self.boards.values() if not b.connected]
        text = f"{ok}/{len(self.boards)} boards connected"
        return text + (f"; NOT READ: {', '.join(down)}" if down else "")
