"""The shapes ADK for Go (``google.golang.org/adk``) records, read by the general mechanisms
(tests/testdata/traces/adk-go): message log records whose body's ``content`` is the whole
Gemini ``Content``, ``<elided>`` with content off, and tool spans numbered by the framework
while the model's calls carry no id."""

from __future__ import annotations

from pathlib import Path

from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping.parsers.otel_genai import (
    parse_legacy_choice_events,
    parse_legacy_input_events,
)
from otel_oracles.model.span import EventRecord
from otel_oracles.model.step import StepKind, Trajectory
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parent.parent / "testdata" / "traces" / "adk-go"


def _log(name: str, body: object) -> EventRecord:
    return EventRecord(name, 1, {"gen_ai.system": "gcp.gemini"}, body=body, from_log=True)


def test_choice_whose_content_is_the_whole_gemini_content() -> None:
    call = {"functionCall": {"name": "search_docs", "args": {"query": "refunds"}}}
    choice = _log(
        "gen_ai.choice",
        {"index": 0, "content": {"role": "model", "parts": [call]}, "finish_reason": "STOP"},
    )
    assert parse_legacy_choice_events([choice]) == [
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": None, "name": "search_docs",
                       "arguments": {"query": "refunds"}}],
            "finish_reason": "STOP",
        }
    ]  # fmt: skip


def test_input_contents_keep_their_own_role_whatever_the_event_name() -> None:
    """ADK for Go logs every request content as ``gen_ai.user.message``: the model's turn and
    the tool response keep their own roles and parts."""
    failed = {"functionResponse": {"name": "f", "response": {"error": "boom"}}}
    events = [
        _log("gen_ai.system.message", {"content": "Be brief."}),
        _log("gen_ai.user.message", {"content": {"role": "user", "parts": [{"text": "Q?"}]}}),
        _log(
            "gen_ai.user.message",
            {"content": {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}},
        ),
        _log("gen_ai.user.message", {"content": {"role": "user", "parts": [failed]}}),
    ]
    msgs = parse_legacy_input_events(events)
    assert msgs is not None
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[2]["parts"][0]["type"] == "tool_call"
    assert msgs[3]["parts"][0]["type"] == "tool_call_response"
    assert msgs[3]["parts"][0]["response"] == {"error": "boom"}


def test_elided_content_is_not_captured_text() -> None:
    events = [_log("gen_ai.user.message", {"content": "<elided>"})]
    assert parse_legacy_input_events(events) == [{"role": "user", "parts": [{"type": "text"}]}]
    choice = _log("gen_ai.choice", {"index": 0, "content": "<elided>", "finish_reason": "STOP"})
    msgs = parse_legacy_choice_events([choice])
    assert msgs is not None and msgs[0]["parts"] == [{"type": "text"}]


def _trajectory(stem: str) -> Trajectory:
    files = [str(TRACES / f"{stem}.otlp.json"), str(TRACES / f"{stem}.logs.otlp.jsonl")]
    problems: list = []
    traces = list(read_traces(files, problems))
    assert problems == [] and len(traces) == 1
    return map_trace(traces[0], load_conventions())


def test_requested_calls_without_ids_link_to_the_spans_the_framework_numbered() -> None:
    """Each call the model asked for (no id) is its execute_tool span (an ``adk-...`` id),
    never a second, synthesized call; the request takes the span's id, so the two searches
    asked for in one turn are known as such (not a retry)."""
    traj = _trajectory("l_parallel_failures")
    calls = [s for s in traj.steps if s.kind == StepKind.TOOL_CALL]
    assert [(s.tool, s.synthesized, s.status) for s in calls] == [
        ("search_docs", False, "error"),
        ("search_docs", False, "error"),
    ]
    ids = {s.call_id for s in calls}
    assert all(i and i.startswith("adk-") for i in ids)
    first = next(s for s in traj.steps if s.kind == StepKind.GENERATION)
    requested = [p for m in first.output_messages or [] for p in m["parts"]]
    assert {p.get("id") for p in requested if p["type"] == "tool_call"} == ids


def test_content_off_keeps_tool_spans_but_no_answer() -> None:
    traj = _trajectory("a_happy.nocontent")
    (call,) = [s for s in traj.steps if s.kind == StepKind.TOOL_CALL]
    assert call.arguments == {"query": "enterprise refund window"} and not call.synthesized
    gens = [s for s in traj.steps if s.kind == StepKind.GENERATION]
    assert all("output_messages" in g.redacted for g in gens)
