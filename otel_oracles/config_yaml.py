"""YAML for configuration files (contracts, tasks, conventions, serve config), bounded.

YAML anchors and aliases share one node many times; PyYAML builds the shared object once,
but whatever walks the result afterwards (validation, hashing, dumping params) expands every
reference. Nine anchors of nine aliases each are 640 bytes and a billion leaves: ``validate``
grew to 4.3 GB on one. So a document is composed first, its size *with aliases expanded* is
counted on the node graph (each shared node once, so counting costs the file's size), and a
document past ``MAX_EXPANDED_NODES`` is refused before anything is built. Files larger than
``config_bytes.MAX_CONFIG_BYTES`` are refused unread. Both errors are ``yaml.YAMLError``s here
(``read_config_bytes``), so every loader reports them the way it reports a syntax error: one
line naming the file; the contract and mapping loaders read through ``config_bytes`` directly,
so a start whose files come from the cache imports no YAML.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from otel_oracles import config_bytes

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_EXPANDED_NODES = 100_000
"""Most YAML nodes a document may stand for once aliases are expanded: far above any real
contract (hundreds) and far below what hurts (a billion)."""


class YamlLimitError(yaml.YAMLError):
    """A configuration document past one of this module's bounds."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def read_config_bytes(path: Path) -> bytes:
    """The file's bytes; ``YamlLimitError`` when it is larger than ``MAX_CONFIG_BYTES``
    (``OSError`` as from ``open``), for callers that report it as they report bad YAML."""
    try:
        return config_bytes.read_config_bytes(path)
    except config_bytes.ConfigTooLarge as exc:
        raise YamlLimitError(exc.problem) from None


def load_yaml(text: str | bytes) -> Any:
    """``yaml.safe_load`` of one document, refusing alias expansion past
    ``MAX_EXPANDED_NODES`` (``YamlLimitError``) and any other YAML error as usual."""
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        expanded = expanded_size(node)
        if expanded > MAX_EXPANDED_NODES:
            raise YamlLimitError(
                f"anchors and aliases expand to more than {MAX_EXPANDED_NODES} nodes "
                "(an alias bomb?); refused"
            )
        _refuse_unreadable_integers(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def expanded_size(root: yaml.Node) -> int:
    """Nodes ``root`` stands for with every alias expanded, counted without expanding (each
    distinct node once, iteratively: nesting depth costs no stack). Stops counting past
    ``MAX_EXPANDED_NODES``; a node that contains itself counts as past it."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        children = _children(node)
        if children_done:
            visiting.discard(key)
            total = 1 + sum(sizes[id(c)] for c in children)
            sizes[key] = min(total, MAX_EXPANDED_NODES + 1)
            continue
        if key in visiting:
            return MAX_EXPANDED_NODES + 1  # recursive: expands without end
        visiting.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in visiting:
                return MAX_EXPANDED_NODES + 1
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


_INT_TAG = "tag:yaml.org,2002:int"


def _refuse_unreadable_integers(root: yaml.Node) -> None:
    """A decimal integer longer than Python reads from text (``sys.get_int_max_str_digits``,
    4,300 digits by default) would raise ``ValueError`` from inside PyYAML's constructor, a
    traceback with no place in the file; here it is a YAML error at its line and column, as
    any other value YAML cannot make. Hexadecimal, octal and binary integers are read
    whatever their length, as Python reads them."""
    limit = sys.get_int_max_str_digits()
    if limit == 0:
        return
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if node.tag == _INT_TAG and len(node.value) > limit:
                digits = node.value.lstrip("+-").replace("_", "")
                if not digits.startswith(("0x", "0o", "0b")) and len(digits) > limit:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"an integer of {len(digits)} digits: at most {limit} are read",
                        node.start_mark,
                    )
            continue
        stack.extend(_children(node))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
