"""The service around the boards, what systemd and the process see: readiness, the
watchdog and the status line (``notify``, ``status``), signals and an orderly stop
(``lifecycle``), the garbage collector kept out of start-up's way (``gcfreeze``) and
freed memory handed back to the system between games (``memory``).
"""
