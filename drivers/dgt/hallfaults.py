"""The faults a hall of boards meets, injected into emulated boards in one place.

The hall test and the hall benchmark both play games through them, so what the suite
checks on a small hall is what the benchmark measures on a full one: a board unplugged
from the middle of a chain, a USB cable pulled, corrupted bus replies, garbage on a USB
line, and afterwards the two boards plugged back."""

from __future__ import annotations

from dataclasses import dataclass

from drivers.dgt.busemulator import BusChainEmulator
from drivers.dgt.emulator import BoardEmulator

#: A stray half-message on a USB line (a field update cut short).
GARBAGE = b"\x01\x86\x00\x93"


@dataclass(frozen=True)
class HallFaults:
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
