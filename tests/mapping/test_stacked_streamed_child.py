"""A streamed model call recorded by two stacked instrumentations is one call even when the
inner span ends after the outer one (``_stacked._child_call``).

Real trace: LlamaIndex.TS's ``FunctionAgent`` (it streams every call) under OpenLLMetry JS
0.27 with both its LlamaIndex and its OpenAI instrumentation (``instrumentModules``
``{llamaIndex, llamaIndexOpenAI, openAI}``), ``m_excess_calls`` (six searches, one per model
turn, then the answer), captured by ``tools/capture_traces/capture.py --source
llamaindex-js-openllmetry-openai``. Each of the seven model calls is LlamaIndex's ``chat``
span (text only: the requested tool calls dropped) holding the OpenAI instrumentation's
(tool calls kept). Each layer ends its span when its own wrapper of the stream finishes; in
the fifth call the outer span ended 0.2 ms before the inner one. Before, that pair stayed two
model calls: the outer one's finish reason made an unnamed call beside the inner one's
``search_docs``, so every tool-name check was missing evidence and the effort counts had one
call too many."""

from __future__ import annotations

from pathlib import Path

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.result import InputProblem
from otel_oracles.pipeline import read_traces

TRACE = (
    Path(__file__).resolve().parents[1]
    / "testdata"
    / "stacked-streamed"
    / "llamaindex-js-openllmetry-openai.m_excess_calls.otlp.json"
)


def test_streamed_call_whose_inner_span_ends_last_is_one_call() -> None:
    problems: list[InputProblem] = []
    traces = list(read_traces([str(TRACE)], problems))
    assert problems == [] and len(traces) == 1
    trace = traces[0]
    by_id = {s.span_id: s for s in trace.spans}
    outlived = [
        s
        for s in trace.spans
        if s.parent_span_id in by_id
        and s.name.startswith("chat ")
        and by_id[s.parent_span_id].name.startswith("chat ")
        and s.end_ns > by_id[s.parent_span_id].end_ns
    ]
    assert len(outlived) == 1, "the capture holds the case this test is about"
    trajectory = map_trace(trace, load_conventions())
    generations = trajectory.generations()
    assert len(generations) == 7, [g.source for g in generations]
    assert [c.tool for c in trajectory.tool_calls()] == ["search_docs"] * 6
    # The kept step is the outer span's, with the inner layer's requested call.
    merged = [g for g in generations if g.source and g.source.span_id == outlived[0].parent_span_id]
    assert len(merged) == 1
    parts = [p for m in merged[0].output_messages or [] for p in m.get("parts", [])]
    assert [p.get("name") for p in parts if p.get("type") == "tool_call"] == ["search_docs"]
