"""The mapper's passes in the compiled core read a draft's and a span's slots borrowed, with
no reference taken or released (``native/python/src/slots.rs`` ``Held``, ``draft.rs``
``draft_held``, ``slots.rs`` ``span_held``): mapping a trace must leave every reference count
of its spans' values as it found it. A borrowed read released as if it were owned would
leave a count one lower per read (and free an object the span still holds); one taken and
never released, one higher."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.span import Trace
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).parents[2] / "tests" / "testdata" / "traces"

SOURCES = [
    # Tool calls linked to model calls' requests, a handoff, stacked layers, wrappers.
    "mlflow-crewai/g_handoff.otlp.json",
    "langgraph-openllmetry/m_excess_calls.otlp.json",
    "openai-agents-otel-genai/b_tool_retry.otlp.json",
]


def _counts(trace: Trace) -> list[tuple[int, ...]]:
    """The reference counts of the objects each span holds that no other span shares."""
    return [
        (
            sys.getrefcount(span),
            sys.getrefcount(span.attributes),
            sys.getrefcount(span.events),
            sys.getrefcount(span.span_id),
        )
        for span in trace.spans
    ]


@pytest.mark.parametrize("source", SOURCES)
def test_mapping_leaves_the_spans_reference_counts_as_they_were(source: str) -> None:
    conventions = load_conventions()
    traces = list(read_traces([str(TRACES / source)], []))
    assert traces
    for trace in traces:
        map_trace(trace, conventions)  # caches and interned names made once
        gc.collect()
        before = _counts(trace)
        for _ in range(3):
            trajectory = map_trace(trace, conventions)
            assert trajectory.steps
            del trajectory
        gc.collect()
        assert _counts(trace) == before
