"""Synthetic traces from the benchmark generator (``bench/gen_traces.py``) for tests that
need many realistic traces without a capture."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def generate_traces(out: Path, traces: int, batch: int, *, jsonl: bool = True) -> Path:
    """Write ``traces`` generated traces to ``out`` (requests of ``batch`` spans, as OTLP/JSON
    lines or protobuf) and return the file written."""
    spec = importlib.util.spec_from_file_location("gen_traces", REPO / "bench" / "gen_traces.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_traces", gen)  # dataclasses look their module up there
    spec.loader.exec_module(gen)
    gen.generate(gen.Params(traces=traces, batch=batch), out, jsonl=jsonl)
    return out / ("traces.jsonl" if jsonl else "traces.binpb")
