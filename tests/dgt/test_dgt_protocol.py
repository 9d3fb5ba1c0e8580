"""The DGT codec: every command's bytes, every reply's round trip, the framing."""

from __future__ import annotations

import pytest

from drivers.dgt import protocol as p

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"


# -- commands, PC -> board ----------------------------------------------------


@pytest.mark.parametrize(
    ("encoder", "byte"),
    [
        (p.reset, 0x40),
        (p.request_clock, 0x41),
        (p.request_board, 0x42),
        (p.update, 0x43),
        (p.update_board, 0x44),
        (p.request_serial, 0x45),
        (p.request_bus_address, 0x46),
        (p.request_trademark, 0x47),
        (p.update_nice, 0x4B),
        (p.request_battery, 0x4C),
        (p.request_version, 0x4D),
        (p.request_long_serial, 0x55),
    ],
)
def test_single_byte_commands_are_the_header_values(encoder, byte):
    assert encoder() == bytes([byte])
    assert p.check_command(encoder()) == encoder()


def test_clock_frames_count_every_byte_after_the_size():
    # The header's worked example: END is 2b 03 03 03 00.
    assert p.clock_end() == bytes.fromhex("2b03030300")
    for frame in (
        p.clock_display_xl("123456"),
        p.clock_icons(),
        p.clock_buttons(),
        p.clock_version(),
        p.clock_set_and_run(300, 240),
        p.clock_beep(500),
        p.clock_ascii("e2e4", beep=2),
    ):
        assert frame[0] == 0x2B
        assert frame[1] == len(frame) - 2
        assert frame[2] == 0x03 and frame[-1] == 0x00
        assert p.check_command(frame) == frame
    assert p.clock_display_xl("123456")[1] == 0x0B
    assert p.clock_icons()[1] == 0x0B
    assert p.clock_set_and_run(1, 1)[1] == 0x0A
    assert p.clock_beep(64)[1] == 0x04
    assert p.clock_ascii("x")[1] == 0x0C


def test_set_and_run_sends_plain_binary_hours_minutes_seconds_and_flags():
    frame = p.clock_set_and_run(
        3600 + 2 * 60 + 5, 90, left_counts=True, right_counts=False, pause=True, toggle=True
    )
    assert frame[3] == p.Clock.SETNRUN
    assert list(frame[4:11]) == [1, 2, 5, 0, 1, 30, 0x01 | 0x04 | 0x08]
    with pytest.raises(ValueError):
        p.clock_set_and_run(10 * 3600, 0)


def test_xl_display_sends_segments_in_clock_order_c_b_a_f_e_d():
    frame = p.clock_display_xl("123456", icons=0x02, beep=True)
    glyph = p.XL_GLYPHS
    assert list(frame[4:10]) == [glyph[c] for c in "321654"]
    assert frame[10] == 0x02 and frame[11] == 0x03


def test_ascii_text_is_padded_to_eight_characters_and_beep_clamped():
    frame = p.clock_ascii("Nf3", beep=99)
    assert frame[4:12] == b"Nf3     "
    assert frame[12] == 15
    assert p.clock_ascii("much too long")[4:12] == b"much too"


def test_beep_duration_is_in_64_ms_units():
    assert p.clock_beep(640)[4] == 10
    assert p.clock_beep(0)[4] == 1


@pytest.mark.parametrize("byte", [0x4E, 0x51, 0x53, 0x54, 0x49, 0x4A])
def test_boot_loader_scan_mode_eeprom_and_bus_commands_are_refused(byte):
    with pytest.raises(p.UnsafeCommand):
        p.check_command(bytes([byte]))


def test_revelation_commands_only_go_to_a_revelation():
    leds = p.revelation_leds(1, 12, 28)
    text = p.revelation_ascii("hello")
    for frame in (leds, text):
        with pytest.raises(p.UnsafeCommand, match="Revelation"):
            p.check_command(frame)
        assert p.check_command(frame, revelation=True) == frame


def test_malformed_clock_frame_is_refused():
    with pytest.raises(p.UnsafeCommand):
        p.check_command(bytes([0x2B, 0x09, 0x03, 0x03, 0x00]))


# -- squares and pieces ------------------------------------------------------


def test_square_numbering_is_a8_first_h1_last():
    assert p.square_name(0) == "a8"
    assert p.square_name(7) == "h8"
    assert p.square_name(8) == "a7"
    assert p.square_name(63) == "h1"
    assert all(p.square_index(p.square_name(i)) == i for i in range(64))


def test_placement_round_trip_and_magic_pieces_count_as_empty():
    codes = p.codes_from_placement(START)
    assert codes[0] == 0x08 and codes[4] == 0x0B and codes[60] == 0x05 and codes[59] == 0x06
    assert p.placement_from_codes(codes) == START
    with_magic = bytearray(codes)
    with_magic[36] = 0x0E  # e4
    message = p.BoardDumpMessage(tuple(with_magic))
    assert message.placement == START
    assert message.magic == (("e4", "white_wins"),)


# -- replies, board -> PC: encode, parse, decode -------------------------------


def parse_one(data: bytes):
    messages = p.MessageParser().feed(data)
    assert len(messages) == 1, messages
    return messages[0]


def test_board_dump_round_trip():
    codes = p.codes_from_placement(START)
    message = parse_one(p.encode_board_dump(codes))
    assert isinstance(message, p.BoardDumpMessage)
    assert message.placement == START
    assert p.encode_board_dump(codes)[:3] == bytes([0x86, 0x00, 67])


def test_field_update_round_trip_and_bit_6_masked():
    message = parse_one(p.encode_field_update(36, 0x01))
    assert message == p.FieldUpdate(square=36, code=1, raw=1)
    assert message.square_name == "e4" and message.piece == "P"
    masked = parse_one(bytes([0x8E, 0, 5, 12, 0x40 | 0x07]))
    assert masked.piece == "p" and masked.raw == 0x47
    assert parse_one(p.encode_field_update(12, 0)).piece is None


@pytest.mark.parametrize(
    ("code", "meaning"), [(0x0D, "draw"), (0x0E, "white_wins"), (0x0F, "black_wins")]
)
def test_magic_piece_field_update_is_reported(code, meaning):
    message = parse_one(p.encode_field_update(28, code))
    assert message.magic == meaning and message.piece is None


def test_identification_replies_round_trip():
    assert parse_one(p.encode_version(3, 1)) == p.Version(3, 1)
    assert str(p.Version(3, 1)) == "3.01"
    assert parse_one(p.encode_serial("01025")) == p.SerialNumber("01025")
    assert parse_one(p.encode_long_serial("3000147740")) == p.LongSerialNumber("3000147740")
    assert parse_one(p.encode_trademark("Digital Game Technology")) == p.Trademark(
        "Digital Game Technology"
    )
    # Serial "01025" is bus address 0x08 0x01 (the header's example).
    assert p.encode_bus_address(1025)[3:] == bytes([0x08, 0x01])
    assert parse_one(p.encode_bus_address(1025)) == p.BusAddress(1025)
    battery = parse_one(p.encode_battery(bytes([87, 1, 2, 3, 4, 5, 6, 7, 8])))
    assert battery.percent == 87 and len(battery.raw) == 9
    assert parse_one(p.encode_ee_moves(bytes([0x6A, 0x6B]))) == p.EeMoves(bytes([0x6A, 0x6B]))


def test_clock_times_round_trip_with_every_status_bit():
    left = p.side_time(3 * 3600 + 25 * 60 + 9, time_per_move=True)
    right = p.side_time(59, flag_fallen=True, flag_shown=True)
    for status in range(64):
        bits = {
            "running": bool(status & 1),
            "lever_right_high": bool(status & 2),
            "battery_low": bool(status & 4),
            "left_to_move": bool(status & 8),
            "right_to_move": bool(status & 16),
            "no_clock": bool(status & 32),
        }
        message = parse_one(p.encode_bwtime_times(left, right, **bits))
        assert isinstance(message, p.Bwtime)
        times = message.clock
        assert isinstance(times, p.ClockTimes)
        assert times.left == left and times.right == right
        assert {k: getattr(times, k) for k in bits} == bits
    assert left.total_seconds == 3 * 3600 + 25 * 60 + 9


def test_clock_times_are_bcd_with_right_side_first():
    # A real message from the capture: right 3:02, left 3:01, left's time running.
    times = p.decode_bwtime(bytes.fromhex("20030220030109"))
    assert isinstance(times, p.ClockTimes)
    assert times.right.total_seconds == 182 and times.left.total_seconds == 181
    assert times.running and times.left_to_move and not times.right_to_move
    assert times.right.time_per_move


def test_non_bcd_time_and_wrong_size_are_invalid_clock_data_not_errors():
    assert isinstance(p.decode_bwtime(bytes.fromhex("0a000000000000")), p.ClockAck)
    bad = p.decode_bwtime(bytes.fromhex("003f0000000000"))
    assert isinstance(bad, p.InvalidClockData) and "BCD" in bad.reason
    assert isinstance(p.decode_bwtime(b"\x00\x01"), p.InvalidClockData)


@pytest.mark.parametrize(
    "ack",
    [
        (0x10, 0x0A, 0x00, 0x00),
        (0x40, 0x0A, 0, 0),
        (0x10, 0x88, 0x80, 0xB5),
        (0x90, 0xFF, 0xFF, 0xFF),
    ],
)
def test_clock_ack_round_trip_keeps_all_eight_bits(ack):
    decoded = p.decode_bwtime(p.bwtime_ack_data(ack))
    assert decoded == p.ClockAck(ack)


def test_clock_ack_meanings():
    ok = p.ClockAck((0x10, 0x0A, 0, 0))
    assert ok.ok and not ok.error and not ok.auto_generated and ok.command == p.Clock.SETNRUN
    assert p.ClockAck((0x40, 0x0A, 0, 0)).error
    version = p.ClockAck((0x10, 0x09, 0x21, 0))
    assert version.version == (2, 1)
    for name, code in (
        ("back", 0x31),
        ("plus", 0x32),
        ("run", 0x33),
        ("minus", 0x34),
        ("ok", 0x35),
    ):
        press = p.decode_bwtime(p.bwtime_ack_data((0x10, 0x88, 0, code)))
        assert press.auto_generated and press.command is None and press.button == name
    assert parse_one(p.encode_button_ack("minus")).clock.button == "minus"
    assert p.ClockAck((0x10, 0x81, 0, 0)).button is None


# -- framing -------------------------------------------------------------------


def test_messages_split_across_reads_are_reassembled():
    stream = p.encode_field_update(12, 0) + p.encode_board_dump(p.codes_from_placement(START))
    parser = p.MessageParser()
    out = []
    for byte in stream:
        out.extend(parser.feed(bytes([byte])))
    assert [type(m) for m in out] == [p.FieldUpdate, p.BoardDumpMessage]
    assert parser.pending == 0


def test_garbage_and_a_truncated_message_are_skipped_and_reported():
    update = p.encode_field_update(52, 0)
    stream = b"\x01\x02\x03" + update[:3] + update + b"\x8e\x7f\x7f" + update
    messages = p.MessageParser().feed(stream)
    updates = [m for m in messages if isinstance(m, p.FieldUpdate)]
    garbage = b"".join(m.data for m in messages if isinstance(m, p.Garbage))
    assert len(updates) == 2
    assert garbage == b"\x01\x02\x03" + update[:3] + b"\x8e\x7f\x7f"


def test_unknown_or_missized_messages_are_reported_as_unknown():
    assert parse_one(bytes([0x94, 0, 4, 1])) == p.UnknownMessage(0x94, b"\x01")
    assert isinstance(parse_one(bytes([0x8E, 0, 4, 1])), p.UnknownMessage)
    assert isinstance(parse_one(bytes([0x8E, 0, 5, 70, 1])), p.UnknownMessage)  # square 70


def test_a_piece_code_above_15_is_not_taken_for_an_empty_square():
    assert isinstance(parse_one(bytes([0x8E, 0, 5, 12, 0x13])), p.UnknownMessage)
    codes = bytearray(p.codes_from_placement(START))
    codes[20] = 0x22
    assert isinstance(parse_one(p.encode_board_dump(bytes(codes))), p.UnknownMessage)


# -- commands as the board reads them --------------------------------------------


def test_command_parser_reads_single_bytes_and_clock_frames():
    stream = p.update_nice() + p.clock_set_and_run(60, 30) + p.request_board() + p.clock_end()
    parser = p.CommandParser()
    commands = parser.feed(stream[:5]) + parser.feed(stream[5:])
    assert [c.code for c in commands] == [0x4B, 0x2B, 0x42, 0x2B]
    assert commands[1].clock == p.Clock.SETNRUN and commands[1].payload == bytes(
        [0, 1, 0, 0, 0, 30, 0x0B]
    )
    assert commands[3].clock == p.Clock.END and commands[3].valid


def test_eeprom_log_events_are_read_in_order():
    # power-up, begin position, e2 empty (quick), e4 white pawn, left clock 0:04:59, eof
    data = bytes([0x6A, 0x6F, 0x50, 52, 0x41, 36, 0x70, 0x04, 0x59, 0x6B, 0x7E])
    events = parse_one(p.encode_ee_moves(data)).events()
    assert events == [
        p.EeTag("powerup", 0x6A),
        p.EeTag("beginpos", 0x6F),
        p.EePieceChange(square=52, code=0, quick=True),
        p.EePieceChange(square=36, code=1, quick=False),
        p.EeClockTime(left=True, hours=0, minutes=4, seconds=59),
        p.EeTag("eof", 0x6B),
        p.EeTag("unknown", 0x7E),
    ]
