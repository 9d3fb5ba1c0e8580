"""One log line per cause per interval, with a count (simulated time)."""

from __future__ import annotations

import logging

from daemon.broadcast.logthrottle import LogThrottle, ThrottleFilter


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_a_flood_of_one_cause_is_one_line_then_a_count(monkeypatch):
    import daemon.broadcast.logthrottle as module

    now = [0.0]
    throttle = LogThrottle(interval=60.0, clock=lambda: now[0])
    monkeypatch.setattr(module, "THROTTLE", throttle)
    logger = logging.getLogger("test.flood")
    lines = Lines()
    logger.addHandler(lines)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        for i in range(1000):
            module.throttled(logger, "refused", logging.WARNING, "refused %d", i)
            module.throttled(logger, "other", logging.WARNING, "other cause")
        assert lines.lines == ["refused 0", "other cause"]
        now[0] = 61.0
        throttle.flush()  # nothing more came: the counts are told anyway
        assert lines.lines[2:] == [
            "refused 0 (999 more such lines in 61 s)",
            "other cause (999 more such lines in 61 s)",
        ]
        now[0] = 200.0
        module.throttled(logger, "refused", logging.WARNING, "refused again")
        assert lines.lines[-1] == "refused again"
    finally:
        logger.removeHandler(lines)


def test_a_library_s_lines_are_throttled_by_their_template(monkeypatch):
    import daemon.broadcast.logthrottle as module

    now = [0.0]
    monkeypatch.setattr(module, "THROTTLE", LogThrottle(interval=60.0, clock=lambda: now[0]))
    logger = logging.getLogger("test.library")
    lines = Lines()
    logger.addHandler(lines)
    logger.addFilter(ThrottleFilter())
    logger.propagate = False
    try:
        for i in range(500):
            try:
                raise ValueError(i)
            except ValueError:
                logger.exception("Error handling request from %s", f"10.0.0.{i % 200}")
        now[0] = 61.0
        logger.error("Error handling request from %s", "10.0.0.1")
        assert lines.lines == [
            "Error handling request from 10.0.0.0",
            "Error handling request from 10.0.0.1 (and 499 more such lines)",
        ]
    finally:
        logger.removeHandler(lines)
