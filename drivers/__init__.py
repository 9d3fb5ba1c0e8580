"""Hardware and protocol: the DGT codec, the serial link, clocks, the board emulator.

No chess rules live here: drivers report what the sensors saw.
"""
