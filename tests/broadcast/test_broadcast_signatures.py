"""A board's signature as the relay reads it (``boardkeys``): found at the message's
end only, checked over the very bytes signed, whatever white space follows it."""

from __future__ import annotations

import json

from daemon.broadcast import boardkeys

KEY = boardkeys.board_key("the signatures test's hall key", "open", "1")
OTHER = boardkeys.board_key("the signatures test's hall key", "open", "2")
TOPIC = "dgt-bridge/open/3/1/state"


def _state(plies: int) -> bytes:
    moves = [
        {"ply": n, "uci": "e2e4", "san": "e4", "clock": {"white": 5400.0}} for n in range(plies)
    ]
    return json.dumps({"origin": "abc", "seq": plies, "moves": moves}).encode()


def test_a_signed_state_verifies_for_its_board_and_topic_only():
    signed = boardkeys.sign(KEY, TOPIC, _state(300))
    assert signed.endswith(b'"}') and boardkeys.is_signed(signed)
    assert boardkeys.verify(KEY, TOPIC, signed)
    assert boardkeys.verify(KEY, TOPIC, signed + b"\r\n ")  # white space after it
    assert not boardkeys.verify(OTHER, TOPIC, signed)  # another board's key
    assert not boardkeys.verify(KEY, TOPIC.replace("/1/", "/2/"), signed)  # another topic
    assert not boardkeys.verify(KEY, TOPIC, signed.replace(b"e2e4", b"e2e3", 1))  # changed


def test_a_signature_counts_only_at_the_end():
    signed = boardkeys.sign(KEY, TOPIC, _state(3))
    inside = b'{"note":' + json.dumps(signed.decode()).encode() + b',"x":1}'
    assert not boardkeys.is_signed(inside) and not boardkeys.verify(KEY, TOPIC, inside)
    assert not boardkeys.is_signed(signed[:-1]) and not boardkeys.is_signed(b"")
    unsigned = _state(3)
    assert boardkeys.signature(unsigned) is None and not boardkeys.verify(KEY, TOPIC, unsigned)
    short = signed[:-10] + signed[-9:]  # one hex digit less
    assert not boardkeys.is_signed(short)
