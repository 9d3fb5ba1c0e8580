"""The DGT e-board: its protocol codec (sans-I/O), serial link and emulator."""
