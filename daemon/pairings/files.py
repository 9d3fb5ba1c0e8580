"""A round's pairings read from the files pairing programs write: FIDE TRF and CSV.

Pure (text in, pairings out) so that the command, the console and the tests read a
file by the same code. An organiser keeps the tournament in Swiss-Manager, Vega or
another FIDE-endorsed program; each exports the FIDE Tournament Report File (TRF16,
FIDE Handbook C.04 Annex 2) and a pairing list as CSV. What is read:

- TRF: the player lines (``001``): start rank in columns 5-8, name in 15-47, points
  in 81-84, then per round ten columns from 92: the opponent's start rank (4), the
  colour (``w``/``b``/``-``) and the result (blank while the game is unplayed).
  TRF has no board numbers: the boards are ordered as pairing lists are (C.04: the
  higher score of the pair, then the sum of both scores, then the higher-ranked
  player's start rank). The round is the last one paired and not yet played, or
  the one asked for.
- CSV (``;``, ``,`` or tab): the pairing list as the programs print it, one row a
  board, found by its header row: a board column (``Bo.``, ``Board``, ``Brett``,
  ``Tab.``...) and either ``White``/``Black`` columns (in English, German, French,
  Spanish, Dutch or Italian) or two ``Name`` columns, White's first (the layout of
  Swiss-Manager's and chess-results' pairing lists). The round is a ``Round``
  column, or a line above the header such as ``Round 5`` or ``5. Runde``.

Every mistake is a ``PairingsError`` naming the line and what was expected; nothing
here raises anything else on any text.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

from drivers.records import FrozenRecord, Record

#: TRF results that score, by the player who has them (TRF16: ``+`` forfeit win,
#: ``W``/``D``/``L`` unrated games, ``H`` half-point bye, ``F`` full-point bye, ``U``
#: pairing-allocated bye, ``Z`` zero-point bye).
TRF_SCORES = {"1": 1.0, "+": 1.0, "W": 1.0, "F": 1.0, "U": 1.0, "=": 0.5, "D": 0.5,
              "H": 0.5, "0": 0.0, "-": 0.0, "L": 0.0, "Z": 0.0}  # fmt: skip
TRF_ROUNDS_FROM = 91  # 0-based column of round 1's opponent
TRF_ROUND_WIDTH = 10
MAX_NAME = 100  # the players control's limit


class PairingsError(ValueError):
    """A pairings file that cannot be read, with where and why."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line


@dataclass(eq=False, repr=False)
class Pairing(FrozenRecord):
    """One board of the round: its number and who has White and Black."""

    board: int
    white: str
    black: str


@dataclass(eq=False, repr=False)
class RoundPairings(FrozenRecord):
    """A round's boards, as a pairings file gives them."""

    round: str
    pairings: list[Pairing]
    event: str = ""
    kind: str = ""  # "TRF" or "CSV"
    byes: list[str] = field(default_factory=list)  # players without a board this round


def read_pairings(data: bytes | str, *, round_number: int | None = None) -> RoundPairings:
    """The pairings of a TRF or CSV file's round (``round_number``, else the file's)."""
    text = _decode(data) if isinstance(data, bytes) else data
    if "\x00" in text:
        raise PairingsError("this is not a text file (TRF or CSV pairings)")
    if not text.strip():
        raise PairingsError("the file is empty")
    if round_number is not None and round_number < 1:
        raise PairingsError(f"the round must be 1 or more, not {round_number}")
    lines = text.splitlines()
    if any(line.startswith("001") for line in lines):
        return read_trf(lines, round_number)
    return read_csv(text, round_number)


def _decode(data: bytes) -> str:
    """UTF-8 (with or without a byte-order mark), else Windows' Latin-1 (cp1252), as
    Windows programs export."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _clean_name(name: str, line: int) -> str:
    name = " ".join(name.split())
    if not name:
        raise PairingsError("a player has no name", line)
    if len(name) > MAX_NAME:
        raise PairingsError(f"a name longer than {MAX_NAME} characters: {name[:40]}...", line)
    return name


# -- TRF --------------------------------------------------------------------------


@dataclass(eq=False, repr=False)
class _TrfPlayer(Record):
    rank: int
    name: str
    line: int
    rounds: list[tuple[int, str, str]]  # (opponent, colour, result) per round


def read_trf(lines: list[str], round_number: int | None = None) -> RoundPairings:
    event = ""
    players: dict[int, _TrfPlayer] = {}
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if line.startswith("012 "):
            event = line[4:].strip()
        if not line.startswith("001"):
            continue
        player = _trf_player(line, number)
        if player.rank in players:
            raise PairingsError(
                f"start rank {player.rank} is given twice (also line {players[player.rank].line})",
                number,
            )
        players[player.rank] = player
    rounds = max((len(p.rounds) for p in players.values()), default=0)
    if rounds == 0:
        raise PairingsError("the TRF file has players but no round paired yet")
    if round_number is None:
        round_number = _unplayed_round(players, rounds)
    if round_number > rounds:
        raise PairingsError(f"the TRF file pairs {rounds} rounds, not round {round_number}")
    pairs: list[tuple[_TrfPlayer, _TrfPlayer]] = []
    byes: list[str] = []
    for player in sorted(players.values(), key=lambda p: p.rank):
        opponent, colour, _ = _round_of(player, round_number)
        if opponent == 0:
            if colour or _round_of(player, round_number)[2]:
                byes.append(player.name)
            continue
        other = players.get(opponent)
        if other is None:
            raise PairingsError(
                f"round {round_number}: {player.name}'s opponent {opponent} is not a player",
                player.line,
            )
        back, other_colour, _ = _round_of(other, round_number)
        if back != player.rank:
            raise PairingsError(
                f"round {round_number}: {player.name} plays {other.name}, but {other.name} "
                f"(line {other.line}) plays {back or 'nobody'}",
                player.line,
            )
        if colour not in ("b", "w"):
            raise PairingsError(
                f"round {round_number}: {player.name}'s colour is {colour or 'missing'!r}, "
                "expected w or b",
                player.line,
            )
        if other_colour == colour:
            raise PairingsError(
                f"round {round_number}: {player.name} and {other.name} (line {other.line}) "
                f"both have {'White' if colour == 'w' else 'Black'}",
                player.line,
            )
        if colour == "w":
            pairs.append((player, other))
    if not pairs:
        raise PairingsError(f"round {round_number} has no games paired")

    def score(player: _TrfPlayer) -> float:
        return sum(TRF_SCORES.get(r[2], 0.0) for r in player.rounds[: round_number - 1])

    def order(pair: tuple[_TrfPlayer, _TrfPlayer]) -> tuple[float, float, int]:
        white, black = pair
        scores = (score(white), score(black))
        return (-max(scores), -sum(scores), min(white.rank, black.rank))

    pairs.sort(key=order)
    pairings = [Pairing(n, w.name, b.name) for n, (w, b) in enumerate(pairs, 1)]
    return RoundPairings(str(round_number), pairings, event=event, kind="TRF", byes=byes)


def _trf_player(line: str, number: int) -> _TrfPlayer:
    rank_text = line[4:8].strip()
    if not rank_text.isdigit():
        raise PairingsError(
            f"a TRF player line (001) has its start rank in columns 5-8, not {rank_text!r}",
            number,
        )
    name = _clean_name(line[14:47], number)
    rounds: list[tuple[int, str, str]] = []
    start = TRF_ROUNDS_FROM
    while start < len(line):
        block = line[start : start + TRF_ROUND_WIDTH].ljust(8)
        opponent_text, colour, result = block[0:4].strip(), block[5].strip(), block[7].strip()
        round_no = len(rounds) + 1
        if not opponent_text and not colour and not result:
            rounds.append((0, "", ""))
        elif not opponent_text.isdigit():
            raise PairingsError(
                f"round {round_no} of {name}: the opponent's start rank (columns "
                f"{start + 1}-{start + 4}) is {opponent_text!r}",
                number,
            )
        elif colour not in ("w", "b", "-", ""):
            raise PairingsError(
                f"round {round_no} of {name}: colour {colour!r}, expected w, b or -", number
            )
        elif result and result.upper() not in TRF_SCORES:
            raise PairingsError(f"round {round_no} of {name}: result {result!r}", number)
        else:
            rounds.append((int(opponent_text), colour.replace("-", ""), result.upper()))
        start += TRF_ROUND_WIDTH
    while rounds and rounds[-1] == (0, "", ""):
        rounds.pop()
    return _TrfPlayer(int(rank_text), name, number, rounds)


def _round_of(player: _TrfPlayer, round_number: int) -> tuple[int, str, str]:
    if round_number <= len(player.rounds):
        return player.rounds[round_number - 1]
    return (0, "", "")


def _unplayed_round(players: dict[int, _TrfPlayer], rounds: int) -> int:
    """The last round whose games are paired but have no result yet."""
    for number in range(rounds, 0, -1):
        games = [_round_of(p, number) for p in players.values()]
        paired = [g for g in games if g[0] and g[1]]
        if paired and not any(g[2] for g in paired):
            return number
    raise PairingsError(
        f"every round of the TRF file (1-{rounds}) has results already: "
        "say which round's boards to name (--round N)"
    )


# -- CSV --------------------------------------------------------------------------

BOARD_HEADERS = {"bo", "board", "brd", "bd", "brett", "br", "tab", "table", "tisch", "mesa",
                 "tablero", "tav", "tavolo", "bord", "echiquier", "ech"}  # fmt: skip
WHITE_HEADERS = {"white", "weiss", "weiß", "blancs", "blanc", "blancas", "blanco", "wit",
                 "bianco", "bianchi"}  # fmt: skip
BLACK_HEADERS = {"black", "schwarz", "noirs", "noir", "negras", "negro", "zwart", "nero",
                 "neri"}  # fmt: skip
NAME_HEADERS = {"name", "nom", "nombre", "naam", "nome", "player", "spieler", "joueur"}
ROUND_HEADERS = {"round", "rd", "rnd", "runde", "rde", "ronde", "ronda", "turno"}
ROUND_LINE = re.compile(
    r"(?:\b(?:round|rd|rnd|runde|ronde|ronda|turno)\.?\s*(\d+)\b)|(?:\b(\d+)\.?\s*(?:round|runde|ronde|ronda|turno)\b)",
    re.IGNORECASE,
)
NO_GAME = {"", "bye", "spielfrei", "freilos", "exempt", "descansa", "bye (1)", "--", "-"}


def _header_key(cell: str) -> str:
    return re.sub(r"[^a-zß]", "", cell.strip().lower())


def read_csv(text: str, round_number: int | None = None) -> RoundPairings:
    first = next((line for line in text.splitlines() if line.strip()), "")
    delimiter = max(";,\t", key=first.count) if any(c in first for c in ";,\t") else ";"
    try:
        rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    except csv.Error as error:
        raise PairingsError(f"not CSV: {error}") from None
    found_round = ""
    for index, row in enumerate(rows):
        columns = _columns(row)
        if columns is None:
            match = ROUND_LINE.search(" ".join(row))
            if match:
                found_round = match.group(1) or match.group(2)
            continue
        return _csv_boards(rows, index, columns, found_round, round_number)
    raise PairingsError(
        "neither a TRF file (no player lines starting 001) nor a CSV pairing list (no header "
        "row with a board column and White/Black or two Name columns)"
    )


@dataclass(eq=False, repr=False)
class _Columns(FrozenRecord):
    white: int
    black: int
    board: int | None
    round: int | None


def _columns(row: list[str]) -> _Columns | None:
    keys = [_header_key(cell) for cell in row]
    white = next((i for i, k in enumerate(keys) if k in WHITE_HEADERS), None)
    black = next((i for i, k in enumerate(keys) if k in BLACK_HEADERS), None)
    if white is None or black is None:
        names = [i for i, k in enumerate(keys) if k in NAME_HEADERS]
        if len(names) < 2:
            return None
        white, black = names[0], names[1]
    board = next((i for i, k in enumerate(keys) if k in BOARD_HEADERS), None)
    round_ = next((i for i, k in enumerate(keys) if k in ROUND_HEADERS), None)
    if board is None and round_ is None and keys[white] not in WHITE_HEADERS:
        return None  # two Name columns and nothing else: a player list, not pairings
    return _Columns(white, black, board, round_)


def _csv_boards(
    rows: list[list[str]], header: int, columns: _Columns, found_round: str,
    round_number: int | None, only_round: str | None = None,
) -> RoundPairings:  # fmt: skip
    """The games below the header row (of ``only_round`` when the list holds several)."""
    if only_round is None and columns.round is not None:
        listed = {
            row[columns.round].strip() for row in rows[header + 1 :]
            if columns.round < len(row) and row[columns.round].strip()
            and _columns(row) is None
        }  # fmt: skip
        if len(listed) > 1:
            if round_number is None:
                raise PairingsError(
                    f"the list holds rounds {', '.join(sorted(listed, key=_num))}: "
                    "say which (--round N)"
                )
            only_round = str(round_number)
    pairings: list[Pairing] = []
    byes: list[str] = []
    rounds_seen: set[str] = set()
    seen: dict[int, int] = {}
    for index in range(header + 1, len(rows)):
        row, line = rows[index], index + 1
        if not any(cell.strip() for cell in row):
            continue
        if _columns(row) is not None:
            continue  # a second header (a page break in the export)

        def cell(i: int | None, row: list[str] = row) -> str:
            return row[i].strip() if i is not None and i < len(row) else ""

        white, black = cell(columns.white), cell(columns.black)
        if columns.round is not None and cell(columns.round):
            rounds_seen.add(cell(columns.round))
            if only_round is not None and cell(columns.round) != only_round:
                continue
        if white.lower() in NO_GAME or black.lower() in NO_GAME:
            if white.lower() not in NO_GAME:
                byes.append(_clean_name(white, line))
            elif black.lower() not in NO_GAME:
                byes.append(_clean_name(black, line))
            continue
        if columns.board is not None:
            text = cell(columns.board).rstrip(".")
            if not text.isdigit() or int(text) < 1:
                raise PairingsError(f"the board number is {cell(columns.board)!r}", line)
            board = int(text)
        else:
            board = len(pairings) + 1
        if board in seen:
            raise PairingsError(f"board {board} is given twice (also line {seen[board]})", line)
        seen[board] = line
        pairings.append(Pairing(board, _clean_name(white, line), _clean_name(black, line)))
    if not pairings:
        if only_round is not None:
            raise PairingsError(f"the list has no games of round {only_round}")
        raise PairingsError("the pairing list has a header but no games", header + 1)
    if only_round is not None:
        round_ = only_round
    elif round_number is not None:
        round_ = str(round_number)
    else:
        round_ = next(iter(rounds_seen), found_round)
    if not round_:
        raise PairingsError("the pairing list does not say its round: give it (--round N)")
    pairings.sort(key=lambda p: p.board)
    return RoundPairings(round_, pairings, kind="CSV", byes=byes)


def _num(text: str) -> int:
    return int(text) if text.isdigit() else 0
