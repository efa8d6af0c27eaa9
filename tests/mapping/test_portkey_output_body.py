"""OpenInference's Portkey instrumentor keeps a reply's role and text in ``llm.output_messages``
but never the calls the reply asked for; the whole response body is its ``output.value``
(``conventions/openinference.yaml``, rule ``portkey_llm``). Captured in
``tests/testdata/traces/portkey-openinference``."""

from __future__ import annotations

from pathlib import Path

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).parents[1] / "testdata" / "traces" / "portkey-openinference"


def _mapped(name: str) -> Trajectory:
    (trace,) = read_traces([str(TRACES / f"{name}.otlp.json")], [])
    return map_trace(trace, load_conventions())


def test_the_calls_a_reply_asked_for_are_read_from_the_response_body() -> None:
    t = _mapped("i_parallel_tools")
    first = t.generations()[0]
    assert first.finish_reasons == ["tool_call"]
    calls = [
        (p["name"], p["id"])
        for m in first.output_messages or []
        for p in m["parts"]
        if p["type"] == "tool_call"
    ]
    assert calls == [("search_docs", "call_0_0"), ("delete_records", "call_0_1")]
    assert [(s.tool, s.status) for s in t.tool_calls()] == [
        ("search_docs", "ok"),
        ("delete_records", "ok"),
    ]
    assert "[doc-42]" in (t.generations()[-1].output_messages or [{}])[0]["parts"][0]["content"]


def test_without_content_the_body_is_hidden_and_the_calls_stay_unnamed() -> None:
    t = _mapped("i_parallel_tools.nocontent")
    assert all("output_messages" in g.redacted for g in t.generations())
    assert [(s.tool, s.status) for s in t.tool_calls()] == [(None, "unset")]
