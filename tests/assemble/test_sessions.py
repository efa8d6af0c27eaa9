"""A run split over several traces is graded as one subject: traces joined by span links
(a sub-agent started in a new trace, its root linking to the span that started it) or by a
shared conversation/session id. Built from a real capture (pydantic-ai g_handoff) cut into
two traces the way a framework without context propagation would export it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from otel_oracles.assemble import AssemblyStats, SessionStats, build_trace, join_sessions
from otel_oracles.assemble._sessions import SessionJoiner, first_start, merge_traces
from otel_oracles.grade.loader import load_contract
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.result import InputProblem
from otel_oracles.model.span import LinkRecord, SpanRecord, Trace
from otel_oracles.model.step import Trajectory
from otel_oracles.pipeline import grade_paths, read_traces
from otel_oracles.session import GradingSession

REPO = Path(__file__).resolve().parent.parent.parent
HANDOFF = REPO / "tests" / "testdata" / "traces" / "pydantic-ai" / "g_handoff.otlp.json"
SUB_AGENT = "68de3ca6badaa895"  # invoke_agent research_agent
DELEGATION = "df0cc05a33451614"  # execute_tool delegate_to_research_agent
NEW_TRACE = "f" * 32


def _spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [sp for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for sp in ss["spans"]]


def _split(tmp_path: Path, *, link: bool) -> Path:
    """The sub-agent's subtree moved to a trace of its own; its root links to the delegating
    span when ``link``."""
    doc = json.loads(HANDOFF.read_text())
    spans = _spans(doc)
    moved = {SUB_AGENT}
    while True:
        more = {s["spanId"] for s in spans if s.get("parentSpanId") in moved} - moved
        if not more:
            break
        moved |= more
    original = spans[0]["traceId"]
    for span in spans:
        if span["spanId"] in moved:
            span["traceId"] = NEW_TRACE
        if span["spanId"] == SUB_AGENT:
            del span["parentSpanId"]
            if link:
                span["links"] = [{"traceId": original, "spanId": DELEGATION}]
    path = tmp_path / "split.otlp.json"
    path.write_text(json.dumps(doc))
    return path


def _read(path: Path, stats: AssemblyStats | None = None) -> list[Trace]:
    problems: list[InputProblem] = []
    traces = list(read_traces([str(path)], problems, stats=stats))
    assert not problems
    return traces


def _shape(t: Trajectory) -> list[tuple[str, str | None, str | None, str]]:
    return [(s.kind.value, s.tool, s.agent_name, s.status) for s in t.steps]


def test_a_linked_sub_run_is_joined_where_it_was_started(tmp_path: Path) -> None:
    stats = AssemblyStats()
    (joined,) = _read(_split(tmp_path, link=True), stats)
    (original,) = _read(HANDOFF)
    conventions = load_conventions()
    assert joined.trace_id == original.trace_id
    assert _shape(map_trace(joined, conventions)) == _shape(map_trace(original, conventions))
    sub = next(s for s in joined.spans if s.span_id == SUB_AGENT)
    assert sub.parent_span_id == DELEGATION
    steps = map_trace(joined, conventions).steps
    moved = [s for s in steps if s.source is not None and s.source.trace_id == NEW_TRACE]
    assert moved and all(s.agent_name == "research_agent" for s in moved)
    assert stats.joined.subjects == 1 and stats.joined.traces == 2


def test_without_the_link_they_are_two_subjects(tmp_path: Path) -> None:
    traces = _read(_split(tmp_path, link=False))
    assert len(traces) == 2


def test_the_joined_run_gets_one_verdict(tmp_path: Path) -> None:
    contract = load_contract(
        REPO / "tests" / "testdata" / "pipeline" / "contracts" / "no-deletes.yaml"
    )
    report = grade_paths(
        [str(_split(tmp_path, link=True))], GradingSession([contract], load_conventions())
    )
    assert len(report.verdicts) == 1
    assert any("2 traces joined into 1 run(s)" in n for n in report.notes)


# ---- the window, on hand-made traces ---------------------------------------------------------


def _trace(n: int, *, session: str | None = None, links_to: int | None = None) -> Trace:
    trace_id = f"{n:032x}"
    attrs = {"gen_ai.conversation.id": session} if session else {}
    links = [LinkRecord(f"{links_to:032x}", f"{links_to:016x}")] if links_to is not None else []
    span = SpanRecord(trace_id, f"{n:016x}", "", f"turn {n}", start_ns=n, end_ns=n + 1,
                      attributes=attrs, links=links)  # fmt: skip
    return build_trace(trace_id, [span])


def _ids(traces: list[Trace]) -> list[list[int]]:
    return [sorted(int(s.trace_id, 16) for s in t.spans) for t in traces]


def test_shared_session_ids_join_and_order_is_kept() -> None:
    traces = [_trace(1, session="c1"), _trace(2), _trace(3, session="c1"), _trace(4, session="c2")]
    stats = SessionStats()
    out = list(join_sessions(traces, stats=stats))
    assert _ids(out) == [[1, 3], [2], [4]]
    assert (stats.subjects, stats.traces) == (1, 2)


def test_a_later_trace_links_to_an_earlier_one_without_keys() -> None:
    out = list(join_sessions([_trace(1), _trace(2), _trace(3, links_to=1)]))
    assert _ids(out) == [[1, 3], [2]]


def test_traces_farther_apart_than_the_window_stay_apart() -> None:
    traces = [_trace(1, session="c"), _trace(2), _trace(3), _trace(4, session="c")]
    assert _ids(list(join_sessions(traces, window_spans=2))) == [[1], [2], [3], [4]]
    assert _ids(list(join_sessions(traces, window_spans=4))) == [[1, 4], [2], [3]]


def test_a_trace_bridging_two_sessions_joins_all_three() -> None:
    traces = [_trace(1, session="a"), _trace(2, session="b"), _trace(3, links_to=2)]
    traces.append(_trace(4, session="a", links_to=3))
    assert _ids(list(join_sessions(traces))) == [[1, 2, 3, 4]]


def test_a_merged_run_is_named_by_its_earliest_trace_and_copies_the_roots_it_hangs() -> None:
    """``merge_traces``: the members ordered by their earliest span (the first names the
    run), a linking root hung as a copy (the member's own record keeps no parent), the
    members' unattached log records added up, incomplete when any member was."""
    later, earlier = _trace(5), _trace(3, links_to=5)
    earlier.spans[0].start_ns = 9  # the linking member starts after the one it links to
    later.incomplete, later.unattached_logs, earlier.unattached_logs = True, 2, 1
    joined = merge_traces([earlier, later])
    assert joined.trace_id == later.trace_id
    assert [s.span_id for s in joined.spans] == [f"{5:016x}", f"{3:016x}"]
    hung = joined.spans[1]
    assert hung.parent_span_id == f"{5:016x}" and earlier.spans[0].parent_span_id == ""
    assert hung is not earlier.spans[0] and hung.links == earlier.spans[0].links
    assert [r.span_id for r in joined.roots] == [f"{5:016x}"]
    assert (joined.incomplete, joined.unattached_logs) == (True, 3)
    assert first_start(earlier.spans) == 9 and first_start([]) == 0
    assert merge_traces([earlier]) is earlier


# ---- an agent traced apart from the tool call that ran it --------------------------------------


def _triage(n: int, start: int, end: int, service: str = "svc") -> Trace:
    """A run whose ``research_agent`` tool call lasts from ``start`` to ``end``."""
    trace_id = f"{n:032x}"
    res = {"service.name": service}
    root = SpanRecord(trace_id, f"{n:014x}01", "", "invoke_agent triage", start_ns=0,
                      end_ns=10_000, resource=res,
                      attributes={"gen_ai.operation.name": "invoke_agent",
                                  "gen_ai.agent.name": "triage"})  # fmt: skip
    call = SpanRecord(trace_id, f"{n:014x}02", root.span_id, "execute_tool research_agent",
                      start_ns=start, end_ns=end, resource=res,
                      attributes={"gen_ai.operation.name": "execute_tool",
                                  "gen_ai.tool.name": "research_agent"})  # fmt: skip
    return build_trace(trace_id, [root, call])


def _research(
    n: int, start: int, end: int, service: str = "svc", agent: str = "research_agent"
) -> Trace:
    """An agent run started as a root of its own (Koog's ``create_agent``), no link."""
    trace_id = f"{n:032x}"
    root = SpanRecord(trace_id, f"{n:014x}01", "", "create_agent research_agent",
                      start_ns=start, end_ns=end, resource={"service.name": service},
                      attributes={"gen_ai.operation.name": "create_agent",
                                  "gen_ai.agent.id": agent})  # fmt: skip
    return build_trace(trace_id, [root])


def test_an_agent_traced_apart_is_joined_under_the_call_that_ran_it() -> None:
    for traces in ([_research(2, 200, 300), _triage(1, 100, 400)],
                   [_triage(1, 100, 400), _research(2, 200, 300)]):  # fmt: skip
        (joined,) = join_sessions(traces)
        root = next(s for s in joined.spans if s.trace_id == f"{2:032x}")
        assert root.parent_span_id == f"{1:014x}02", "hung under the research_agent call"


def test_no_join_unless_one_call_of_the_same_service_holds_the_agent_run() -> None:
    # Outside the call's time, another service, or a call named otherwise: two subjects.
    assert len(list(join_sessions([_research(2, 50, 300), _triage(1, 100, 400)]))) == 2
    assert len(list(join_sessions([_research(2, 200, 300, "x"), _triage(1, 100, 400)]))) == 2
    assert len(list(join_sessions([_research(2, 200, 300, agent="x"), _triage(1, 100, 400)]))) == 2


def test_concurrent_runs_whose_calls_both_fit_are_not_joined() -> None:
    """Two runs of one service whose research_agent calls overlap, each holding both agent
    traces in time: which agent run belongs to which call is not in the traces, so nothing
    is joined (a wrong join would move one run's calls into the other's verdict)."""
    traces = [_research(3, 200, 300), _research(4, 210, 310),
              _triage(1, 100, 400), _triage(2, 105, 405)]  # fmt: skip
    assert _ids(list(join_sessions(traces))) == [[3], [4], [1, 1], [2, 2]]


def test_waiting_agent_runs_and_calls_leave_the_window_with_their_traces() -> None:
    """Agent runs and tool calls that found no partner wait only while their trace is in the
    window: a long stream of runs whose calls never ran an agent holds no index entries once
    their traces left (memory stays bounded by the window)."""
    joiner = SessionJoiner(window_spans=4)
    released = []
    for n in range(1, 200):
        released += joiner.add(_triage(n, 10 * n, 10 * n + 5, service=f"svc-{n}"))
        released += joiner.add(_research(1000 + n, 0, 1, service=f"svc-{n}"))
    assert joiner.waiting <= 4
    released += joiner.flush()
    assert len(released) == 2 * 199 and not joiner.waiting


# ---- what the window reads, from the decoded spans at release ----------------------------------


def _span(trace: int, index: int, parent: int | None, start: int, end: int,
          attrs: list[tuple[str, Any]], links: tuple[int, ...] = ()) -> dict[str, Any]:  # fmt: skip
    def value(v: Any) -> dict[str, Any]:
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}

    return {
        "traceId": f"{trace:032x}",
        "spanId": f"{trace:08x}{index:08x}",
        **({"parentSpanId": f"{trace:08x}{parent:08x}"} if parent is not None else {}),
        "name": f"s{trace}.{index}",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": [{"key": k, "value": value(v)} for k, v in attrs],
        "links": [{"traceId": f"{t:032x}", "spanId": f"{t:08x}{0:08x}"} for t in links],
    }


def _join_bodies() -> list[bytes]:
    """Traces with everything the window reads: a triage run (session id on every span,
    a tool call that may have run an agent, a link to trace 5 and one to itself), an agent
    run traced apart, a trace with two roots, a repeated span id, a repeated attribute key,
    an empty session id and a tool name that is no string, over two services."""
    conv, op, tool = "gen_ai.conversation.id", "gen_ai.operation.name", "gen_ai.tool.name"
    svc = [
        _span(
            1, 0, None, 0, 1000, [(conv, "c1"), (op, "invoke_agent"), ("gen_ai.agent.name", "t")]
        ),
        _span(1, 1, 0, 100, 900, [(conv, "c1"), (op, "execute_tool"), (tool, "research")]),
        _span(1, 2, 0, 100, 900, [(conv, "c2"), (conv, "c1")], links=(5, 1)),
        _span(2, 0, None, 200, 800, [(op, "create_agent"), ("gen_ai.agent.id", "research")]),
        _span(3, 0, None, 5, 6, [("session.id", ""), (op, "execute_tool"), (tool, 7)]),
        _span(3, 1, None, 5, 6, [("session.id", "s3")]),
        _span(3, 1, None, 7, 8, [("session.id", "s4")]),
    ]
    other = [_span(4, 0, None, 300, 400, [(op, "invoke_agent"), ("gen_ai.agent.name", "x")])]
    bodies = []
    for service, spans in (("svc", svc), ("other", other)):
        resource = {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]}
        scope_spans = [{"scope": {"name": "a"}, "spans": spans}]
        doc = {"resourceSpans": [{"resource": resource, "scopeSpans": scope_spans}]}
        bodies.append(json.dumps(doc).encode())
    return bodies


def test_the_one_walk_reads_the_same_facts_from_decoded_spans_and_from_records() -> None:
    """The core's walk (``session_join::facts``) over a trace's decoded spans at release
    and over its records (``join_facts``, what ``serve`` and record-built traces use)."""
    from otel_oracles._native import join_facts
    from otel_oracles.assemble import assemble_offline, join_released
    from otel_oracles.decode import DecodedBatch, decode

    batches = [decode(body, "application/json") for body in _join_bodies()]
    assert all(batch.native is not None for batch in batches)
    released = list(assemble_offline(iter(batches)).released())
    assert len(released) == 4
    for trace, facts in released:
        assert facts is not None, "natively decoded: the facts come with the release"
        assert facts == join_facts(trace), trace.trace_id
    traces = [trace for trace, _ in released]
    assert join_facts(traces[0]) != join_facts(traces[1])
    # Records built in Python: no facts handed over, the join reads the records.
    batch = DecodedBatch(spans=[span for trace in traces for span in trace.spans])
    from_records = list(assemble_offline([batch]).released())
    assert [t.trace_id for t, _ in from_records] == [t.trace_id for t in traces]
    assert all(facts is None for _, facts in from_records)
    # Joined with the facts handed over, or reading the records: the same runs.
    given = list(join_released(assemble_offline(iter(batches)).released()))
    read = list(join_sessions(iter(traces)))
    assert _ids(given) == _ids(read) == [[1, 1, 1, 2], [3, 3], [4]]
    assert [[s.parent_span_id for s in t.spans] for t in given] == [
        [s.parent_span_id for s in t.spans] for t in read
    ]
