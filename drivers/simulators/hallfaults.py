"""The faults a hall of boards meets, injected into emulated boards in one place.

The hall test and the hall benchmark both play games through them, so what the suite
checks on a small hall is what the benchmark measures on a full one: a board unplugged
from the middle of a chain, a USB cable pulled, corrupted bus replies, garbage on a USB
line, and afterwards the two boards plugged back."""

from __future__ import annotations

from dataclasses import dataclass

from drivers.records import FrozenRecord
from drivers.simulators.busemulator import BusChainEmulator
from drivers.simulators.emulator import BoardEmulator

#: A stray half-message on a USB line (a field update cut short).
GARBAGE = b"\x01\x86\x00\x93"


@dataclass(eq=False, repr=False)
class HallFaults(FrozenRecord):
    """Which boards the faults hit: indexes into the chain and into the USB boards."""

    unplugged: int  # on the chain: pulled out, the boards after it stay
    corrupted: int  # on the chain: its next replies arrive with a bad checksum
    pulled: int  # a USB board whose cable is pulled
    noisy: int  # a USB board that sends garbage
    corrupt_count: int = 4

    @classmethod
    def for_hall(cls, chain_size: int, usb_count: int) -> HallFaults:
        """The middle board of the chain unplugged, the first one's replies corrupted."""
        middle = chain_size // 2 if chain_size > 2 else chain_size - 1
        return cls(middle, 0 if middle else chain_size - 1, 1 % usb_count, usb_count - 1)

    def inject(self, chain: BusChainEmulator, usb: list[BoardEmulator]) -> None:
        chain.unplug_board(self.unplugged)
        usb[self.pulled].unplug()
        chain.corrupt_next_reply(self.corrupted, self.corrupt_count)
        usb[self.noisy].inject(GARBAGE)

    def replug(self, chain: BusChainEmulator, usb: list[BoardEmulator]) -> None:
        chain.replug_board(self.unplugged)
        usb[self.pulled].replug()


# -- the rehearsal's faults, typed or given on the command line -------------------------

#: What ``dgt-bridge emulate --bus`` understands, for its ``--help`` and its ``help``.
CHAIN_FAULTS_HELP = """\
faults on the chain (on the command line as --fault 'WHAT [at SECONDS]', or typed on
standard input while it runs; boards are counted from 1 along the chain):
  unplug B         board B goes silent, as pulled out of the chain (the others go on);
                   what is moved on it meanwhile is in no change list
  replug B         board B is plugged back: it powers up with an empty change list
  corrupt B [N]    board B's next N replies (default 4) arrive with a bad checksum
  status           each board: plugged or not, replies, lost and bad commands
  help             this list
'at SECONDS' (command line only): that many seconds after the games start."""


class FaultError(ValueError):
    """A fault command that cannot be carried out, with what was expected."""


@dataclass(eq=False, repr=False)
class ChainFault(FrozenRecord):
    """One fault on a chain: ``unplug``, ``replug``, ``corrupt`` (``count`` replies) or
    ``status``/``help``; ``board`` 0-based; ``at`` seconds after the start, or None: now."""

    action: str
    board: int = -1
    count: int = 4
    at: float | None = None

    @classmethod
    def parse(cls, text: str, chain_size: int, *, timed: bool = False) -> ChainFault:
        """``unplug 3``, ``corrupt 2 6``, ``replug 3 at 90`` (``timed``: ``at`` allowed)."""
        words = text.split()
        at = None
        if len(words) >= 2 and words[-2] == "at":
            if not timed:
                raise FaultError("'at SECONDS' is for --fault; typed faults happen at once")
            try:
                at = float(words[-1])
            except ValueError:
                raise FaultError(f"'at {words[-1]}': give seconds, a number") from None
            if not at >= 0:
                raise FaultError(f"'at {words[-1]}': seconds from the start, 0 or more")
            words = words[:-2]
        if not words:
            raise FaultError("say what: unplug B, replug B, corrupt B [N], status or help")
        action = words[0].lower()
        if action in ("status", "help") and len(words) == 1:
            return cls(action, at=at)
        if action not in ("unplug", "replug", "corrupt"):
            raise FaultError(
                f"{words[0]!r} is not a fault: unplug B, replug B, corrupt B [N], status, help"
            )
        if len(words) not in ((2, 3) if action == "corrupt" else (2,)):
            usage = "corrupt B [N]" if action == "corrupt" else f"{action} B"
            raise FaultError(f"{action}: expected '{usage}'")
        board = _whole(words[1], "board")
        if not 1 <= board <= chain_size:
            raise FaultError(f"board {board}: the chain has boards 1 to {chain_size}")
        count = _whole(words[2], "count") if len(words) == 3 else 4
        if count < 1:
            raise FaultError(f"corrupt: {count} replies? give 1 or more")
        return cls(action, board - 1, count, at)

    def apply(self, chain: BusChainEmulator) -> str:
        """Carry the fault out on the chain; what happened, in words."""
        if self.action == "unplug":
            chain.unplug_board(self.board)
            return f"board {self.board + 1} unplugged"
        if self.action == "replug":
            chain.replug_board(self.board)
            return f"board {self.board + 1} plugged back"
        if self.action == "corrupt":
            chain.corrupt_next_reply(self.board, self.count)
            return f"board {self.board + 1}: the next {self.count} replies corrupted"
        if self.action == "help":
            return CHAIN_FAULTS_HELP
        return chain_status(chain)


def _whole(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise FaultError(f"{what} {text!r}: give a whole number") from None


def chain_status(chain: BusChainEmulator) -> str:
    """One line a board: its serial, plugged or not, what it answered and lost."""
    lines = []
    for number, board in enumerate(chain.boards, 1):
        state = "plugged" if board.plugged else "UNPLUGGED"
        lines.append(
            f"board {number} ({board.serial}): {state}, {board.answered} replies, "
            f"{board.lost_commands} commands lost"
        )
    lines.append(f"chain: {chain.bad_commands} commands with a bad checksum ignored")
    return "\n".join(lines)
