"""What kind of file a path holds (contract, trajectory, manifest, mapping file, OTLP data,
serve config), told from its top-level keys. ``validate`` routes files by it, and the
commands that read traces use ``looks_like`` for the hint after an input that is no trace data;
a module of its own so those commands do not import ``validate``'s loaders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from otel_oracles.config_yaml import load_yaml, read_config_bytes


def _peek(path: Path) -> Any:
    """The decoded document, or ``None`` when it does not parse (the loader reports why)."""
    try:
        text = read_config_bytes(path).decode("utf-8")
        return json.loads(text) if path.suffix == ".json" else load_yaml(text)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError, yaml.YAMLError):
        return None


def classify(path: Path) -> str:
    """``trajectory`` ({"steps": ...}), ``manifest`` (task_files / task_subset),
    ``conventions`` (a mapping file: ``rules``) or ``contract`` (everything else, including
    AgentBench tasks)."""
    data = _peek(path)
    if isinstance(data, dict):
        if "steps" in data and "oracles" not in data:
            return "trajectory"
        if "task_files" in data or "task_subset" in data:
            return "manifest"
        if OTLP_KEYS & data.keys():
            return "otlp"
        if "id" not in data and SERVE_KEYS & data.keys():
            return "serve-config"
        if "rules" in data and not CONTRACT_LAYER_KEYS & data.keys():
            return "conventions"
    return "contract"


SERVE_KEYS = frozenset({"receivers", "grading", "assembly"})
OTLP_KEYS = frozenset({"resourceSpans", "resourceLogs", "resourceMetrics"})
CONTRACT_LAYER_KEYS = frozenset({"invariants", "oracles", "evidence", "tolerances", "budget"})
PEEK_MAX_BYTES = 1 << 20
"""Files larger than this are never read for a wrong-place hint."""

WRONG_PLACE: dict[str, str] = {
    "contract": "a contract or task: give it with --contracts",
    "trajectory": "an AgentBench trajectory: grade it with 'otel-oracles run TASK -t FILE'",
    "manifest": "a gate manifest: use 'otel-oracles gate --manifest FILE'",
}


def looks_like(path: Path) -> str | None:
    """What a file given as trace input really is, when it is a contract, task, trajectory or
    manifest (for the hint after its decode error); ``None`` otherwise."""
    try:
        if not path.is_file() or path.stat().st_size > PEEK_MAX_BYTES:
            return None
    except OSError:
        return None
    data = _peek(path)
    if not isinstance(data, dict):
        return None
    kind = classify(path)
    if kind == "contract" and not CONTRACT_LAYER_KEYS & data.keys():
        return None
    return WRONG_PLACE.get(kind)
