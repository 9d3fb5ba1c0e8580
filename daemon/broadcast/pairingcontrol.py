"""The console's pairings: a round's pairings file names every board at once.

``POST /control/pairings`` takes the file's text (FIDE TRF, or the CSV pairing list
Swiss-Manager and Vega export; the console reads an uploaded file or a pasted
list into it) and, with ``preview: true``, answers what it would do and changes
nothing: which board gets which players, the round, the boards of the file this
daemon does not have. Without it, each board of the file that is here is named
by the same ``players`` request the console's "Set players and round" sends, so on
a daemon it goes through the rules core (a ``players`` event: the page, the live
PGN, MQTT and the journal's PGN on disk), and on a relay the display takes it.

The file is read by ``daemon.pairings.files``, as ``dgt-bridge pairings`` reads it:
the console and the command cannot disagree about a file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from daemon.broadcast.controls import ControlError, build_request
from daemon.broadcast.hub import Hub
from daemon.pairings.configfile import board_id
from daemon.pairings.files import PairingsError, RoundPairings, read_pairings
from drivers.records import FrozenRecord
from drivers.sensors import Request


@dataclass(eq=False, repr=False)
class PairingsPlan(FrozenRecord):
    """What a pairings file does on this daemon: the ``players`` request of each
    board of the file that is here, and what is left out."""

    read: RoundPairings
    requests: list[tuple[str, Request]]  # (board id, its players request)
    missing: list[str]  # boards of the file this daemon does not have

    def to_dict(self) -> dict[str, Any]:
        named = len(self.requests)
        title = f"round {self.read.round}" + (f" of {self.read.event}" if self.read.event else "")
        summary = f"names {named} board{'s' * (named != 1)}, {title} ({self.read.kind})"
        if self.missing:
            summary += f"; not boards here: {', '.join(self.missing)}"
        return {
            "action": "pairings",
            "summary": summary,
            "kind": self.read.kind,
            "round": self.read.round,
            "event": self.read.event,
            "boards": [
                {"board": board, "white": r.args.get("white", ""), "black": r.args.get("black", "")}
                for board, r in self.requests
            ],
            "missing": list(self.missing),
            "byes": list(self.read.byes),
        }


def plan(hub: Hub, args: dict[str, Any], t: float) -> PairingsPlan:
    """The checked pairings control (``build_request`` checked its fields): the
    file read, each board's request made; ``ControlError`` naming the line of a
    file that cannot be read, or when no board of the file is here."""
    try:
        read = read_pairings(args["file"], round_number=args.get("round"))
    except PairingsError as error:
        raise ControlError(f"pairings: {error}", "file") from None
    first = int(args.get("first_board", 1))
    requests: list[tuple[str, Request]] = []
    missing: list[str] = []
    for pairing in read.pairings:
        board = board_id(pairing, first)
        if board not in hub.boards:
            missing.append(board)
            continue
        try:  # the names as the players control takes them (length, printable)
            request = build_request(
                "players", {"white": pairing.white, "black": pairing.black, "round": read.round}, t
            )
        except ControlError as error:
            raise ControlError(f"pairings: board {pairing.board}: {error}", "file") from None
        requests.append((board, request))
    if not requests:
        raise ControlError(
            f"pairings: none of the file's boards ({', '.join(missing)}) is a board here "
            f"(boards: {', '.join(hub.board_ids()) or 'none'}); first_board shifts the numbers",
            "first_board",
            409,
        )
    return PairingsPlan(read, requests, missing)


def apply_display(hub: Hub, requests: list[tuple[str, Request]],
                  display: Callable[[Hub, str, dict[str, Any]], Any]) -> None:  # fmt: skip
    """Where no rules core listens (a relay): the display names each board itself."""
    for board, request in requests:
        display(hub, board, request.args)
