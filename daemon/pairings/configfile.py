"""A round's pairings written into the configuration file's ``boards:`` list.

The organiser's file keeps its comments and layout: only the values of ``white:``,
``black:`` (of each board whose id is the board's number) and ``broadcast.round:``
change, edited where they stand in the text (the YAML nodes' own positions); a
missing key is added beside the others. Pure: text in, text out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from daemon.pairings.files import Pairing
from drivers.records import FrozenRecord


class ConfigEditError(ValueError):
    """The configuration cannot take the pairings (no ``boards:`` list, bad YAML)."""


@dataclass(eq=False, repr=False)
class _Edit(FrozenRecord):
    start: int
    end: int
    text: str


def _quoted(value: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is one)."""
    return json.dumps(value, ensure_ascii=False)


def _value(mapping: MappingNode, key: str) -> Node | None:
    for key_node, value_node in mapping.value:
        if isinstance(key_node, ScalarNode) and key_node.value == key:
            return value_node
    return None


def board_id(pairing: Pairing, first_board: int = 1) -> str:
    """The configuration's id of a pairing's board: its number, counted from ``first_board``."""
    return str(pairing.board - 1 + first_board)


def name_boards(
    text: str, pairings: Iterable[Pairing], round_: str, *, first_board: int = 1
) -> tuple[str, list[str]]:
    """The configuration text with each listed board's players and the round set;
    and the boards of the pairings that the configuration does not list."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as error:
        raise ConfigEditError(f"the configuration is not valid YAML: {error}") from None
    if not isinstance(root, MappingNode):
        raise ConfigEditError("the configuration has no sections")
    boards = _value(root, "boards")
    if not isinstance(boards, SequenceNode) or not boards.value:
        raise ConfigEditError(
            "the configuration lists no boards: (dgt-bridge devices --bus prints the list "
            "to paste), so there is nowhere to write the players"
        )
    by_id: dict[str, MappingNode] = {}
    for entry in boards.value:
        if isinstance(entry, MappingNode):
            node = _value(entry, "id")
            if isinstance(node, ScalarNode):
                by_id[node.value] = entry
    edits: list[_Edit] = []
    missing: list[str] = []
    for pairing in pairings:
        entry = by_id.get(board_id(pairing, first_board))
        if entry is None:
            missing.append(board_id(pairing, first_board))
            continue
        edits.extend(_set(text, entry, {"white": pairing.white, "black": pairing.black}))
    broadcast = _value(root, "broadcast")
    if isinstance(broadcast, MappingNode):
        edits.extend(_set(text, broadcast, {"round": round_}))
    else:
        edits.append(_Edit(len(text), len(text), f"\nbroadcast:\n  round: {_quoted(round_)}\n"))
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.text + text[edit.end :]
    return text, missing


def _set(text: str, mapping: MappingNode, values: dict[str, str]) -> list[_Edit]:
    """Edits that give ``mapping``'s keys these values: replaced where they stand, or
    added after the mapping's last key (a flow mapping ``{...}`` before its brace)."""
    edits = []
    added = []
    for key, value in values.items():
        node = _value(mapping, key)
        if node is not None:
            edits.append(_Edit(node.start_mark.index, node.end_mark.index, _quoted(value)))
        else:
            added.append((key, value))
    if not added:
        return edits
    if mapping.flow_style:
        brace = text.rindex("}", 0, mapping.end_mark.index)
        body = "".join(f", {k}: {_quoted(v)}" for k, v in added)
        edits.append(_Edit(brace, brace, body))
        return edits
    first_key = mapping.value[0][0]
    indent = " " * first_key.start_mark.column
    last_value = mapping.value[-1][1]
    line_end = text.find("\n", last_value.end_mark.index - 1)
    at = len(text) if line_end < 0 else line_end
    body = "".join(f"\n{indent}{k}: {_quoted(v)}" for k, v in added)
    edits.append(_Edit(at, at, body))
    return edits
