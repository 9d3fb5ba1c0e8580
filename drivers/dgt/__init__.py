"""The DGT e-board: its protocol codec (``protocol``, sans-I/O), the bus chain's codec
(``buscodec``) and poller (``bus``, ``buslink``), and the serial link (``link``). Its
emulators are in ``drivers.simulators``."""
