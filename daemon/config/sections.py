"""The sections of the configuration file, as typed dataclasses: the daemon's own
(``board``, ``game``, ``storage``, ``boards``) here, and the parts' own (``clock``,
``rules``, ``speech``, ``broadcast``) where each part keeps its settings, so the file
and the code cannot drift apart: a field added there is a key accepted here.

The parts' classes are imported when a file is read, not when this module is: a part
that is missing or broken names itself instead of breaking every command.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from drivers.records import Record

if TYPE_CHECKING:
    from daemon.broadcast.settings import BroadcastSettings
    from daemon.rules.settings import RulesSettings
    from daemon.speech.settings import SpeechSettings
    from drivers.clock.settings import ClockSettings

#: Field metadata: the loader binds this field itself once the whole file is read
#: (a board's ``clock:`` and ``speech:`` keys over the sections' own).
BOUND_LATER = "bound_later"

#: Board ids appear in URLs and MQTT topics (the broadcast hub's own rule,
#: ``daemon.broadcast.hub.BOARD_ID``, which a test keeps equal), here so that reading
#: a file does not import the web side.
BOARD_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


@dataclass(eq=False, repr=False)
class BoardSettings(Record):
    """The DGT e-board."""

    port: str = "auto"
    """Serial port of the board (``/dev/dgt-board``, ``/dev/ttyACM0``, ``/dev/rfcomm0``),
    or ``auto`` to find a DGT board by its USB vendor id and by probing."""
    orientation: Literal["auto", "normal", "flipped"] = "auto"
    """How the board stands: ``auto`` recognises a board turned round from the start
    position (7.1); ``normal``/``flipped`` are for displays that cannot see a start."""


@dataclass(eq=False, repr=False)
class GameSettings(Record):
    """The players of the single board (PGN White and Black). ``event``, ``site`` and
    ``round`` are deprecated: ``broadcast:`` names them (``daemon.config.loading``,
    ``one_place_for_the_tournament``)."""

    event: str = "?"
    site: str = "?"
    round: str = "?"
    white: str = "?"
    black: str = "?"


@dataclass(eq=False, repr=False)
class StorageSettings(Record):
    """Where journals and PGN files go."""

    directory: str = ""
    """Directory of the per-game journals and PGN files. Empty: ``$STATE_DIRECTORY``
    (systemd's ``StateDirectory=``, /var/lib/dgt-bridge), else
    ``$XDG_DATA_HOME/dgt-bridge`` (~/.local/share/dgt-bridge)."""
    fsync: bool = True
    """fsync the journal after every move (a power cut loses no move). Only for tests
    or a RAM disk may this be false."""
    pgn_every: float = 0.0
    """Seconds between two rewrites of a game's PGN file during the game (0: after
    every move). The journal beside it always has every move; the PGN is written
    whole at the game's end and at shutdown. A hall of many boards on a small Pi: 10
    (rebuilding each game's PGN at every move was most of the CPU, issue 19)."""

    def resolved_directory(self) -> Path:
        if self.directory:
            return Path(self.directory).expanduser()
        state = os.environ.get("STATE_DIRECTORY")
        if state:
            return Path(state.split(":")[0])
        data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        return Path(data_home) / "dgt-bridge"


@dataclass(eq=False, repr=False)
class BoardEntry(Record):
    """One board of a daemon that reads several (the ``boards:`` list).

    A board is on a USB/serial port of its own (``port``) or on a chain of boards in
    DGT bus mode (``bus_port`` and the board's serial number ``bus_serial``, which is
    its bus address). ``clock`` and ``speech`` hold the keys of those sections this
    board has differently (the rest as the sections say); they are bound to the
    parts' own settings when the file is read."""

    id: str = ""
    port: str = ""
    bus_port: str = ""
    bus_serial: str = ""
    label: str = ""
    white: str = "?"
    black: str = "?"
    orientation: Literal["auto", "normal", "flipped"] = "auto"
    speak: bool = False
    """Speak this board's game (a hall's boards are silent unless a player needs it)."""
    clock: ClockSettings | None = field(default=None, metadata={BOUND_LATER: True})
    speech: SpeechSettings | None = field(default=None, metadata={BOUND_LATER: True})
    journal: str = ""
    """This board's journal directory (empty: ``<storage.directory>/board-<id>``)."""
    same_game_as: str = ""
    """Two boards, one game (Appendix E.1): the id of the board whose game this board
    repeats for a blind player."""
    own_side: Literal["", "white", "black"] = ""
    """Whose board this is in a two-board game: his moves are read here."""
    diverge_after: float = 15.0
    """Seconds the two boards of one game may disagree (a move being repeated) before
    ``boards_diverged`` is reported (E.2.7)."""

    def __post_init__(self) -> None:
        if not BOARD_ID.match(self.id):
            raise ValueError(f"id {self.id!r}: 1-32 letters, digits, '-' or '_'")
        if bool(self.port) == bool(self.bus_port):
            raise ValueError("give a board either port or bus_port (with bus_serial)")
        if self.bus_port and not self.bus_serial.isdigit():
            raise ValueError("bus_serial: the board's serial number (digits) on bus_port")
        if self.same_game_as and not self.own_side:
            raise ValueError("same_game_as needs own_side: whose moves are read on this board")
        if not self.diverge_after > 0:
            raise ValueError("diverge_after must be positive")


#: Section name -> (module, class) of the parts that own their settings.
PART_SECTIONS = {
    "clock": ("drivers.clock.settings", "ClockSettings"),
    "rules": ("daemon.rules.settings", "RulesSettings"),
    "speech": ("daemon.speech.settings", "SpeechSettings"),
    "broadcast": ("daemon.broadcast.settings", "BroadcastSettings"),
}


def part_settings_class(section: str) -> type | None:
    """A part's own settings dataclass, imported lazily so a part that is missing or
    broken names itself instead of breaking every command; None when unavailable."""
    module_name, class_name = PART_SECTIONS[section]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return getattr(module, class_name, None)


def part_classes() -> dict[str, type]:
    """The parts' settings classes by class name, those this installation has (the
    names the sections' annotations use, to evaluate them)."""
    found = (part_settings_class(name) for name in PART_SECTIONS)
    return {cls.__name__: cls for cls in found if cls is not None}


def section_types() -> dict[str, Any]:
    """Section name -> settings dataclass (None: that part's settings are unavailable)."""
    parts = {name: part_settings_class(name) for name in PART_SECTIONS}
    return {
        "board": BoardSettings,
        "clock": parts["clock"],
        "rules": parts["rules"],
        "speech": parts["speech"],
        "broadcast": parts["broadcast"],
        "game": GameSettings,
        "storage": StorageSettings,
        "boards": list[BoardEntry],
    }


def _part_default(section: str) -> Callable[[], Any]:
    """A part's settings with their defaults (None where this installation lacks it)."""

    def make() -> Any:
        cls = part_settings_class(section)
        return cls() if cls is not None else None

    return make


@dataclass(eq=False, repr=False)
class Settings(Record):
    """Everything the daemon reads from its configuration file."""

    board: BoardSettings = field(default_factory=BoardSettings)
    clock: ClockSettings = field(default_factory=_part_default("clock"))
    rules: RulesSettings = field(default_factory=_part_default("rules"))
    speech: SpeechSettings = field(default_factory=_part_default("speech"))
    broadcast: BroadcastSettings = field(default_factory=_part_default("broadcast"))
    game: GameSettings = field(default_factory=GameSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    boards: list[BoardEntry] = field(default_factory=list)
    source: str = "<defaults>"
    #: what the file says that still works but should be written otherwise (a
    #: deprecated key); ``run`` logs them, ``check-config`` prints them
    warnings: list[str] = field(default_factory=list, compare=False, repr=False)
    #: each board's key (``broadcast.mqtt.board_key_file``), read once as the
    #: configuration loads (its check), for the board's MQTT publisher to sign with
    board_keys: dict[str, str] = field(default_factory=dict, compare=False, repr=False)


def board_entries(
    settings: Settings, *, port: str | None = None, board_id: str | None = None
) -> list[BoardEntry]:
    """The boards a daemon reads, as one list: ``boards:``, or ``board:`` read as a
    list of one (its id the first of ``broadcast.boards``, else "1"; ``port``:
    ``--port``). The single board speaks; a hall's boards only when asked."""
    if settings.boards:
        if port:
            raise ValueError(
                "--port reads one board; the configuration lists boards: (give each its port there)"
            )
        return list(settings.boards)
    cards = list(getattr(settings.broadcast, "boards", None) or [])
    card = next((c for c in cards if c.id == board_id), None) if board_id else None
    card = card or (cards[0] if cards and not board_id else None)
    return [
        BoardEntry(
            id=board_id or (card.id if card is not None else "1"),
            port=port or settings.board.port or "auto",
            orientation=settings.board.orientation,
            label=card.label if card is not None else "",
            speak=True,
        )
    ]
