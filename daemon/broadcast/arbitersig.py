"""The arbiter's signature on an MQTT event: what a board's login alone cannot forge.

A board's broker login may write its board's topics, so a relay cannot tell the
board's daemon from anyone holding that login. Most of what a board says the
relay checks by the rules (``relayrules``); but two things the rules cannot
decide, because a real arbiter does them: a result changed once given, and a new
game over a finished one. The daemon marks each event an arbiter's request made
(``"arbiter": true``, the console's or curl's POST with the token), and with
``broadcast.mqtt.arbiter_key`` set it signs those events' envelopes with an HMAC
the relay checks (``dgt-bridge relay --arbiter-key-file``). Without the key, a
login can still send ``"arbiter": true``: the relay believes it only when signed.

The signature covers the whole envelope (origin, seq, prev, board and event), so
it cannot be moved to another event, board or run; a replay of the same signed
envelope is a duplicate to the relay. The JSON is made canonical (sorted keys, no
blanks, ASCII) before it is signed, so both sides sign the same bytes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from typing import Any

#: What the signed bytes start with: a key used elsewhere signs nothing here.
DOMAIN = b"dgt-bridge arbiter event v1\n"
SIGNATURE = re.compile(r"^[0-9a-f]{64}$")


def _canonical(envelope: dict[str, Any]) -> bytes:
    unsigned = {key: value for key, value in envelope.items() if key != "sig"}
    text = json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)  # fmt: skip
    return DOMAIN + text.encode("ascii")


def sign(envelope: dict[str, Any], key: str) -> str:
    """The hex HMAC-SHA256 of ``envelope`` (without any ``sig``) under ``key``."""
    return hmac.new(key.encode(), _canonical(envelope), hashlib.sha256).hexdigest()


def signed(envelope: dict[str, Any], key: str | None) -> bool:
    """Whether ``envelope`` carries a good signature under ``key`` (never without
    a key); compared in constant time."""
    offered = envelope.get("sig")
    if not key or not isinstance(offered, str) or not SIGNATURE.match(offered):
        return False
    try:
        expected = sign(envelope, key)
    except (TypeError, ValueError):  # not JSON as we sign it
        return False
    return hmac.compare_digest(expected, offered)


def game_key(start_fen: str, ucis: list[str]) -> str:
    """A short name of one game (its start placement and moves): a signed event
    says which game it is about, so a relay holding a board's restart aside applies
    the arbiter's result to the game the arbiter meant."""
    placement = " ".join(str(start_fen).split()[:3])
    text = placement + " " + " ".join(ucis)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
