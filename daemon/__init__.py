"""dgt-bridge's daemon: the rules core and the outputs that follow it."""

__version__ = "0.1.0"
