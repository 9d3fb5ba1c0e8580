"""A game as the feed tells it: the typed events (``events``), the one record each
board's pipeline folds them into (``record``), and their words for people
(``formatting``, ``resultsignal``)."""
