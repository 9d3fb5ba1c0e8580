"""Per-board keys: what a board's broker login alone cannot forge (issue 24).

A board's broker login may write its board's topics, so without more a relay
cannot tell the board's daemon from anyone holding that login (the password is
on the Pi, and the Pi is in the hall). So every message a daemon publishes is
signed with its board's own key, and a relay given the hall's key takes only
messages signed with the right board's key:

- the **hall key** is a secret only the relay holds (``dgt-bridge relay
  --hall-key-file``);
- a **board key** is ``HMAC-SHA256(hall key, label)``, the label naming the
  tournament and the board (``board_key``); ``dgt-bridge relay --print-board-key
  N`` prints it, and board N's Pi holds it alone (``broadcast.mqtt.board_key_file``).
  So a stolen Pi signs for its own boards only, and nobody derives another
  board's key from it.

The signature is an HMAC-SHA256 of the board key over the topic the message is
published on and the message's bytes, appended as the JSON object's last member
(``,"sig":"<64 hex>"}``): it covers origin, seq, prev, board and payload, and the
topic names the tournament, the round, the board and the kind (events, state,
status), so a signed message cannot be moved to another board, round or kind. A
byte-for-byte replay keeps its signature: the relay's origin and seq rules drop it.

Signed as bytes, not as re-serialised JSON: the daemon signs exactly what it
sends and the relay checks exactly what it received, without a canonical form
(a state holds the whole game, up to a megabyte).

Pure, no I/O but reading the key files.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from pathlib import Path

#: What a board key is derived from, beside the hall key: another use of the
#: hall key never gives a board key.
KEY_LABEL = b"dgt-bridge board key v1\n"
#: What the signed bytes start with: a key used elsewhere signs nothing here.
DOMAIN = b"dgt-bridge board message v1\n"
#: A board key as written in its file: 64 hexadecimal characters (32 bytes).
BOARD_KEY = re.compile(r"^[0-9a-f]{64}$")
#: The signature at the end of a signed message (white space may follow it).
_SIGNED_TAIL = re.compile(rb',"sig":"([0-9a-f]{64})"\}')
#: Its length: it is looked for at the message's end only, never searched for (a
#: state is up to a megabyte).
_TAIL_LENGTH = len(',"sig":"}"') + 64
#: The shortest hall key taken: anything shorter is no secret.
MIN_HALL_KEY = 16
#: What ``{board}`` in ``board_key_file`` stands for.
BOARD_PLACEHOLDER = "{board}"

HOW_TO_MAKE = "dgt-bridge relay --hall-key-file HALL.key --tournament T --print-board-key N"


class BoardKeyError(ValueError):
    """A key file that cannot be used; the message says why and what to do."""


def board_key(hall_key: str, tournament: str, board: str) -> str:
    """Board ``board``'s key in ``tournament`` (both as topic levels), in hex."""
    label = KEY_LABEL + tournament.encode() + b"\n" + board.encode()
    return hmac.new(hall_key.encode(), label, hashlib.sha256).hexdigest()


def check_hall_key(text: str) -> str:
    """The hall key from its file's text, or ``BoardKeyError``."""
    key = text.strip()
    if len(key) < MIN_HALL_KEY:
        raise BoardKeyError(
            f"a hall key has at least {MIN_HALL_KEY} characters "
            "(head -c 32 /dev/urandom | base64 makes one)"
        )
    return key


def key_file_for(template: str, board: str) -> str:
    """The key file of ``board`` (a topic level) for ``board_key_file``: its
    ``{board}`` replaced, so one daemon of many boards names one file a board."""
    return template.replace(BOARD_PLACEHOLDER, board)


def read_board_key(path: str) -> str:
    """The board key in ``path``, or ``BoardKeyError`` saying what is wrong with it."""
    try:
        text = Path(path).read_text(encoding="ascii")
    except FileNotFoundError:
        raise BoardKeyError(f"{path}: no such file (make it with {HOW_TO_MAKE})") from None
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise BoardKeyError(f"{path}: cannot be read: {why}") from None
    key = text.strip().lower()
    if not BOARD_KEY.match(key):
        raise BoardKeyError(
            f"{path}: not a board key: it holds the 64 hexadecimal characters that "
            f"{HOW_TO_MAKE} prints"
        )
    return key


def read_board_keys(template: str, boards: Iterable[str]) -> dict[str, str]:
    """Each board's key, read from its file (``key_file_for``), or ``BoardKeyError``
    naming the first board whose key cannot be used. Read once, at start-up: the
    configuration's check hands the keys to the publishers."""
    keys = {}
    for board in dict.fromkeys(boards):
        try:
            keys[board] = read_board_key(key_file_for(template, board))
        except BoardKeyError as exc:
            raise BoardKeyError(f"board {board}'s key {exc}") from None
    return keys


def _mac(key: str, topic: str, body: memoryview | bytes, end: bytes = b"") -> str:
    """The HMAC of ``body`` then ``end`` for ``topic``, fed in parts: the message
    (up to a megabyte) is never copied for it."""
    mac = hmac.new(bytes.fromhex(key), DOMAIN, hashlib.sha256)
    mac.update(topic.encode() + b"\n")
    mac.update(body)
    mac.update(end)
    return mac.hexdigest()


def sign(key: str, topic: str, body: bytes) -> bytes:
    """``body`` (a JSON object's bytes) with its signature as its last member."""
    body = body.rstrip()
    if not body.startswith(b"{") or not body.endswith(b"}") or body == b"{}":
        raise ValueError("only a non-empty JSON object is signed")
    return body[:-1] + b',"sig":"' + _mac(key, topic, body).encode() + b'"}'


def signature(payload: bytes) -> re.Match[bytes] | None:
    """The signature ending ``payload`` (good or not), None when it has none: its
    group 1 is the signature's hex, its ``start()`` where the signed object's
    ``}`` was. Found at the end only (``is_signed`` and ``verify`` both ask it)."""
    end = len(payload.rstrip())
    return _SIGNED_TAIL.fullmatch(payload, max(0, end - _TAIL_LENGTH), end)


def is_signed(payload: bytes) -> bool:
    """Whether ``payload`` ends with a signature (good or not)."""
    return signature(payload) is not None


def verify(key: str, topic: str, payload: bytes, tail: re.Match[bytes] | None = None) -> bool:
    """Whether ``payload`` carries a good signature of ``key`` for ``topic``;
    compared in constant time. ``tail``: its ``signature``, when the caller has
    looked for it already."""
    tail = tail or signature(payload)
    if tail is None:
        return False
    body = memoryview(payload)[: tail.start()]  # the signed object without its "}"
    return hmac.compare_digest(_mac(key, topic, body, b"}"), tail.group(1).decode())
