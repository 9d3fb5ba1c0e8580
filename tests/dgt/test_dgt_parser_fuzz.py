"""The board -> PC parser never raises and always finds its way back to the messages."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.dgt import protocol as p

SQUARE = st.integers(0, 63)
CODE = st.integers(0, 15)
SECONDS = st.integers(0, 9 * 3600 + 59 * 60 + 59)

messages = st.one_of(
    st.builds(p.encode_field_update, SQUARE, CODE),
    st.builds(
        p.encode_board_dump,
        st.binary(min_size=64, max_size=64).map(lambda b: bytes(x & 0x0F for x in b)),
    ),
    st.builds(p.encode_version, st.integers(0, 9), st.integers(0, 99)),
    st.builds(p.encode_serial, st.text("0123456789", min_size=5, max_size=5)),
    st.builds(
        lambda left, right, status: p.encode_bwtime_times(
            p.side_time(left),
            p.side_time(right),
            running=bool(status & 1),
            no_clock=bool(status & 2),
        ),
        SECONDS,
        SECONDS,
        st.integers(0, 3),
    ),
    st.builds(
        p.encode_bwtime_ack,
        st.tuples(
            st.integers(0, 255), st.integers(0, 255), st.integers(0, 255), st.integers(0, 255)
        ),
    ),
)


def feed_in_chunks(parser: p.MessageParser, data: bytes, cuts: list[int]) -> list[p.Message]:
    out: list[p.Message] = []
    start = 0
    for cut in sorted(c % (len(data) + 1) for c in cuts):
        out.extend(parser.feed(data[start:cut]))
        start = max(start, cut)
    out.extend(parser.feed(data[start:]))
    return out


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600), st.lists(st.integers(0, 600), max_size=8))
def test_random_bytes_never_raise_and_nothing_is_held_back_forever(data, cuts):
    parser = p.MessageParser()
    out = feed_in_chunks(parser, data, cuts)
    assert all(isinstance(m, p.Message.__args__) for m in out)
    # Whatever was held back is at most one (possibly incomplete) message.
    assert parser.pending <= p.MessageParser.MAX_LENGTH


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(messages, st.binary(max_size=12)), min_size=1, max_size=12),
    st.lists(st.integers(0, 2000), max_size=6),
)
def test_messages_survive_garbage_between_them(pairs, cuts):
    """Garbage without an id byte between messages costs nothing: every message
    is decoded, in order."""
    stream = b"".join(bytes(b & 0x7F for b in garbage) + message for message, garbage in pairs)
    expected = [p.MessageParser().feed(message)[0] for message, _ in pairs]
    out = feed_in_chunks(p.MessageParser(), stream, cuts)
    assert [m for m in out if not isinstance(m, p.Garbage)] == expected


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(messages, st.integers(0, 70), st.booleans()), min_size=1, max_size=10),
    messages,
)
def test_truncated_messages_lose_only_themselves(items, last):
    """A message cut short (a lost tail, a reconnect mid-message) is dropped as
    garbage when the next message's id byte arrives; the next one is intact."""
    stream = b""
    expected = []
    for message, cut, truncate in items:
        if truncate and 0 < cut < len(message):
            stream += message[:cut]
        else:
            stream += message
            expected.append(p.MessageParser().feed(message)[0])
    stream += last
    expected.append(p.MessageParser().feed(last)[0])
    out = [m for m in p.MessageParser().feed(stream) if not isinstance(m, p.Garbage)]
    assert out == expected


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), messages)
def test_garbage_with_id_bytes_cannot_swallow_the_next_message(garbage, message):
    """Even garbage that looks like a message header (a length promising more
    bytes) gives way to the next real message: its id byte starts it afresh."""
    parser = p.MessageParser()
    parser.feed(garbage)
    out = [m for m in parser.feed(message) if not isinstance(m, p.Garbage)]
    assert out == p.MessageParser().feed(message)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_command_parser_never_raises(data):
    commands = p.CommandParser().feed(data)
    assert sum(len(c.raw) for c in commands) <= len(data)


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=7, max_size=7))
def test_decode_bwtime_never_raises(data):
    assert isinstance(p.decode_bwtime(data), p.ClockTimes | p.ClockAck | p.InvalidClockData)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_eeprom_log_reading_never_raises(data):
    assert all(isinstance(e, p.EeEvent.__args__) for e in p.EeMoves(data).events())
