"""The online joiner's policy, on hand-made released traces and an injected clock (no sleeps):
traces of one run (a span link, a shared session id) leave together once quiet for the
window, a group waits on while a trace it links to is still being assembled, and the caps
release early without dropping anything."""

from __future__ import annotations

import json
from pathlib import Path

from otel_oracles.assemble._sessions import first_start, join_keys
from otel_oracles.assemble.online import ReadyTrace
from otel_oracles.assemble.online_join import OnlineJoiner, subject_trace
from otel_oracles.decode import decode
from otel_oracles.model.span import LinkRecord, SpanRecord
from tests.support.online import ManualClock

REPO = Path(__file__).resolve().parent.parent.parent


def _ready(n: int, *, session: str | None = None, links_to: int | None = None,
           start: int | None = None, spans: int = 1) -> ReadyTrace:  # fmt: skip
    trace_id = f"{n:032x}"
    attrs = {"gen_ai.conversation.id": session} if session else {}
    links = [LinkRecord(f"{links_to:032x}", f"{links_to:016x}")] if links_to is not None else []
    begin = n if start is None else start
    root = SpanRecord(trace_id, f"{n:016x}", "", f"turn {n}", start_ns=begin, end_ns=begin + 9,
                      attributes=attrs, links=links)  # fmt: skip
    children = [
        SpanRecord(
            trace_id, f"{n:08x}{i:08x}", root.span_id, "child", start_ns=begin + 1, end_ns=begin + 2
        )
        for i in range(1, spans)
    ]
    return ReadyTrace(trace_id, [root, *children], [], "complete", 0.0)


def _ids(subjects: list[ReadyTrace]) -> list[list[int]]:
    return [[int(t, 16) for t in s.trace_ids] for s in subjects]


def _joiner(clock: ManualClock, **over: object) -> OnlineJoiner:
    args: dict[str, object] = {"window": 5.0, "max_traces": 100, "max_spans": 1000, "max_age": 600}
    args.update(over)
    return OnlineJoiner(clock=clock, **args)  # type: ignore[arg-type]  # test overrides


def test_traces_sharing_a_session_leave_together_once_quiet_for_the_window() -> None:
    clock = ManualClock(100.0)
    joiner = _joiner(clock)
    joiner.add([_ready(1, session="c1"), _ready(2)])
    clock.now += 3
    joiner.add([_ready(3, session="c1")])
    clock.now += 2.5
    assert _ids(joiner.due()) == [[2]], "2 is quiet for 5 s; the c1 group was joined 2.5 s ago"
    clock.now += 2.5
    assert _ids(joiner.due()) == [[1, 3]]
    assert (joiner.stats.subjects, joiner.stats.traces) == (1, 2)
    assert joiner.waiting_traces == 0 and joiner.waiting_spans == 0


def test_a_child_linking_to_a_waiting_trace_joins_it_in_either_order() -> None:
    for order in ([1, 2], [2, 1]):
        clock = ManualClock(100.0)
        joiner = _joiner(clock)
        made = {1: _ready(1), 2: _ready(2, links_to=1)}
        joiner.add([made[order[0]]])
        clock.now += 4
        joiner.add([made[order[1]]])
        clock.now += 5
        (subject,) = joiner.due()
        assert subject.trace_id == f"{1:032x}", "named by the trace that started first"
        assert subject.members == (f"{1:032x}", f"{2:032x}")


def test_a_group_waits_while_a_trace_it_links_to_is_still_being_assembled() -> None:
    clock = ManualClock(100.0)
    open_traces = {f"{1:032x}"}
    joiner = _joiner(clock, is_open=lambda t: t in open_traces)
    joiner.add([_ready(2, links_to=1)])
    clock.now += 60
    assert joiner.due() == [], "its parent run is still open"
    open_traces.clear()
    joiner.add([_ready(1)])
    clock.now += 5
    assert _ids(joiner.due()) == [[1, 2]]


def test_a_session_every_trace_shares_leaves_at_max_age_and_the_next_trace_starts_anew() -> None:
    clock = ManualClock(100.0)
    joiner = _joiner(clock, max_age=20.0)
    for n in range(1, 6):  # a trace every 4 s: the group is never quiet for the window
        joiner.add([_ready(n, session="same")])
        assert joiner.due() == []
        clock.now += 4
    joiner.add([_ready(6, session="same")])
    assert _ids(joiner.due()) == [[1, 2, 3, 4, 5]], "20 s after its first trace"
    assert joiner.stats.released_early == 1 and joiner.waiting_traces == 1
    clock.now += 5
    assert _ids(joiner.due()) == [[6]]


def test_waiting_for_a_trace_still_being_assembled_ends_at_max_age() -> None:
    clock = ManualClock(100.0)
    joiner = _joiner(clock, max_age=30.0, is_open=lambda _t: True)
    joiner.add([_ready(2, links_to=1)])
    clock.now += 29
    assert joiner.due() == []
    clock.now += 6  # checked once per window: it leaves within max_age + window
    assert _ids(joiner.due()) == [[2]]
    assert joiner.stats.released_early == 1


def test_over_the_trace_cap_the_group_quiet_longest_leaves_early_and_is_counted() -> None:
    clock = ManualClock(100.0)
    joiner = _joiner(clock, max_traces=2)
    joiner.add([_ready(1)])
    clock.now += 1
    joiner.add([_ready(2), _ready(3)])
    assert joiner.stats.released_early == 1
    assert _ids(joiner.due()) == [[1]], "released before its window, not dropped"
    assert joiner.waiting_traces == 2
    assert sorted(_ids(joiner.drain())) == [[2], [3]]


def test_over_the_span_cap_groups_leave_early() -> None:
    clock = ManualClock(100.0)
    joiner = _joiner(clock, max_spans=5)
    joiner.add([_ready(1, spans=3), _ready(2, spans=3)])
    assert joiner.stats.released_early == 1 and joiner.waiting_spans == 3
    assert _ids(joiner.due()) == [[1]]


def test_room_holds_back_while_released_subjects_wait_for_grading_slots() -> None:
    clock = ManualClock(100.0)
    joiner = _joiner(clock)
    joiner.add([_ready(1), _ready(2), _ready(3)])
    clock.now += 5
    assert len(joiner.due(limit=1)) == 1
    assert joiner.ready_subjects == 2
    assert joiner.room(2) == 0 and joiner.room(5) == 3


def test_the_subject_trace_hangs_a_linked_sub_run_under_the_span_it_links_to() -> None:
    clock = ManualClock(100.0)
    joiner = _joiner(clock)
    parent = _ready(1, start=10, spans=2)
    child = _ready(2, start=20)
    child.spans[0].links = [LinkRecord(parent.trace_id, parent.spans[1].span_id)]
    joiner.add([child, parent])
    (subject,) = joiner.drain()
    trace = subject_trace(subject)
    assert trace.trace_id == parent.trace_id
    assert [s.span_id for s in trace.roots] == [parent.spans[0].span_id]
    assert trace.children[parent.spans[1].span_id][0].trace_id == child.trace_id


def _proto_bodies() -> list[Path]:
    return [
        REPO / "tests" / "testdata" / "traces" / "agno-openinference" / "g_handoff.raw" / "1.pb",
        REPO / "tests" / "server" / "testdata" / "pydantic-ai" / "a_happy.pb",
    ]


def test_the_receiving_process_view_of_a_span_gives_the_same_join_keys() -> None:
    """``serve``'s receiving process joins ``WireSpan``s (decoded for transfer to the
    grading workers): they must yield the keys and start order the full records do."""
    span = {"traceId": "a" * 32, "spanId": "b" * 16, "name": "sub-run",
            "startTimeUnixNano": "5", "endTimeUnixNano": "9",
            "links": [{"traceId": "c" * 32, "spanId": "d" * 16}]}  # fmt: skip
    json_body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()
    bodies = [(p.read_bytes(), "application/x-protobuf") for p in _proto_bodies()]
    for payload, content_type in [*bodies, (json_body, "application/json")]:
        full = decode(payload, content_type).spans
        wire = decode(payload, content_type, for_transfer=True).spans
        assert full and len(wire) == len(full)
        for tid in {s.trace_id for s in full}:
            mine = [s for s in full if s.trace_id == tid]
            theirs = [s for s in wire if s.trace_id == tid]
            assert join_keys(tid, theirs) == join_keys(tid, mine)
            assert first_start(theirs) == first_start(mine)
    sessions = {k for s in decode(bodies[0][0], bodies[0][1], for_transfer=True).spans
                for k in join_keys(s.trace_id, [s]) if k.startswith("session.id:")}  # fmt: skip
    assert sessions, "the agno capture's agent spans carry session.id"
    (wire_span,) = decode(json_body, "application/json", for_transfer=True).spans
    assert f"trace:{'c' * 32}" in join_keys(wire_span.trace_id, [wire_span])
