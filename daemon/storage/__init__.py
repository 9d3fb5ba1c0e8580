"""What goes to the card: the game's journal and PGN (``journal``), the thread that
writes and fsyncs them (``diskwriter``), and the files an organiser hands in
(``handin``)."""
