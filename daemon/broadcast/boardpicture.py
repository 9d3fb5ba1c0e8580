"""A board's picture (SVG): drawn by python-chess once per position, and the parts
the page's script needs to draw the very same picture in the browser.

A hall's wall screen shows every board, and each move changed one board's picture
for every viewer. Fetched from the daemon (``/board.svg``), that was a render and a
request per move per viewer: with 26 boards and 100 viewers, more than a Pi's core
(issue 28). So the page draws each board itself from the state its event stream
already carries (``BOARD_KIT``, the script's ``drawBoard``): python-chess's own
markup (the frame with its coordinates, the pieces, the colours) put together as
python-chess puts it, byte for byte (``tests/broadcast/test_broadcast_board_picture.py``
compares them in Chromium). What the server still draws (``/board.svg``, a single
board's first response) is kept per position (``picture``), with an ETag.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import chess
import chess.svg

from drivers.records import FrozenRecord

if TYPE_CHECKING:
    from daemon.game.record import GameRecord

IRREGULAR_FILL = "#e0303080"
"""The squares of an open irregularity: red, half transparent."""
KEPT = 64
"""Pictures kept (a position's picture is 20-32 kB): a hall's boards, each at its size."""


@dataclass(eq=False, repr=False, slots=True)
class Look(FrozenRecord):
    """Everything a picture shows: the position, which way the board is turned, the
    last move's squares, an irregularity's squares, the size asked for."""

    fen: str
    white_below: bool
    lastmove: str
    marked: tuple[str, ...]
    size: int | None

    def etag(self) -> str:
        digest = hashlib.blake2s(repr(self).encode(), digest_size=12).hexdigest()
        return f'"{digest}"'


@dataclass(eq=False, repr=False, slots=True)
class Picture(FrozenRecord):
    svg: str
    etag: str


_kept: OrderedDict[Look, Picture] = OrderedDict()


def look_of(record: GameRecord, orientation: str, size: int | None) -> Look:
    """What ``record``'s picture shows now, turned as ``orientation`` says."""
    last = record.last_move
    marked = (record.irregularity or {}).get("squares") or []
    return Look(record.position().fen(), orientation != "black", last.uci if last else "",
                tuple(str(name) for name in marked), size)  # fmt: skip


def picture(record: GameRecord, orientation: str, size: int | None = None) -> Picture:
    """The board's picture (python-chess): last move and check marked, an open
    irregularity's squares filled, turned as configured; drawn once per look."""
    look = look_of(record, orientation, size)
    found = _kept.get(look)
    if found is not None:
        _kept.move_to_end(look)
        return found
    drawn = Picture(_draw(record.position(), look), look.etag())
    _kept[look] = drawn
    while len(_kept) > KEPT:
        _kept.popitem(last=False)
    return drawn


def _draw(board: chess.Board, look: Look) -> str:
    lastmove = None
    if look.lastmove:
        with contextlib.suppress(ValueError):
            lastmove = chess.Move.from_uci(look.lastmove)
    fill: dict[int, str] = {}
    for name in look.marked:
        with contextlib.suppress(ValueError):
            fill[chess.parse_square(name)] = IRREGULAR_FILL
    return chess.svg.board(
        board,
        orientation=look.white_below,
        lastmove=lastmove,
        check=board.king(board.turn) if board.is_check() else None,
        fill=fill,
        size=look.size,
    )


# -- the kit the page's script draws with ---------------------------------------------

#: A position with every kind of piece of both colours and a king in check (the
#: fool's mate): python-chess's output for it holds every definition a picture uses.
SPECIMEN = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
_SQUARE = re.compile(r'<rect x="(\d+)" y="(\d+)" width="\d+" height="\d+" '
                     r'class="square (light|dark) ([a-h][1-8])"')  # fmt: skip
_TAG = re.compile(r"<(/?)([A-Za-z]+)[^>]*?(/?)>")


def _colour(value: str) -> str:
    """A colour's attributes as python-chess writes them: ``#rrggbbaa`` is a fill and
    an opacity (``fill="#e03030" opacity="0.50..."``)."""
    if len(value) == 9 and value.startswith("#"):
        return f'fill="{value[:7]}" opacity="{int(value[7:], 16) / 0xFF}"'
    return f'fill="{value}"'


def _top_level(markup: str) -> list[str]:
    """The outermost elements of a run of SVG markup, each as written."""
    parts: list[str] = []
    depth = start = 0
    for tag in _TAG.finditer(markup):
        closing, _, empty = tag.groups()
        if depth == 0:
            start = tag.start()
        if closing:
            depth -= 1
        elif not empty:
            depth += 1
        if depth == 0:
            parts.append(markup[start : tag.end()])
    return parts


def _turned(white_below: bool) -> dict[str, object]:
    """python-chess's empty board turned one way: its frame (border, coordinates) and
    where each square is, and its tone."""
    drawn = chess.svg.board(chess.BaseBoard.empty(), orientation=white_below)
    first_square = _SQUARE.search(drawn)
    assert first_square is not None, "python-chess draws its squares as it did"
    frame = drawn[drawn.index("<defs />") + len("<defs />") : first_square.start()]
    squares = {name: [int(x), int(y), tone] for x, y, tone, name in _SQUARE.findall(drawn)}
    return {"frame": frame, "squares": squares}


@functools.cache
def board_kit(orientations: frozenset[str]) -> str:
    """The kit as a JavaScript object literal (JSON), with the frames of the boards
    turned as ``orientations`` say (``white``, ``black``): those the page shows."""
    board = chess.Board(SPECIMEN)
    drawn = chess.svg.board(board, check=board.king(board.turn))
    defs = _top_level(drawn[drawn.index("<defs>") + len("<defs>") : drawn.index("</defs>")])
    pieces = {}
    for colour in chess.COLORS:
        for kind in chess.PIECE_TYPES:
            name = f"{chess.COLOR_NAMES[colour]}-{chess.PIECE_NAMES[kind]}"
            pieces[chess.Piece(kind, colour).symbol()] = {
                "id": name, "def": next(d for d in defs if d.startswith(f'<g id="{name}"'))
            }  # fmt: skip
    colours = chess.svg.DEFAULT_COLORS
    tones = [f"{tone}{last}" for tone in ("light", "dark") for last in ("", " lastmove")]
    kit = {
        "head": drawn[: drawn.index(">")],  # <svg ... viewBox="...": no size
        "square": chess.svg.SQUARE_SIZE,
        "tones": {tone: _colour(colours[f"square {tone}"]) for tone in tones},
        "fill": _colour(IRREGULAR_FILL),
        "gradient": next(d for d in defs if d.startswith("<radialGradient")),
        "pieces": pieces,  # in python-chess's order: white's pawn to king, then black's
        "boards": {side: _turned(side != "black") for side in sorted(orientations)},
    }
    # inside a <script>: no "</" may end it early
    return json.dumps(kit, separators=(",", ":")).replace("</", "<\\/")
