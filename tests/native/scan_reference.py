"""The scan text and pattern search as the Python implementation defined them before the
core took them over (``otel_oracles.model.step`` up to that change), kept here only as the
reference the native ones are compared with (tests/native/test_native_scan.py).

The rules, verbatim: an AgentBench step's text is ``json.dumps(raw, ensure_ascii=False,
sort_keys=True, default=str)``; a trace-derived step's is the sorted JSON of
``model_dump(mode="json", exclude_none=True)`` without provenance (``NOT_BEHAVIOUR``), then
every string leaf and key of that dump, one per line, and the strings inside strings that hold
a JSON object or array (``json.loads``), to 32 levels and for strings of at most 2**20
characters. A pattern occurs when its ``str.lower()`` is a substring of the text's
``str.lower()``.
"""

from __future__ import annotations

import json
from typing import Any

from otel_oracles.model.step import Step

NOT_BEHAVIOUR = {"source", "convention", "index", "raw", "tools_offered"}
"""Provenance, and the tools a model call offered (the framework's configuration, not what
the agent did: left out of the scan text since ``Step.tools_offered`` was added)."""
SORTED_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
SCAN_NESTED_JSON_BYTES = 1 << 20
SCAN_MAX_DEPTH = 32


def raw_json(step: Step) -> str:
    if step.raw is not None:
        return json.dumps(step.raw, ensure_ascii=False, sort_keys=True, default=str)
    data = step.model_dump(mode="json", exclude_none=True, exclude=NOT_BEHAVIOUR)
    return SORTED_JSON.encode(data)


def scan_text(step: Step) -> str:
    if step.raw is not None:
        return raw_json(step)
    data = step.model_dump(mode="json", exclude_none=True, exclude=NOT_BEHAVIOUR)
    found: list[str] = [SORTED_JSON.encode(data)]
    collect_strings(data, found, 0)
    return "\n".join(found)


def collect_strings(value: Any, out: list[str], depth: int) -> None:
    if depth > SCAN_MAX_DEPTH:
        return
    if isinstance(value, str):
        out.append(value)
        head = value.lstrip()[:1]
        if head in ("{", "[") and len(value) <= SCAN_NESTED_JSON_BYTES:
            try:
                parsed = json.loads(value)
            except (ValueError, RecursionError):
                return
            if isinstance(parsed, (dict, list)):
                collect_strings(parsed, out, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            out.append(str(key))
            collect_strings(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value:
            collect_strings(item, out, depth + 1)


def occurring(patterns: tuple[str, ...], text: str) -> list[int]:
    """Indexes of ``patterns`` found in ``text`` case-insensitively (the old per-pattern
    ``in`` loop)."""
    lowered = text.lower()
    return [i for i, p in enumerate(patterns) if p.lower() in lowered]
