"""Environment variables that override single keys: ``DGT_BRIDGE_<SECTION>__<KEY>``
(double underscore between levels, case-insensitive), the value read as a YAML
scalar, e.g. ``DGT_BRIDGE_BROADCAST__PORT=9000`` or ``DGT_BRIDGE_SPEECH__ENGINE=text``.

They are put into the file's node tree before it is bound, so they are validated
like the file; each value node is marked with its variable's name, so an error names
the variable instead of a line (systemd units and containers set keys this way).
"""

from __future__ import annotations

from collections.abc import Mapping

from daemon.config import nodes
from daemon.config.nodes import (
    MAP,
    NULL,
    Light,
    LightMark,
    Node,
    is_mapping,
    is_scalar,
    is_sequence,
)

ENV_PREFIX = "DGT_BRIDGE_"
#: Variables with the prefix that are not key overrides (the last: the tests' self-check
#: of the hub's kept page states, ``daemon.broadcast.hub.CHECK_KEPT_TEXTS``).
ENV_RESERVED = frozenset({"DGT_BRIDGE_CONFIG", "DGT_BRIDGE_SHARED", "DGT_BRIDGE_SHIPPED_CONFIG",
                          "DGT_BRIDGE_CHECK_KEPT_TEXTS"})  # fmt: skip


def overrides(environ: Mapping[str, str]) -> list[str]:
    """The names of the variables that override keys, in order."""
    return [
        name
        for name in sorted(environ)
        if name.upper().startswith(ENV_PREFIX) and name.upper() not in ENV_RESERVED
    ]


def apply_environment(root: Node | None, environ: Mapping[str, str]) -> Node:
    """Put ``DGT_BRIDGE_<SECTION>__<KEY>`` overrides into the node tree; each new value
    node is marked with its variable's name so errors point there."""
    if root is None or (is_scalar(root) and root.tag == NULL):
        root = Light("mapping", MAP, [], LightMark("<empty>", 0))
    names = overrides(environ)
    if not names:
        return root
    yaml = nodes.yaml_module()
    for name in names:
        path = [p.lower() for p in name[len(ENV_PREFIX) :].split("__")]
        if not all(path) or not is_mapping(root):
            continue
        # No buffer, so no snippet in the message: PyYAML itself makes such marks.
        mark = yaml.Mark(f"environment {name}", 0, 0, 0, None, None)
        value_node = _scalar_from_text(environ[name], mark)
        target = root
        for depth, part in enumerate(path):
            last = depth == len(path) - 1
            found = None
            for i, (key_node, child) in enumerate(target.value):
                if is_scalar(key_node) and key_node.value == part:
                    found = (i, child)
                    break
            key_node = yaml.ScalarNode("tag:yaml.org,2002:str", part, mark, mark)
            if last:
                if found is None:
                    target.value.append((key_node, value_node))
                else:
                    target.value[found[0]] = (target.value[found[0]][0], value_node)
            else:
                if found is None or not is_mapping(found[1]):
                    child = yaml.MappingNode("tag:yaml.org,2002:map", [], mark, mark)
                    if found is None:
                        target.value.append((key_node, child))
                    else:
                        target.value[found[0]] = (target.value[found[0]][0], child)
                    target = child
                else:
                    target = found[1]
    return root


def _scalar_from_text(text: str, mark: Node) -> Node:
    yaml = nodes.yaml_module()
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        node = None
    if node is None:
        node = yaml.ScalarNode("tag:yaml.org,2002:null", "", mark, mark)
    _remark(node, mark)
    return node


def _remark(node: Node, mark: Node) -> None:
    node.start_mark = node.end_mark = mark
    if is_mapping(node):
        for k, v in node.value:
            _remark(k, mark)
            _remark(v, mark)
    elif is_sequence(node):
        for v in node.value:
            _remark(v, mark)
