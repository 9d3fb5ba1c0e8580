"""The daemon's side of the clock: which side is whose (``sides``), what the clock's
display shows (``display``), and a penalty set on it (``penalty``)."""
