"""One board of the daemon: its unit (``board``), its pipeline from sensor events to
the outputs (``pipeline``), the page's view of its record (``pageview``), and two
boards bound to one game (``twoboards``)."""
