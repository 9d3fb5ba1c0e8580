"""Chess clocks: the DGT XL / DGT 3000 through the board, and USB clocks."""
