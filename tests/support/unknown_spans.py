"""Real captures with one span added that no convention knows, the way an unknown framework
would record a tool call beside the recognised steps: the input the fail-closed rules exist
for (DESIGN section 8), derived at test time from a real OTLP/JSON export."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def _documents(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def with_unknown_leaf(source: Path, out: Path, name: str = "lookup_customer") -> Path:
    """Write ``source`` to ``out`` (JSON lines) with one more span, ``name``, a leaf under the
    trace's root span with no attributes at all."""
    docs = _documents(source)
    spans = [
        (scope, span)
        for doc in docs
        for rs in doc["resourceSpans"]
        for scope in rs["scopeSpans"]
        for span in scope["spans"]
    ]
    scope, root = next((sc, s) for sc, s in spans if not s.get("parentSpanId"))
    start = int(root["startTimeUnixNano"])
    scope["spans"].append(
        {
            "traceId": root["traceId"],
            "spanId": os.urandom(8).hex(),
            "parentSpanId": root["spanId"],
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(start + 1),
            "endTimeUnixNano": str(start + 2),
        }
    )
    out.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    return out


def without_attributes(source: Path, out: Path, keys: set[str]) -> Path:
    """Write ``source`` to ``out`` (JSON lines) with every span attribute whose key is in
    ``keys`` left out: the same run as a tracer that records less would export it (another
    version, or a content setting that drops one field and keeps the rest)."""
    docs = _documents(source)
    for doc in docs:
        for rs in doc["resourceSpans"]:
            for scope in rs["scopeSpans"]:
                for span in scope["spans"]:
                    span["attributes"] = [
                        a for a in span.get("attributes", []) if a["key"] not in keys
                    ]
    out.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    return out
