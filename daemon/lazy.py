"""Package attributes imported on first use (PEP 562), so that importing a light part
of a package (its settings) does not import its heavy parts (aiohttp, asyncio)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging


def lazy_attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``homes`` maps each name to the
    submodule that defines it."""

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{homes[name]}"), name)

    return __getattr__


def logger(name: str = "dgt-bridge") -> logging.Logger:
    """The daemon's logger, ``logging`` imported on the first message: a module that
    only logs failures (the pipeline, the composition root) need not import it at
    start, and ``replay`` logs nothing (logging with threading and traceback is some
    4 ms of its start, benchmarks/cli_startup.py)."""
    import logging

    return logging.getLogger(name)
