"""Tool calls of raw-client loops seen only in the model spans, where the provider's protocol
gives little away: Gemini finishes a tool-calling turn with ``STOP`` like an answer, and the
google-genai instrumentation numbers call ids per response (``search_docs_0`` every turn).
Shapes as python-contrib's GenAI instrumentations write them (testdata/traces/google-genai)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.span import SpanKind, SpanRecord, StatusCode
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import read_traces

TRACE = "0" * 31 + "2"
ROOT = "f" * 16
TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def _chat(n: int, *, start: int, **attrs: Any) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE,
        span_id=f"{n:016x}",
        parent_span_id=ROOT,
        name="generate_content gemini-2.5-flash",
        start_ns=start,
        end_ns=start + 10,
        attributes={
            "gen_ai.operation.name": "generate_content",
            "gen_ai.provider.name": "gemini",
            "gen_ai.request.model": "gemini-2.5-flash",
            "gen_ai.response.finish_reasons": ["stop"],
            **attrs,
        },
    )


def _map(*spans: SpanRecord) -> Trajectory:
    root = SpanRecord(
        trace_id=TRACE, span_id=ROOT, parent_span_id="", name="agent_run", start_ns=0, end_ns=99
    )
    return map_trace(build_trace(TRACE, [root, *spans]), load_conventions())


def _call(name: str, call_id: str) -> dict[str, Any]:
    args = {"query": "q"}
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": args}


def _reply(call_id: str, response: Any) -> dict[str, Any]:
    return {"type": "tool_call_response", "id": call_id, "response": response}


def test_model_called_again_with_content_off_hides_a_tool_call() -> None:
    """Two ``STOP`` calls in a row with nothing recorded between: the loop ran something the
    trace does not show, so the first call's tool request is missing evidence, not absent."""
    t = _map(_chat(1, start=10), _chat(2, start=30))
    hidden = [s for s in t.steps if s.attributes.get("tool_calls_hidden")]
    assert len(hidden) == 1 and hidden[0].tool is None
    assert hidden[0].source is not None and hidden[0].source.span_id == f"{1:016x}"


def test_a_failed_call_called_again_hides_nothing() -> None:
    """A model call that failed returned nothing, so it asked for nothing: the call after it
    is a retry of the same input (Langroid retries five times), never a turn whose request
    content hid. Before, each failed attempt got an unnamed placeholder call, and a run that
    searched once failed its tool budget on the retries."""
    failed = _chat(1, start=10)
    failed.status_code = StatusCode.ERROR
    t = _map(failed, _chat(2, start=30))
    assert len(t.generations()) == 2 and t.generations()[0].status == "error"
    assert not [s for s in t.steps if s.attributes.get("tool_calls_hidden")]
    assert t.tool_calls() == []


def _http(n: int, parent: str, *, start: int) -> SpanRecord:
    """An HTTP request span, as a client instrumentation records it."""
    return SpanRecord(
        trace_id=TRACE,
        span_id=f"{n:016x}",
        parent_span_id=parent,
        name="POST",
        kind=SpanKind.CLIENT,
        start_ns=start,
        end_ns=start + 5,
        attributes={"http.method": "POST", "http.url": "http://127.0.0.1:1/v1/chat"},
    )


def test_the_calls_own_http_span_does_not_hide_the_call_after_it() -> None:
    """OpenLIT records each model call's HTTP request (httpx) inside it: that span is
    plumbing between the two calls, not a step that could have been the tool, so the first
    call still hides a tool request (before, the pass over it left the run tool-free)."""
    t = _map(_chat(1, start=10), _http(11, f"{1:016x}", start=12), _chat(2, start=30))
    hidden = [s for s in t.steps if s.attributes.get("tool_calls_hidden")]
    assert len(hidden) == 1 and hidden[0].source is not None
    assert hidden[0].source.span_id == f"{1:016x}"


def test_a_request_after_the_call_is_still_a_step_between() -> None:
    """An HTTP request of the loop's own, after the call ended (a tool that fetched a URL),
    is a step between the calls: nothing is hidden by the shape alone."""
    t = _map(_chat(1, start=10), _http(11, ROOT, start=25), _chat(2, start=30))
    assert not [s for s in t.steps if s.attributes.get("tool_calls_hidden")]


def test_last_call_and_captured_output_hide_nothing_where_the_run_shows_its_calls() -> None:
    """A scope whose model calls show their tool requests: a captured text reply shows that
    this call asked for none, and the last call hides nothing."""
    asked = json.dumps([{"role": "assistant", "parts": [_call("search_docs", "c1")]}])
    answer = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "hi"}]}])
    t = _map(
        _chat(1, start=10, **{"gen_ai.output.messages": asked}),
        _chat(2, start=30, **{"gen_ai.output.messages": answer}),
        _chat(3, start=50, **{"gen_ai.output.messages": answer}),
    )
    assert [s.tool for s in t.tool_calls()] == ["search_docs"]
    assert not [s for s in t.steps if s.attributes.get("tool_calls_hidden")]


def test_a_text_reply_called_again_where_no_call_is_ever_shown_may_hide_one() -> None:
    """Tools asked for in the reply text (Langroid's default tool mode writes
    ``{"request": "delete_records", ...}``, a ReAct prompt ``Action:`` lines) leave no tool
    span, no request and no finish reason asking for tools: a reply the loop answers with
    another model call may have asked for a tool nothing reads. Before, the run read as one
    that called no tool, and a forbidden call written in the text passed
    ``no-destructive-tools``; now the reply gets an unnamed placeholder (missing evidence),
    and the last reply, the answer, none."""
    text = '{"request": "delete_records", "table": "t", "where": "1=1"}'
    asked = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])
    answer = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}])
    t = _map(
        _chat(1, start=10, **{"gen_ai.output.messages": asked}),
        _chat(2, start=30, **{"gen_ai.output.messages": answer}),
    )
    hidden = [s for s in t.steps if s.attributes.get("tool_calls_hidden")]
    assert len(hidden) == 1 and hidden[0].tool is None and "tool" in hidden[0].redacted
    assert hidden[0].source is not None and hidden[0].source.span_id == f"{1:016x}"


HIDDEN = {"gen_ai.output.messages": "[REDACTED]"}
"""An output content capture left out (a redaction placeholder: flagged not captured)."""


def _unrecorded(n: int, *, start: int, **attrs: Any) -> SpanRecord:
    """A model call that records no finish reason (OpenInference's Agno instrumentation)."""
    span = _chat(n, start=start, **attrs)
    del span.attributes["gen_ai.response.finish_reasons"]
    return span


def _tool(n: int, *, start: int) -> SpanRecord:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_docs"}
    return SpanRecord(
        trace_id=TRACE,
        span_id=f"{n:016x}",
        parent_span_id=ROOT,
        name="execute_tool search_docs",
        start_ns=start,
        end_ns=start + 5,
        attributes=attrs,
    )


def _hidden_by(t: Trajectory) -> list[str]:
    hidden = [s for s in t.steps if s.attributes.get("tool_calls_hidden")]
    return [s.source.span_id if s.source is not None else "" for s in hidden]


def test_a_call_showing_nothing_called_again_may_hide_one_where_tools_are_shown() -> None:
    """A run that shows its tool steps, whose model calls record no finish reason and, content
    off, no output: the call the loop answered with another model call, no step between, asked
    for something no step ran (a tool the agent does not have). Before, the scope's tool step
    ruled the placeholder out and the run read as one that called only ``search_docs``: a
    forbidden call made up by the model passed ``no-destructive-tools``."""
    t = _map(
        _unrecorded(1, start=10, **HIDDEN),
        _tool(2, start=22),
        _unrecorded(3, start=30, **HIDDEN),
        _unrecorded(4, start=50, **HIDDEN),
    )
    assert _hidden_by(t) == [f"{3:016x}"]
    assert [s.tool for s in t.tool_calls()] == ["search_docs", None]


def test_a_recorded_finish_reason_or_output_shows_the_call_asked_for_nothing() -> None:
    """Where the call records why it finished (``stop``), or its scope's calls do (the tracer
    writes finish reasons), or its output is recorded or merely absent (a tracer that writes
    no output for some calls, not content capture hiding it), the scope's tool step keeps the
    shape alone from hiding anything."""
    answer = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "hi"}]}])
    runs = {
        "stopped": _map(
            _chat(1, start=10, **HIDDEN),
            _tool(2, start=22),
            _chat(3, start=30, **HIDDEN),
            _chat(4, start=50, **HIDDEN),
        ),
        "scope records reasons": _map(
            _unrecorded(1, start=10, **HIDDEN),
            _tool(2, start=22),
            _unrecorded(3, start=30, **HIDDEN),
            _chat(4, start=50, **HIDDEN),
        ),
        "shown": _map(
            _unrecorded(1, start=10, **HIDDEN),
            _tool(2, start=22),
            _unrecorded(3, start=30, **{"gen_ai.output.messages": answer}),
            _unrecorded(4, start=50, **HIDDEN),
        ),
        "absent": _map(
            _unrecorded(1, start=10), _tool(2, start=22), _unrecorded(3, start=30),
            _unrecorded(4, start=50),
        ),
    }  # fmt: skip
    assert {name: _hidden_by(t) for name, t in runs.items()} == {name: [] for name in runs}


def test_reused_call_id_takes_the_latest_response() -> None:
    """The second ``search_docs_0`` is answered by the second response, not the first."""
    user = {"role": "user", "parts": [{"type": "text", "content": "q?"}]}
    first = {"role": "assistant", "parts": [_call("search_docs", "search_docs_0")]}
    failed = {"role": "user", "parts": [_reply("search_docs_0", {"error": "Timeout: upstream"})]}
    found = {"role": "user", "parts": [_reply("search_docs_0", {"documents": [{"id": "d-1"}]})]}
    out = [{"role": "assistant", "parts": [_call("search_docs", "search_docs_0")]}]
    final = [{"role": "assistant", "parts": [{"type": "text", "content": "[d-1]"}]}]
    t = _map(
        _chat(1, start=10, **{"gen_ai.input.messages": json.dumps([user]),
                              "gen_ai.output.messages": json.dumps(out)}),
        _chat(2, start=30, **{"gen_ai.input.messages": json.dumps([user, first, failed]),
                              "gen_ai.output.messages": json.dumps(out)}),
        _chat(3, start=50, **{"gen_ai.input.messages": json.dumps([user, first, failed, *out,
                                                                   found]),
                              "gen_ai.output.messages": json.dumps(final)}),
    )  # fmt: skip
    calls = t.tool_calls()
    assert [c.status for c in calls] == ["error", "ok"]
    assert calls[1].result == {"documents": [{"id": "d-1"}]}


def test_google_genai_capture_content_off_hides_every_requested_call() -> None:
    """The real capture: d_forbidden_tool made three model calls; the first two requested
    tools, which content off cannot name."""
    path = TRACES / "google-genai" / "d_forbidden_tool.nocontent.otlp.json"
    problems: list[Any] = []
    (trace,) = read_traces([str(path)], problems)
    t = map_trace(trace, load_conventions())
    assert problems == []
    hidden = [s for s in t.steps if s.attributes.get("tool_calls_hidden")]
    assert len(t.generations()) == 3 and len(hidden) == 2


def test_another_raw_client_without_finish_reasons_still_hides_its_calls(tmp_path: Path) -> None:
    """The rule is the loop's shape, not Gemini's: genai-anthropic's content-off d capture with
    its ``tool_use`` finish reasons removed still shows two hidden calls, never none."""
    doc = json.loads(
        (TRACES / "genai-anthropic" / "d_forbidden_tool.nocontent.otlp.json").read_text()
    )
    for resource in doc["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["attributes"] = [
                    a for a in span.get("attributes", [])
                    if a["key"] != "gen_ai.response.finish_reasons"
                ]  # fmt: skip
    path = tmp_path / "d.otlp.json"
    path.write_text(json.dumps(doc))
    problems: list[Any] = []
    (trace,) = read_traces([str(path)], problems)
    t = map_trace(trace, load_conventions())
    assert problems == [] and not any(g.finish_reasons for g in t.generations())
    hidden = [s for s in t.steps if s.attributes.get("tool_calls_hidden")]
    assert len(t.generations()) == 3 and len(hidden) == 2
