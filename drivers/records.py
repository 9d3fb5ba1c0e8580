"""Value semantics for the frozen event dataclasses, written once instead of per class.

The sensor events (``drivers.sensors``) and the domain events (``daemon.events``) are
frozen dataclasses, 25 classes that every command builds at its start. CPython 3.11's
``dataclass`` compiles each method it generates separately, six for a frozen class
with ``eq`` and ``repr``; ``__eq__``, ``__hash__`` and ``__repr__`` were half of that,
about 10 ms of ``replay``'s start (benchmarks/cli_startup.py). So those classes are
declared ``@dataclass(frozen=True, eq=False, repr=False)`` on top of ``Record``, which
compares, hashes and shows them exactly as the generated methods would: by class and
by the fields in declaration order. They stay dataclasses (``fields``, ``replace``,
``asdict`` work as before).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names in declaration order (ClassVars left out), cached."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


class Record:
    """``==``, ``hash`` and ``repr`` of a frozen dataclass, for its subclasses."""

    __slots__ = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in field_names(type(self))])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__ or not isinstance(other, Record):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in field_names(type(self)))
        return f"{type(self).__qualname__}({shown})"
