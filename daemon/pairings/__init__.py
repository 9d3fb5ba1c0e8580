"""A round's pairings: read from the files pairing programs write (``files``: FIDE TRF
and CSV, pure) and written into the configuration file's ``boards:`` list
(``configfile``, its comments and layout kept). ``dgt-bridge pairings`` and the
arbiter's console read and write them by the same code.
"""
