"""AG2's accounting spans (``record_usage <kind>``) in a real capture (tests/testdata/traces/
ag2-native): the kinds that repeat a traced model call's usage are no steps, so tokens are
counted once; the kinds that record model calls no other span shows stay unrecognised, so
checks that need every span fail closed instead of passing on a partial view."""

from __future__ import annotations

import json
from pathlib import Path

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.result import InputProblem
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import read_traces

CAPTURE = Path(__file__).resolve().parents[1] / "testdata/traces/ag2-native/b_tool_retry.otlp.json"


def _with_usage_kind(kind: str, out: Path) -> Path:
    """The capture with its first ``record_usage`` span turned into one of ``kind``."""
    doc = json.loads(CAPTURE.read_text())
    spans = [
        span
        for rs in doc["resourceSpans"]
        for scope in rs["scopeSpans"]
        for span in scope["spans"]
        if span["name"].startswith("record_usage ")
    ]
    span = spans[0]
    span["name"] = f"record_usage {kind}"
    for attr in span["attributes"]:
        if attr["key"] == "ag2.usage.kind":
            attr["value"] = {"stringValue": kind}
    out.write_text(json.dumps(doc))
    return out


def _mapped(path: Path) -> Trajectory:
    problems: list[InputProblem] = []
    traces = list(read_traces([str(path)], problems))
    assert problems == [] and len(traces) == 1
    return map_trace(traces[0], load_conventions())


def test_repeated_usage_is_no_step_and_tokens_are_counted_once() -> None:
    trajectory = _mapped(CAPTURE)
    assert trajectory.unmapped_spans == {}
    chats = list(trajectory.generations())
    assert len(chats) == 3
    # Each record_usage model_call span repeats its chat span's usage: counted once.
    assert trajectory.token_usage() == (
        sum(s.input_tokens or 0 for s in chats),
        sum(s.output_tokens or 0 for s in chats),
    )


def test_compaction_and_aggregation_usage_stay_unrecognised(tmp_path: Path) -> None:
    for kind in ("compaction", "aggregation"):
        trajectory = _mapped(_with_usage_kind(kind, tmp_path / f"{kind}.json"))
        assert trajectory.unmapped_spans == {f"record_usage {kind}": 1}
