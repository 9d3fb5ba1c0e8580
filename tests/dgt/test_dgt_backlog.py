"""What a board says while the link starts up: kept in the board's order, the field
updates before its log folded into the picture the log ends on."""

from __future__ import annotations

from drivers.dgt import protocol
from drivers.dgt.backlog import StartupBacklog
from drivers.dgt.protocol import BoardDumpMessage, Bwtime, EeMoves, FieldUpdate, Version

START = tuple(protocol.codes_from_placement("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"))
E2, E4 = protocol.square_index("e2"), protocol.square_index("e4")
D2 = protocol.square_index("d2")
PAWN = protocol.CODE_BY_PIECE["P"]


def update(square: int, code: int) -> FieldUpdate:
    return FieldUpdate(square, code, code)


def clock() -> Bwtime:
    [message] = protocol.MessageParser().feed(
        bytes([protocol.MessageId.BWTIME, 0, 10]) + bytes([1, 0x33, 0x19, 1, 0x33, 0x19, 9])
    )
    assert isinstance(message, Bwtime)
    return message


def test_what_came_before_the_dump_is_in_it_and_not_kept():
    backlog = StartupBacklog()
    assert backlog.keep(update(E2, 0))
    assert not backlog.keep(BoardDumpMessage(START))
    assert backlog.after_picture() == []
    assert not backlog.keep(Version(3, 1))  # the link handles it at once


def test_without_a_log_everything_after_the_dump_is_handed_back_in_order():
    backlog = StartupBacklog()
    backlog.keep(BoardDumpMessage(START))
    pressed = clock()
    for message in (update(E2, 0), pressed, update(E4, PAWN)):
        assert backlog.keep(message)
    assert backlog.logged_picture(START) == START
    assert backlog.after_picture() == [update(E2, 0), pressed, update(E4, PAWN)]


def test_updates_before_the_log_are_its_picture_and_the_rest_come_after_it():
    backlog = StartupBacklog()
    backlog.keep(BoardDumpMessage(START))
    pressed = clock()
    for message in (update(E2, 0), pressed, update(E4, PAWN), EeMoves(b""), update(D2, 0)):
        backlog.keep(message)
    picture = list(START)
    picture[E2], picture[E4] = 0, PAWN
    assert backlog.logged_picture(START) == tuple(picture)
    assert backlog.after_picture() == [pressed, update(D2, 0)]
