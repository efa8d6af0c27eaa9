"""build_trace(): one trace's records -> span tree, deterministic order, orphans, log events."""

from __future__ import annotations

from pathlib import Path

from otel_oracles.assemble import build_trace
from otel_oracles.decode import read_paths
from otel_oracles.model.result import InputProblem
from otel_oracles.model.span import LogRecord, SpanRecord

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"


def load(*paths: Path) -> tuple[list[SpanRecord], list[LogRecord]]:
    problems: list[InputProblem] = []
    spans: list[SpanRecord] = []
    logs: list[LogRecord] = []
    for batch in read_paths([str(p) for p in paths], problems):
        spans.extend(batch.spans)
        logs.extend(batch.logs)
    assert problems == []
    return spans, logs


def sid(short: str) -> str:
    """A 16-character span id from a readable name."""
    return (short * 16)[:16]


def span(span_id: str, parent: str = "", start: int = 0, name: str = "") -> SpanRecord:
    return SpanRecord(
        "ab" * 16, sid(span_id), sid(parent) if parent else "", name or span_id, 1, start
    )


def test_real_handoff_trace_forms_one_tree_under_its_root() -> None:
    spans, _ = load(TRACES / "pydantic-ai" / "g_handoff.otlp.json")
    trace = build_trace(spans[0].trace_id, spans, [])
    assert trace.orphans == []
    assert trace.root is not None and trace.root.parent_span_id == ""
    assert len(trace.spans) == len(spans)
    # Every non-root span hangs under its parent exactly once.
    listed = [s.span_id for kids in trace.children.values() for s in kids]
    assert sorted(listed) == sorted(s.span_id for s in spans if s.parent_span_id)
    starts = [s.start_ns for s in trace.spans]
    assert starts == sorted(starts)
    nested = next(s for s in trace.spans if s.name == "invoke_agent research_agent")
    parent = next(s for s in trace.spans if s.span_id == nested.parent_span_id)
    assert parent.name.startswith("execute_tool delegate_to_research_agent")


def test_equal_start_times_keep_parent_before_child_then_arrival_order() -> None:
    # Arrival order deliberately scrambled: child first, siblings reversed.
    spans = [span("c", "b", 10), span("b", "a", 10), span("d", "a", 10), span("a", "", 10)]
    trace = build_trace("ab" * 16, spans, [])
    assert [s.name for s in trace.spans] == ["a", "b", "c", "d"]
    assert [s.name for s in trace.children[sid("a")]] == ["b", "d"]


def test_children_are_ordered_by_start_time() -> None:
    spans = [span("a", "", 0), span("late", "a", 30), span("early", "a", 10)]
    trace = build_trace("ab" * 16, spans, [])
    assert [s.name for s in trace.children[sid("a")]] == ["early", "late"]
    assert [s.name for s in trace.spans] == ["a", "early", "late"]


def test_span_whose_parent_never_arrived_is_an_orphan_not_a_crash() -> None:
    spans, _ = load(TRACES / "pydantic-ai" / "g_handoff.otlp.json")
    trace_id = spans[0].trace_id
    root = next(s for s in spans if not s.parent_span_id)
    parents = {s.parent_span_id for s in spans}
    middle = next(s for s in spans if s.parent_span_id == root.span_id and s.span_id in parents)
    kept = [s for s in spans if s is not middle]
    trace = build_trace(trace_id, kept, [])
    assert len(trace.spans) == len(kept), "orphans stay in spans"
    assert {s.parent_span_id for s in trace.orphans} == {middle.span_id}
    assert trace.root is root
    assert trace.roots[0] is root and trace.roots[1:] == trace.orphans


def test_trace_without_its_root_reports_the_earliest_orphan_as_root() -> None:
    spans = [span("b", "x", 20), span("a", "x", 10)]
    trace = build_trace("ab" * 16, spans, [])
    assert trace.root is not None and trace.root.name == "a"
    assert len(trace.orphans) == 2


def test_parent_cycle_keeps_every_span() -> None:
    spans = [span("a", "b", 1), span("b", "a", 2), span("self", "self", 3), span("r", "", 0)]
    trace = build_trace("ab" * 16, spans, [])
    assert sorted(s.name for s in trace.spans) == ["a", "b", "r", "self"]
    assert {s.name for s in trace.orphans} == {"a", "self"}


def test_repeated_span_id_keeps_the_first_record() -> None:
    first = span("a", "", 0, name="first")
    trace = build_trace("ab" * 16, [first, span("a", "", 0, name="retry")], [])
    assert trace.spans == [first]


def test_log_based_events_attach_to_their_span_in_time_order() -> None:
    spans, logs = load(
        TRACES / "openai-v2" / "d_forbidden_tool.otlp.json",
        TRACES / "openai-v2" / "d_forbidden_tool.logs.otlp.jsonl",
    )
    by_trace: dict[str, list[SpanRecord]] = {}
    for s in spans:
        by_trace.setdefault(s.trace_id, []).append(s)
    trace_id = logs[0].trace_id
    trace = build_trace(
        trace_id, by_trace[trace_id], [lg for lg in logs if lg.trace_id == trace_id]
    )
    assert trace.unattached_logs == 0
    chat = [s for s in trace.spans if s.name.startswith("chat")]
    events = [e for s in chat for e in s.events if e.from_log]
    assert len(events) == sum(1 for lg in logs if lg.trace_id == trace_id)
    for s in chat:
        times = [e.time_ns for e in s.events]
        assert times == sorted(times)
    assert any(e.name == "gen_ai.choice" and e.body for e in events)


def test_rebuilding_with_the_same_logs_does_not_duplicate_events() -> None:
    root = span("a", "", 0)
    log = LogRecord("ab" * 16, sid("a"), "gen_ai.user.message", 5, body={"content": "hi"})
    build_trace("ab" * 16, [root], [log])
    trace = build_trace("ab" * 16, [root], [log])
    assert [e.name for e in trace.spans[0].events] == ["gen_ai.user.message"]


def test_logs_without_a_known_span_or_event_name_are_counted_unattached() -> None:
    root = span("a", "", 0)
    logs = [
        LogRecord("ab" * 16, "f" * 16, "gen_ai.choice", 1),  # span never arrived
        LogRecord("ab" * 16, sid("a"), "", 2),  # plain log line, not an event
        LogRecord("cd" * 16, "a" * 8, "gen_ai.choice", 3),  # other trace
    ]
    trace = build_trace("ab" * 16, [root], logs)
    assert trace.unattached_logs == 3 and trace.spans[0].events == []


def test_legacy_event_name_attribute_is_read_by_the_decoder() -> None:
    import orjson

    from otel_oracles.decode import decode

    body = {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "timeUnixNano": "7",
                                "traceId": "ab" * 16,
                                "spanId": "a" * 16,
                                "attributes": [
                                    {"key": "event.name", "value": {"stringValue": "gen_ai.choice"}}
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    logs = decode(orjson.dumps(body), "application/json").logs
    trace = build_trace("ab" * 16, [span("a", "", 0)], logs)
    assert [e.name for e in trace.spans[0].events] == ["gen_ai.choice"]


def test_the_same_log_records_read_twice_attach_once() -> None:
    spans, logs = load(
        TRACES / "openai-v2" / "d_forbidden_tool.otlp.json",
        TRACES / "openai-v2" / "d_forbidden_tool.logs.otlp.jsonl",
        TRACES / "openai-v2" / "d_forbidden_tool.raw" / "logs-1.pb",
    )
    trace_id = logs[0].trace_id
    mine = [s for s in spans if s.trace_id == trace_id]
    trace = build_trace(trace_id, mine, [lg for lg in logs if lg.trace_id == trace_id])
    attached = sum(1 for s in trace.spans for e in s.events if e.from_log)
    assert attached * 2 == sum(1 for lg in logs if lg.trace_id == trace_id)


def test_distinct_events_with_equal_timestamps_are_both_kept() -> None:
    root = span("a", "", 0)
    logs = [
        LogRecord("ab" * 16, sid("a"), "gen_ai.user.message", 5, body={"content": "one"}),
        LogRecord("ab" * 16, sid("a"), "gen_ai.user.message", 5, body={"content": "two"}),
    ]
    trace = build_trace("ab" * 16, [root], logs)
    assert [e.body["content"] for e in trace.spans[0].events] == ["one", "two"]


def scoped(span_id: str, start: int, end: int, scope: str) -> SpanRecord:
    """A child of ``a`` from instrumentation scope ``scope``, started and ended as given."""
    return SpanRecord("ab" * 16, sid(span_id), sid("a"), span_id, 1, start, end, scope_name=scope)


def test_equal_starts_across_scopes_go_in_the_order_the_spans_ended() -> None:
    # A JavaScript SDK's millisecond start times: the tool and the model call after it both
    # start at 10. The batch lists every model call (one scope) before every tool (another).
    spans = [
        span("a", "", 0),
        scoped("m1", 1, 9, "llm"),
        scoped("m2", 10, 30, "llm"),
        scoped("t1", 10, 10, "app"),
    ]
    trace = build_trace("ab" * 16, spans, [])
    assert [s.name for s in trace.children[sid("a")]] == ["m1", "t1", "m2"]
    assert [s.name for s in trace.spans] == ["a", "m1", "t1", "m2"]


def test_equal_starts_in_one_scope_keep_arrival_order_whatever_the_ends_say() -> None:
    # One scope's spans arrive in the order they ended: that order stands, even where the
    # recorded end times (each offset from its own millisecond start) disagree.
    spans = [span("a", "", 0), scoped("first", 10, 12, "app"), scoped("second", 10, 11, "app")]
    trace = build_trace("ab" * 16, spans, [])
    assert [s.name for s in trace.children[sid("a")]] == ["first", "second"]


def test_an_unended_span_goes_after_its_ended_ties() -> None:
    spans = [span("a", "", 0), scoped("open", 10, 0, "app"), scoped("done", 10, 15, "llm")]
    trace = build_trace("ab" * 16, spans, [])
    assert [s.name for s in trace.children[sid("a")]] == ["done", "open"]


def test_javascript_loop_alternates_model_calls_and_the_tools_they_asked_for() -> None:
    # openinference-openai-js: the OpenAI instrumentation's spans and the app's traceTool
    # spans (two scopes) share millisecond start times; three failed searches between four
    # model calls.
    path = TRACES / "openinference-openai-js" / "c_retry_exhausted.nocontent.otlp.json"
    spans, _ = load(path)
    trace = build_trace(spans[0].trace_id, spans, [])
    kinds = [s.attributes.get("openinference.span.kind") for s in trace.spans]
    assert kinds == ["AGENT"] + ["LLM", "TOOL"] * 3 + ["LLM"]
