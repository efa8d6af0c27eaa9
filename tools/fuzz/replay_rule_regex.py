"""Replay a corpus of the native ``rule_regex`` fuzz target against Python's regex engine.

Usage:
    python tools/fuzz/replay_rule_regex.py DIR

Each file of DIR is one input as the target reads it (``native/fuzz/src/lib.rs``,
``rule_regex_case``): split at NUL bytes, the pattern then the texts, each as UTF-8 with
invalid sequences replaced. The libFuzzer run explores the core's plans by coverage but can
only check them against themselves; this checks each input's pattern and texts through the
compiled ``RuleTable`` (a span-name condition) against ``regex.search``, the one meaning of a
conventions regex. Prints the disagreements and exits 1 when there is one.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from otel_oracles._native import RuleTable


@dataclass
class _Span:
    """What a rule table reads of a span for a span-name condition."""

    name: str
    scope_name: str = "s"
    kind: int = 1
    status_code: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)
    span_id: bytes = b"x"


def disagreements(data: bytes) -> list[tuple[str, str, bool]]:
    """``(pattern, text, python's answer)`` where the table answers otherwise."""
    pattern, *texts = (part.decode("utf-8", "replace") for part in data.split(b"\0"))
    try:
        compiled = regex.compile(pattern)
    except (regex.error, RecursionError, OverflowError):
        return []  # a conventions file with this pattern is refused when it is validated
    table = RuleTable(
        [([("span_name", 0, None)], [])],
        [],
        [],
        [pattern],
        lambda _, text: compiled.search(text) is not None,
    )
    spans: list[Any] = [_Span(t) for t in texts]
    chosen = table.select(spans, {})
    return [
        (pattern, text, compiled.search(text) is not None)
        for text, rule in zip(texts, chosen, strict=True)
        if (rule == 0) != (compiled.search(text) is not None)
    ]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = 0
    files = sorted(p for p in Path(argv[1]).iterdir() if p.is_file())
    for path in files:
        for pattern, text, python in disagreements(path.read_bytes()):
            found += 1
            print(f"{path.name}: {pattern!r} on {text!r}: Python says {python}")
    print(f"{len(files)} inputs, {found} disagreements")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
