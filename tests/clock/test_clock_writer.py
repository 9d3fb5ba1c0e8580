"""The ClockWriter: what the DGT 3000 and DGT XL show for real moves, and set-and-run."""

from __future__ import annotations

import asyncio
import itertools

import chess
import chess.pgn
import pytest

from daemon.clock.sides import SideMapper
from drivers.clock.dgt3000 import ClockWriter, move_text_3000, set_and_run
from drivers.dgt.protocol import XL_GLYPHS, Clock, CommandParser
from drivers.timecontrol import parse_time_control

GLYPH_TO_CHAR = {}
for char, glyph in XL_GLYPHS.items():
    GLYPH_TO_CHAR.setdefault(glyph, char)


def sent(frame: bytes):
    """The clock command as the board would read it."""
    [command] = CommandParser().feed(frame)
    assert command.valid
    return command


def shown_on_3000(frame: bytes) -> str:
    command = sent(frame)
    assert command.clock == Clock.ASCII
    return command.payload[:8].decode("ascii")


def shown_on_xl(frame: bytes) -> str:
    """Undo the C B A F E D order and the seven-segment glyphs."""
    command = sent(frame)
    assert command.clock == Clock.DISPLAY
    c, b, a, f, e, d = command.payload[:6]
    return "".join(GLYPH_TO_CHAR[g] for g in (a, b, c, d, e, f))


def move_events(game: chess.pgn.Game):
    board = game.board()
    for ply, move in enumerate(game.mainline_moves(), 1):
        san = board.san(move)
        board.push(move)
        yield {"type": "move", "ply": ply, "uci": move.uci(), "san": san, "fen": board.fen()}


def real_games(shared, count: int):
    with open(shared / "data" / "games.pgn", encoding="utf-8") as handle:
        for _ in range(count):
            game = chess.pgn.read_game(handle)
            if game is None:
                return
            yield game


def test_dgt_3000_shows_every_real_move_with_its_number(shared):
    writer = ClockWriter("dgt3000")
    checked = numbered = 0
    for game in real_games(shared, 60):
        for event in move_events(game):
            [(_, frame), _end] = writer.move_schedule(event["san"], event["uci"], event["ply"])
            text = shown_on_3000(frame)
            assert len(text) == 8
            assert text.rstrip().endswith(event["san"]), (text, event)
            number = (event["ply"] + 1) // 2
            if text.startswith(f"{number}"):
                numbered += 1
            checked += 1
    assert checked > 2500
    # Numbers fit for nearly every move; only long SAN late in a game drops them.
    assert numbered / checked > 0.9


@pytest.mark.parametrize(
    ("san", "ply", "shown"),
    [
        ("e4", 1, "1.e4    "),
        ("e5", 2, "1...e5  "),
        ("Nxf3+", 23, "12.Nxf3+"),
        ("Nf6", 24, "12...Nf6"),
        ("Qxd8+", 24, "12 Qxd8+"),
        ("exd8=Q#", 121, "exd8=Q# "),
        ("O-O-O", 29, "15.O-O-O"),
        ("O-O-O", 30, "15 O-O-O"),
    ],
)
def test_dgt_3000_texts(san, ply, shown):
    assert move_text_3000(san, ply) == shown


def test_dgt_xl_shows_from_and_to_squares_in_segments(shared):
    writer = ClockWriter("xl")
    for game in itertools.islice(real_games(shared, 40), 40):
        for event in move_events(game):
            [(_, frame), _end] = writer.move_schedule(event["san"], event["uci"], event["ply"])
            shown = shown_on_xl(frame)
            uci = event["uci"]
            assert shown.replace(" ", "")[:4] == uci[:4]
            if len(uci) == 5:
                assert shown[4] == uci[4]


def test_xl_promotion_and_castling():
    board = chess.Board("4k3/1P6/8/8/8/8/8/R3K2R w KQ - 0 1")
    writer = ClockWriter("xl")
    san = board.san(chess.Move.from_uci("b7b8n"))
    assert shown_on_xl(writer.move_frame(san, "b7b8n", 1)) == "b7b8n "
    assert shown_on_xl(writer.move_frame("O-O-O", "e1c1", 1)) == "e1 c1 "


def test_moves_are_not_shown_when_switched_off():
    writer = ClockWriter("dgt3000", show_moves=False)
    assert writer.move_schedule("e4", "e2e4", 1) == []


def hms(payload: bytes) -> tuple[int, int]:
    left = payload[0] * 3600 + payload[1] * 60 + payload[2]
    right = payload[3] * 3600 + payload[4] * 60 + payload[5]
    return left, right


@pytest.mark.parametrize(
    ("white_side", "run_byte"), [("left", 0x01), ("right", 0x02), (None, 0x04)]
)
def test_set_and_run_at_game_start(white_side, run_byte):
    writer = ClockWriter(
        "dgt3000", time_control=parse_time_control("5+3"), set_and_run_at_start=True
    )
    [(delay, frame)] = writer.start_schedule(white_side)
    assert delay == 0.0
    command = sent(frame)
    assert command.clock == Clock.SETNRUN
    assert hms(command.payload) == (303, 303)  # 5 minutes plus the first move's 3 s
    assert command.payload[6] == run_byte  # White's clock runs (6.5), or paused if unknown


def test_no_set_and_run_unless_configured():
    writer = ClockWriter("dgt3000", time_control=parse_time_control("5+3"))
    assert writer.start_schedule("left") == []


def test_times_go_onto_the_clock_by_side():
    """Times put on the clock (a penalty's, 7.4b: ``daemon.clock.penalty`` places them by
    colour): 320 s on the left, 250 s on the right, the left runs."""
    command = sent(set_and_run(320.0, 250.0, "left"))
    assert hms(command.payload) == (320, 250)
    assert command.payload[6] == 0x01  # the left side runs
    assert sent(set_and_run(320.0, 250.0, None)).payload[6] == 0x04  # paused


def test_the_clock_goes_back_to_the_times_after_showing_a_move():
    writer = ClockWriter("dgt3000", hold_seconds=2.5)
    schedule = writer.move_schedule("e4", "e2e4", 1)
    assert [(delay, sent(frame).clock) for delay, frame in schedule] == [
        (0.0, Clock.ASCII),
        (2.5, Clock.END),
    ]


def test_the_clock_display_shows_moves_and_the_start_and_nothing_else():
    """The daemon's display dispatches on the typed events: a move's text (then the
    times again), the start's times; a clock update or a notice sends nothing."""
    from daemon.clock.display import ClockDisplay
    from daemon.game.events import ClockUpdate, GameStart, Move, Notice

    async def shown() -> list[tuple[int, bytes]]:
        writer = ClockWriter(
            "dgt3000", time_control=parse_time_control("5+3"), set_and_run_at_start=True,
            hold_seconds=0.01,
        )  # fmt: skip
        display = ClockDisplay(writer, None, lambda: None, sides=SideMapper("left_white"))
        display.receive(ClockUpdate(0.5, 300.0, 300.0, None))
        display.receive(Notice(0.6, "x", "y"))
        display.receive(GameStart(1.0, chess.STARTING_FEN))
        display.receive(Move(2.0, 1, "e2e4", "e4", "fen", "white", "Bauer e4"))
        await asyncio.sleep(0.05)  # the END after hold_seconds
        frames = []
        while not display._frames.empty():
            frames.append(sent(display._frames.get_nowait()).clock)
        return frames

    assert asyncio.run(shown()) == [Clock.SETNRUN, Clock.ASCII, Clock.END]
