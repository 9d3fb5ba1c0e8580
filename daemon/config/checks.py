"""Values the types allow but ``run`` would die on: ranges and forms checked as a key
is bound, so the message names the file, the line and the key like any other."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from daemon.config.nodes import Node, is_scalar
from daemon.config.sections import BOARD_ID


def _port(lowest: int) -> Callable[[Any, Node], str | None]:
    def check(value: Any, node: Node) -> str | None:
        if not lowest <= value <= 65535:
            return f"a TCP port is {lowest} to 65535, not {value}"
        return None

    return check


def _at_least(lowest: float, what: str = "") -> Callable[[Any, Node], str | None]:
    def check(value: Any, node: Node) -> str | None:
        if value < lowest:
            return f"must be at least {lowest:g}{what}, not {value:g}"
        return None

    return check


def _positive(value: Any, node: Node) -> str | None:
    return None if value > 0 else f"must be more than 0, not {value:g}"


def _host(value: Any, node: Node) -> str | None:
    """An address to listen on or connect to: an IP address or a host name."""
    import ipaddress

    if value in ("", "localhost"):
        return None
    try:
        ipaddress.ip_address(value)
        return None
    except ValueError:
        pass
    labels = value.rstrip(".").split(".")
    if len(value) <= 253 and all(_HOST_LABEL.fullmatch(label) for label in labels):
        return None
    return f"not an IP address or host name: {value!r}"


#: The broadcast hub's rule for board ids (``daemon.broadcast.hub.BOARD_ID``, which


def _board_id(value: Any, node: Node) -> str | None:
    """The rule the broadcast applies when it starts (ids appear in URLs and topics)."""
    if BOARD_ID.match(value):
        return None
    return f"{value!r} is not a board id: use 1-32 letters, digits, '-' or '_'"


def _unique_board_ids(value: Any, node: Node) -> str | None:
    ids = [getattr(board, "id", None) for board in value]
    twice = sorted({str(i) for i in ids if ids.count(i) > 1})
    return f"board id {twice[0]!r} appears twice" if twice else None


def _path_text(value: Any, node: Node) -> str | None:
    """A directory is written as text; a bare number is most likely a slip."""
    if is_scalar(node) and node.tag in (
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
    ):
        return f"expected a path (text), got the number {node.value}; quote it if meant"
    if "\0" in value:
        return "a path cannot contain a NUL character"
    return None


def _readable_file(value: Any, node: Node) -> str | None:
    """A file the daemon reads at start (a TLS certificate or key); empty: none."""
    if not value:
        return None
    try:
        with open(value, "rb"):
            return None
    except OSError as exc:
        return f"cannot read {value}: {exc.strerror or exc}"


_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")

#: Dotted key (list items as ``[]``) -> a check of the bound value: ranges and forms
#: that the types allow but the part using the value would refuse at start-up or
#: later (a port above 65535 kills the web server's bind). Parts' own dataclasses
#: check the rest in ``__post_init__``; both give the same file/line/key message.
VALUE_CHECKS: dict[str, Callable[[Any, Node], str | None]] = {
    "broadcast.port": _port(0),
    "broadcast.address": _host,
    "broadcast.boards": _unique_board_ids,
    "broadcast.boards[].id": _board_id,
    "boards[].id": _board_id,
    "boards[].diverge_after": _positive,
    "broadcast.client_queue": _at_least(1),
    "broadcast.write_timeout": _positive,
    "broadcast.history": _at_least(1),
    "broadcast.keepalive": _positive,
    "broadcast.max_body": _at_least(1, " bytes"),
    "broadcast.max_viewers_per_address": _at_least(1),
    "broadcast.tls_certificate": _readable_file,
    "broadcast.tls_key": _readable_file,
    "broadcast.mqtt.port": _port(1),
    "broadcast.mqtt.host": _host,
    "broadcast.mqtt.keepalive": _at_least(1, " s"),
    "broadcast.mqtt.buffer": _at_least(1),
    "speech.stale_after": _positive,
    "speech.repeat_window": _at_least(0),
    "speech.repeat_moves": _at_least(1),
    "speech.max_interruptions": _at_least(0),
    "storage.directory": _path_text,
}


def check_value(path: str, value: Any, node: Node) -> str | None:
    """What is wrong with a bound value that its type allows, or None."""
    check = VALUE_CHECKS.get(re.sub(r"\[\d+\]", "[]", path))
    if check is None or value is None:
        return None
    return check(value, node)
