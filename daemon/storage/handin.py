"""The files an organiser hands in: each finished game named by round, board and
players, and one round PGN holding every game of the round in board order.

The journal keeps each game as ``<board dir>/<start>-<nn>.jsonl`` with its live PGN
beside it (``<start>-<nn>.pgn``): named by the game's start time only, so that name
never changes while the game goes on, whenever the players' names arrive (the
pairings before the round, or the arbiter typing them at move 20). What is handed in
is written here, under ``<storage>/hand-in/<event>/``, once a game has ended:

- ``round-3-board-07-Carlsen-Nepomniachtchi.pgn``: one finished game, named from its
  headers as they stand at its end (the surname before a comma, letters folded to
  ASCII where they can be, anything else a ``-``; an unknown player is ``NN``; a
  board id of digits two wide, so the files sort by board). A second finished game
  on the same board in the same round (an Armageddon) is ``...-2.pgn``, by start time.
  Names corrected after the end rename the file: the old one is removed, since the
  directory is the daemon's own.
- ``round-3.pgn``: every game of the round in board order (the daemon's boards as
  configured), written when the round is over, that is when no board is playing a
  game of it, and again whenever a game of it changes later (a correction, a
  result, names).

A game belongs to its round by its Event and Round tags. The round is over when no
board's current game is one of it still to be finished: a game with moves and no
result, or one not begun whose players are named. So the empty game a board starts
when its pieces are set up again after its game does not hold the round open, nor
does a board nobody plays on (no names); a board never read at all does not either.
Only finished games are handed in: a game left unfinished that is no longer its
board's current one (a new game started over it) is not.

The work runs as one job on the daemon's disk writer (``daemon.storage.diskwriter``), off
the event loop: the loop only keeps each game's headers, and a finished game's PGN
text, and hands a snapshot to the job. The job reads the PGN files already on disk
once (the games of the round before a restart), writes only the files that changed,
and never raises: a failure is logged and the next job tries again.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.storage.diskwriter import DiskJob, write_atomically
from daemon.storage.journal import PGN_TYPES
from drivers.records import FrozenRecord

if TYPE_CHECKING:
    from daemon.game.events import DomainEvent
    from daemon.storage.diskwriter import DiskWriter
    from daemon.storage.journal import Journal

log = logging.getLogger(__name__)

#: The results that end a game (PGN's; "*" is a game going on).
FINISHED = frozenset({"1-0", "0-1", "1/2-1/2"})

#: The folder under the storage directory that holds what is handed in.
HAND_IN = "hand-in"

#: Latin letters that Unicode's decomposition does not fold to ASCII.
_LATIN = str.maketrans(
    {"Ł": "L", "ł": "l", "Ø": "O", "ø": "o", "Đ": "D", "đ": "d", "ß": "ss", "Æ": "AE",
     "æ": "ae", "Œ": "OE", "œ": "oe", "Þ": "Th", "þ": "th", "ı": "i"}
)  # fmt: skip

_TAG = re.compile(r'^\[([A-Za-z0-9_]+) "((?:[^"\\]|\\.)*)"\]\s*$')


@dataclass(eq=False, repr=False, slots=True)
class HandInGame(FrozenRecord):
    """One game as the hand-in needs it: its tags, whether it counts, its text."""

    key: str  # the journal's path: one game per journal
    board: str
    event: str
    round: str
    white: str
    black: str
    result: str | None  # a finished game's result; None while it goes on
    played: bool  # a move was played (or a result given)
    pgn: str | None  # the PGN text of a finished game

    @property
    def started(self) -> str:
        """The journal's name, which sorts by the game's start time."""
        return Path(self.key).name


def slug(text: str, unknown: str) -> str:
    """``text`` as part of a file name on any file system (a USB stick's FAT too):
    letters and digits, accents folded to ASCII where they can be, anything else a
    single ``-``; ``unknown`` for nothing left (or PGN's "?")."""
    out: list[str] = []
    for char in unicodedata.normalize("NFC", text.strip()).translate(_LATIN):
        if char.isascii() and char.isalnum():
            out.append(char)
        elif char.isalpha():
            folded = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
            out.append(folded if folded.isalpha() else char)
        else:
            out.append("-")
    name = re.sub(r"-+", "-", "".join(out)).strip("-")[:40].strip("-")
    return name or unknown


def player_slug(name: str) -> str:
    """A player in a file name: the surname of "Carlsen, Magnus" (FIDE's order), else
    the whole name; ``NN`` for a player not named."""
    name = name.strip()
    if name in ("", "?"):
        return "NN"
    return slug(name.split(",")[0], "NN")


def round_slug(round_: str) -> str:
    return slug(round_.replace(".", "-"), "unknown") if round_ not in ("", "?") else "unknown"


def board_slug(board: str) -> str:
    return board.zfill(2) if board.isdigit() else slug(board, "board")


def game_file_names(games: list[HandInGame]) -> dict[str, str]:
    """The file name of each finished game (by key), unique: a second game of the
    same round, board and players is ``-2``, by start time."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for game in sorted(games, key=lambda g: g.started):
        base = (
            f"round-{round_slug(game.round)}-board-{board_slug(game.board)}-"
            f"{player_slug(game.white)}-{player_slug(game.black)}"
        )
        name, number = f"{base}.pgn", 1
        while name in taken:
            number += 1
            name = f"{base}-{number}.pgn"
        taken.add(name)
        names[game.key] = name
    return names


def _natural(board: str) -> list[Any]:
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", board) if p]


def round_games(
    games: Iterable[HandInGame], event: str, round_: str, order: list[str]
) -> tuple[list[HandInGame], bool]:
    """The games handed in for one round, in board order (``order``: the daemon's
    boards; others after them, by number), and whether the round is over: no board's
    current game is one of the round still to be finished. A current game with no move
    yet counts as to be finished when its players are named (they have not begun),
    unless the board already finished a game of the round (its pieces set up again)."""
    every = sorted(games, key=lambda g: g.started)
    current: dict[str, HandInGame] = {}  # board -> its latest game, any round
    ended: set[str] = set()  # boards with a finished game of the round
    chosen: list[HandInGame] = []
    for game in every:
        current[game.board] = game
        if (game.event, game.round) == (event, round_) and game.result is not None:
            chosen.append(game)
            ended.add(game.board)
    over = True
    for board, game in current.items():
        if (game.event, game.round) != (event, round_) or game.result is not None:
            continue
        named = game.white not in ("", "?") or game.black not in ("", "?")
        if game.played or (named and board not in ended):
            over = False  # being played, or about to be
    place = {board: index for index, board in enumerate(order)}
    chosen.sort(key=lambda g: (place.get(g.board, len(place)), _natural(g.board), g.started))
    return chosen, over


def read_pgn_file(path: Path, board: str) -> HandInGame | None:
    """A game's PGN file on disk as the hand-in needs it (the games of the round
    played before a restart); None when unreadable. A file without a ``Board`` tag
    (written before there was one) belongs to the board whose directory holds it."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    tags: dict[str, str] = {}
    lines = text.splitlines()
    body_from = len(lines)
    for index, line in enumerate(lines):
        found = _TAG.match(line)
        if found:
            tags[found.group(1)] = found.group(2).replace('\\"', '"').replace("\\\\", "\\")
        elif line.strip():
            body_from = index
            break
    movetext = " ".join(lines[body_from:]).split()
    result = tags.get("Result", "*")
    return HandInGame(
        key=str(path.with_suffix(".jsonl")),
        board=tags.get("Board", board),
        event=tags.get("Event", "?"),
        round=tags.get("Round", "?"),
        white=tags.get("White", "?"),
        black=tags.get("Black", "?"),
        result=result if result in FINISHED else None,
        played=result in FINISHED or movetext not in ([], ["*"]),
        pgn=text if result in FINISHED else None,
    )


def of_journal(board: str, journal: Journal) -> HandInGame | None:
    """The current game of ``journal`` as the hand-in needs it (its PGN text only once
    it has ended: rebuilding it at every move is what ``storage.pgn_every`` saves)."""
    record, path = journal.record, journal.path
    if record is None or path is None:
        return None
    headers = record.pgn_headers(journal.headers)  # the board's record, the journal's names
    result = record.result if record.result in FINISHED else None
    return HandInGame(
        key=str(path),
        board=headers.get("Board", board),
        event=headers["Event"],
        round=headers["Round"],
        white=headers["White"],
        black=headers["Black"],
        result=result,
        played=bool(record.moves) or result is not None,
        pgn=record.pgn(journal.headers) if result is not None else None,
    )


class HandIn:
    """Keeps the daemon's games by round and writes the hand-in files (module doc).

    ``game_changed`` is called on the event loop after a board's game changed (its
    PGN did), by that board's output (``for_board``); ``journal_dirs`` (board id ->
    its journal directory) are read once for the games already on disk; ``order``:
    the boards in the configuration's order."""

    def __init__(
        self,
        directory: Path,
        journal_dirs: dict[str, Path],
        *,
        writer: DiskWriter | None = None,
        fsync: bool = True,
    ) -> None:
        self.directory = directory
        self.journal_dirs = dict(journal_dirs)
        self.order = list(journal_dirs)
        self.writer = writer
        self.fsync = fsync
        self._live: dict[str, HandInGame] = {}  # on the loop: this run's games
        # on the writer's thread only:
        self._disk: dict[str, HandInGame] | None = None  # the PGN files found at start
        self._written: dict[Path, str] = {}  # what this run wrote, to skip the same again
        self._failing = False

    def for_board(self, board: str, journal: Journal) -> BoardHandIn:
        """The output of a board's pipeline that tells this hand-in of its games."""
        return BoardHandIn(self, board, journal)

    def game_changed(self, board: str, journal: Journal) -> None:
        """A board's game changed: keep its headers; when it is (or was) over, write
        what it changes in the hand-in."""
        game = of_journal(board, journal)
        if game is None:
            return
        before = self._live.get(game.key)
        if before == game:
            return
        self._live[game.key] = game
        if before is None:
            self._forget_unfinished_before(game)
        ended_now = game.result is not None or (before is not None and before.result is not None)
        if ended_now:
            self._submit(dict(self._live))

    def _forget_unfinished_before(self, game: HandInGame) -> None:
        """Drop the board's earlier games left unfinished: a new game started over
        them, so they are never handed in, and a day of games set up again without a
        result would otherwise keep one entry a game (issue 28, ``growth --trace``).
        Finished games stay: the round's file is written again from them."""
        for key, earlier in list(self._live.items()):
            if (earlier.board == game.board and earlier.result is None
                    and earlier.started < game.started):  # fmt: skip
                del self._live[key]

    def _submit(self, live: dict[str, HandInGame]) -> None:
        job = DiskJob(key=self, path=None, fd=None, work=lambda: self.write(live))
        if self.writer is None:
            job.run()
            return
        try:
            self.writer.submit(job)
        except RuntimeError:  # no running loop (a test, a replay): here
            job.run()

    # -- on the writer's thread -------------------------------------------------------

    def _games_on_disk(self) -> dict[str, HandInGame]:
        if self._disk is None:
            found: dict[str, HandInGame] = {}
            for board, directory in self.journal_dirs.items():
                try:
                    paths = sorted(directory.glob("*.pgn"))
                except OSError:
                    continue
                for path in paths:
                    if not path.with_suffix(".jsonl").is_file():
                        continue  # not a journal's game
                    game = read_pgn_file(path, board)
                    if game is not None:
                        found[game.key] = game
            self._disk = found
        return self._disk

    def write(self, live: dict[str, HandInGame]) -> None:
        """Every round this run's games belong to, brought up to date on disk."""
        try:
            games = {**self._games_on_disk(), **live}
            rounds = {(g.event, g.round) for g in live.values()}
            for event, round_ in sorted(rounds):
                self._write_round(games.values(), event, round_)
        except Exception as error:  # never the disk writer's thread: the journals need it
            if not self._failing:
                log.error("cannot write the hand-in files to %s: %s", self.directory, error)
            self._failing = True
            self._written.clear()  # write every file afresh next time
            return
        if self._failing:
            log.warning("the hand-in files in %s are written again", self.directory)
        self._failing = False

    def _write_round(self, games: Iterable[HandInGame], event: str, round_: str) -> None:
        chosen, over = round_games(games, event, round_, self.order)
        folder = self.directory / slug(event, "unknown-event")
        if not chosen and not folder.is_dir():
            return
        folder.mkdir(parents=True, exist_ok=True)
        names = game_file_names(chosen)
        prefix = f"round-{round_slug(round_)}-board-"
        wanted = {folder / name for name in names.values()}
        for game in chosen:
            assert game.pgn is not None  # a finished game's
            self._put(folder / names[game.key], game.pgn)
        for old in folder.glob(prefix + "*.pgn"):
            if old not in wanted:  # names corrected, or a game taken back
                old.unlink(missing_ok=True)
                self._written.pop(old, None)
        if over and chosen:
            text = "\n".join(game.pgn or "" for game in chosen)
            self._put(folder / f"round-{round_slug(round_)}.pgn", text)

    def _put(self, path: Path, text: str) -> None:
        if self._written.get(path) == text and path.is_file():
            return
        write_atomically(path, text, fsync=self.fsync)
        self._written[path] = text


class BoardHandIn:
    """An output of one board's pipeline: the hand-in hears each change of the game's
    PGN (a game ended, or one corrected or renamed after its end)."""

    def __init__(self, handin: HandIn, board: str, journal: Journal) -> None:
        self.handin = handin
        self.board = board
        self.journal = journal

    def receive(self, event: DomainEvent) -> None:
        if event.type in PGN_TYPES:
            self.handin.game_changed(self.board, self.journal)
