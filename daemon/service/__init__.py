"""The service around the boards, what systemd and the process see: readiness, the
watchdog and the status line (``notify``, ``status``), signals and an orderly stop
(``lifecycle``), and the garbage collector kept out of start-up's way (``gcfreeze``).
The boards' own pipeline (``daemon.board``, ``daemon.pipeline``) knows none of it.
"""
