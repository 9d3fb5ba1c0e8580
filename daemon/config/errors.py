"""The one exception a bad configuration raises: where the mistake is and what was
expected, so every command can print it as one line instead of a traceback."""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration mistake, with where it is and what was expected."""

    def __init__(self, source: str, line: int | None, key: str, message: str) -> None:
        self.source = source
        self.line = line
        self.key = key
        self.message = message
        where = source if line is None else f"{source}, line {line}"
        prefix = f"{where}: {key}: " if key else f"{where}: "
        super().__init__(prefix + message)
