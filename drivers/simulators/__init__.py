"""What stands in for the hardware and the players, shipped so that every command and
test runs without a board: the virtual DGT board on a pseudo-terminal (``emulator``)
and a bus chain of them (``busemulator``, with its faults, ``hallfaults``), the hands
that make a game's sensor log (``handling``, its cases ``handling_cases``) and the
real games they play, with irregularities made on purpose (``gamelogs``).

Nothing here decides chess: they only make what a board would send. The drivers that
read real hardware are beside them (``drivers.dgt``, ``drivers.clock``).
"""
