"""Value semantics for dataclasses, written once instead of generated per class.

The sensor events (``drivers.sensors``), the domain events (``daemon.game.events``), the
settings and the rules core's records are dataclasses, some 140 classes that the
commands build at their start. CPython 3.11's ``dataclass`` compiles each method it
generates separately (three for a plain class, six for a frozen one), and compiling
them was a sixth of ``replay``'s start (benchmarks/cli_startup.py). So those classes
are declared ``@dataclass(eq=False, repr=False)`` (frozen or not) on top of
``Record``, which compares, hashes and shows them exactly as the generated methods
would: by class, and by the fields in declaration order (those with
``compare=False`` or ``repr=False`` left out as there). They stay dataclasses
(``fields``, ``replace``, ``asdict`` work as before). A frozen record hashes by its
values, as a frozen dataclass does; a mutable one is hashable only if its class says so.

Immutable ones go further: ``frozen=True`` generates ``__setattr__`` and
``__delattr__`` for each class (a third of what was still compiled), so they are
plain ``@dataclass(eq=False, repr=False)`` on top of ``FrozenRecord``, whose own
``__setattr__`` lets each field be set once, by ``__init__``, and never again, and
whose ``__delattr__`` refuses: the same ``FrozenInstanceError`` as a frozen dataclass.
Those compared by identity (``eq=False``: a game tree's nodes) take ``Shown``, the
``repr`` alone.

Every dataclass of ours is one of these (tests/daemon/test_cli_imports.py checks), and
under ``-OO`` each is named as its docstring (``Shown.__init_subclass__``). The last 71
made so cut the daemon's start to READY by 6 % of its instructions for one board and
10 % for a hall (issue 28, ``benchmarks.ready_cost``).
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, fields
from typing import Any, TypeVar

_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_FIELD_SETS: dict[type, frozenset[str]] = {}
_COMPARED: dict[type, tuple[str, ...]] = {}
_SHOWN: dict[type, tuple[str, ...]] = {}
R = TypeVar("R", bound="Record")


def field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names in declaration order (ClassVars left out), cached."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


def _compared(cls: type) -> tuple[str, ...]:
    names = _COMPARED.get(cls)
    if names is None:
        names = _COMPARED[cls] = tuple(f.name for f in fields(cls) if f.compare)
    return names


def _shown(cls: type) -> tuple[str, ...]:
    names = _SHOWN.get(cls)
    if names is None:
        names = _SHOWN[cls] = tuple(f.name for f in fields(cls) if f.repr)
    return names


class Shown:
    """``repr`` of a dataclass, for its subclasses: those compared by identity
    (``eq=False``) use it alone."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A class without a docstring (every class under ``-OO``, the unit's
        ``PYTHONOPTIMIZE=2``) is given its name as one: ``dataclass`` otherwise writes
        one from ``inspect.signature``, a tenth of the daemon's start-up dataclass
        work before READY, for a text nobody reads on a Pi (issue 28)."""
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("__doc__"):
            cls.__doc__ = cls.__name__

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _shown(type(self)))
        return f"{type(self).__qualname__}({shown})"


class Record(Shown):
    """``==``, ``hash`` and ``repr`` of a dataclass, for its subclasses."""

    __slots__ = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in _compared(type(self))])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__ or not isinstance(other, Record):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        params = getattr(type(self), "__dataclass_params__", None)
        if params is not None and not params.frozen:  # as a mutable dataclass: unhashable
            raise TypeError(f"unhashable type: {type(self).__name__!r}")
        return hash(self._values())


def _field_set(cls: type) -> frozenset[str]:
    names = _FIELD_SETS.get(cls)
    if names is None:
        names = _FIELD_SETS[cls] = frozenset(field_names(cls))
    return names


class FrozenRecord(Record):
    """A record whose fields cannot change once ``__init__`` has set them."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        names = _FIELD_SETS.get(cls) or _field_set(cls)  # one lookup: every field of every record
        # In the instance dict once set; slotted, an unset slot has no value.
        if name not in names or (
            name in self.__dict__ if cls.__dictoffset__ else hasattr(self, name)
        ):
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:
        return hash(self._values())


_set = object.__setattr__


def at_time(record: R, t: float) -> R:
    """``dataclasses.replace(record, t=t)`` for a record whose ``__init__`` only sets
    its fields: a copy made field by field, without ``__init__`` and the checked
    ``__setattr__`` per field. The rules core restamps a change of a DGT bus list this
    way (issue 28: ``replace`` was a twentieth of the core's work on the real capture),
    and the clock's tracker and side mapper ask whether a reading is new by comparing
    it with the last one restamped (benchmarks/clock_readings.py)."""
    cls = type(record)
    copy = object.__new__(cls)
    for name in _FIELD_NAMES.get(cls) or field_names(cls):
        _set(copy, name, getattr(record, name))
    _set(copy, "t", t)
    return copy
