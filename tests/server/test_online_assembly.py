"""Online assembly: completion policy, late spans, memory bounds and backpressure.

A fake clock drives the policy so these run in milliseconds; the real-socket tests
(test_serve_*.py) check the same behaviour end to end.
"""

from __future__ import annotations

import pytest

from otel_oracles.assemble.online import BufferFull
from otel_oracles.model.span import LogRecord, SpanRecord
from tests.support.online import ManualClock, online_assembler


def span(trace: str, sid: str, parent: str = "", end: int = 2) -> SpanRecord:
    return SpanRecord(trace_id=trace, span_id=sid, parent_span_id=parent, name=sid, end_ns=end)


def test_trace_is_released_after_root_ended_and_decision_wait_of_quiet() -> None:
    clock = ManualClock()
    a = online_assembler(clock)
    a.offer([span("t1", "c1", parent="r")])
    a.offer([span("t1", "r")])
    clock.now += 9.9
    assert a.due() == [], "released before decision_wait had passed"
    clock.now += 0.2
    (ready,) = a.due()
    assert ready.reason == "complete" and not ready.incomplete
    assert {s.span_id for s in ready.spans} == {"c1", "r"}
    assert a.buffered_traces == 0 and a.buffered_items == 0


def test_a_new_span_restarts_the_decision_wait() -> None:
    clock = ManualClock()
    a = online_assembler(clock)
    a.offer([span("t1", "r")])
    clock.now += 8
    a.offer([span("t1", "c1", parent="r")])
    clock.now += 8
    assert a.due() == [], "the wait must count from the last arrival"
    clock.now += 3
    assert [r.trace_id for r in a.due()] == ["t1"]


def test_trace_without_ended_root_is_released_incomplete_at_max_trace_age() -> None:
    clock = ManualClock()
    a = online_assembler(clock)
    a.offer([span("t1", "c1", parent="r")])
    clock.now += 30
    assert a.due() == [], "no root: must wait for max_trace_age"
    clock.now += 31
    (ready,) = a.due()
    assert ready.reason == "max_age" and ready.incomplete


def test_late_spans_after_release_are_counted_not_buffered() -> None:
    clock = ManualClock()
    a = online_assembler(clock)
    a.offer([span("t1", "r")])
    clock.now += 11
    assert len(a.due()) == 1
    adm = a.offer([span("t1", "late1", parent="r"), span("t1", "late2", parent="r")])
    assert adm.late == 2 and adm.accepted == 0
    assert a.buffered_traces == 0, "a late span must not start a new trace"


def test_decision_cache_is_bounded() -> None:
    clock = ManualClock()
    a = online_assembler(clock, decision_cache_size=2)
    for t in ("t1", "t2", "t3"):
        a.offer([span(t, "r")])
    clock.now += 11
    assert len(a.due()) == 3
    assert a.offer([span("t1", "x", parent="r")]).late == 0, "t1 should have been forgotten"
    assert a.offer([span("t3", "x", parent="r")]).late == 1


def test_full_buffer_refuses_the_whole_request_and_buffers_nothing() -> None:
    clock = ManualClock()
    a = online_assembler(clock, max_traces=2)
    a.offer([span("t1", "r"), span("t2", "r")])  # both complete: they drain by themselves
    with pytest.raises(BufferFull) as info:
        a.offer([span("t3", "c", parent="r"), span("t3", "r")])
    assert info.value.retry_after == 0.5
    assert a.buffered_items == 2, "a refused request must leave no trace in the buffer"
    # spans of already-buffered traces still fit
    assert a.offer([span("t1", "c", parent="r")]).accepted == 1
    clock.now += 11
    assert len(a.due()) == 2
    assert a.offer([span("t3", "r")]).accepted == 1, "room again once the buffer drained"


def test_span_budget_counts_across_traces() -> None:
    clock = ManualClock()
    a = online_assembler(clock, max_buffered_spans=3)
    a.offer([span("t1", "a"), span("t1", "b", parent="a")])
    with pytest.raises(BufferFull):
        a.offer([span("t1", "c", parent="a"), span("t1", "d", parent="a")])


def test_empty_buffer_takes_an_oversized_request_so_the_sender_cannot_livelock() -> None:
    clock = ManualClock()
    a = online_assembler(clock, max_buffered_spans=2)
    adm = a.offer([span("t1", str(i)) for i in range(5)])
    assert adm.accepted == 5


def test_spans_over_the_per_trace_limit_are_rejected_and_the_trace_is_incomplete() -> None:
    clock = ManualClock()
    a = online_assembler(clock, max_spans_per_trace=3)
    adm = a.offer([span("t1", "r")] + [span("t1", f"c{i}", parent="r") for i in range(4)])
    assert (adm.accepted, adm.rejected) == (3, 2)
    assert "max_spans_per_trace" in adm.message
    clock.now += 11
    (ready,) = a.due()
    assert ready.incomplete and ready.reason == "span_limit" and ready.dropped_spans == 2


def test_logs_join_their_trace_and_logs_without_trace_id_are_counted() -> None:
    clock = ManualClock()
    a = online_assembler(clock)
    log = LogRecord(trace_id="t1", span_id="r", event_name="gen_ai.choice", time_ns=1)
    orphan = LogRecord(trace_id="", span_id="", event_name="x", time_ns=1)
    adm = a.offer([span("t1", "r")], [log, orphan])
    assert adm.accepted == 2 and adm.unattached_logs == 1
    clock.now += 11
    (ready,) = a.due()
    assert ready.logs == [log]


def test_drain_releases_waiting_traces_complete_and_the_rest_incomplete() -> None:
    clock = ManualClock()
    a = online_assembler(clock)
    a.offer([span("done", "r")])
    clock.now += 11
    a.offer([span("open", "c", parent="r")])
    released = {r.trace_id: r.reason for r in a.drain()}
    assert released == {"done": "complete", "open": "shutdown"}
    assert a.buffered_traces == 0 and a.buffered_items == 0


def test_due_respects_the_limit_and_keeps_the_rest_buffered() -> None:
    clock = ManualClock()
    a = online_assembler(clock)
    for t in ("t1", "t2", "t3"):
        a.offer([span(t, "r")])
    clock.now += 11
    assert len(a.due(limit=2)) == 2
    assert a.buffered_traces == 1
    assert len(a.due()) == 1


def test_trace_over_its_span_limit_does_not_wait_for_a_root_it_may_have_lost() -> None:
    clock = ManualClock()
    a = online_assembler(clock, max_spans_per_trace=2)
    a.offer([span("t1", f"c{i}", parent="r") for i in range(3)] + [span("t1", "r")])
    clock.now += 11
    (ready,) = a.due()
    assert ready.reason == "span_limit" and ready.incomplete


# ---- the livelock a collector's retry queue caused (tests/collector, full_grader) ----------


def test_request_continuing_a_buffered_trace_is_admitted_over_max_traces() -> None:
    """The root of a buffered trace comes with a new trace's first spans (a collector batch
    mixes traces): refusing it would keep the buffered trace from ever completing."""
    clock = ManualClock()
    a = online_assembler(clock, max_traces=2)
    a.offer([span("t1", "c", parent="r1"), span("t2", "c", parent="r2")])  # roots still out
    adm = a.offer([span("t1", "r1"), span("t3", "c", parent="r3")])
    assert adm.accepted == 2 and adm.overflow
    assert a.buffered_traces == 3
    clock.now += 11
    assert [r.trace_id for r in a.due()] == ["t1"], "t1 completed thanks to the admission"


def test_new_traces_are_admitted_when_nothing_buffered_would_drain_by_itself() -> None:
    """Every buffered trace waits for its root and the request brings only new traces (the
    roots are queued behind it at the sender): refusing cannot make room, admitting can."""
    clock = ManualClock()
    a = online_assembler(clock, max_traces=2)
    a.offer([span("t1", "c", parent="r1"), span("t2", "c", parent="r2")])
    assert a.offer([span("t3", "c", parent="r3")]).overflow
    # but when a buffered trace is about to complete, a new trace waits for the room it frees
    a.offer([span("t1", "r1"), span("t2", "r2")])
    with pytest.raises(BufferFull):
        a.offer([span("t4", "c", parent="r4")])


def test_hard_trace_cap_evicts_the_oldest_open_traces_instead_of_livelocking() -> None:
    clock = ManualClock()
    a = online_assembler(clock, max_traces=2, overflow_traces=1)
    for t in ("t1", "t2", "t3"):  # all open; t3 over max_traces (overflow)
        a.offer([span(t, "c", parent="r")])
        clock.now += 1
    with pytest.raises(BufferFull):
        a.offer([span("t4", "c", parent="r")])
    assert a.evictions == 0, "traces that just received data are not evicted"
    clock.now += 10
    assert a.due() == []
    with pytest.raises(BufferFull):
        a.offer([span("t4", "c", parent="r")])
    assert a.evictions == 1, "the hard cap must free room for the retry"
    (ready,) = a.due()
    assert (ready.trace_id, ready.reason, ready.incomplete) == ("t1", "evicted", True)
    assert a.offer([span("t4", "c", parent="r")]).accepted == 1, "the retry fits"
    assert a.offer([span("t1", "r")]).late == 1, "an evicted trace's late spans are counted"


def test_hard_span_cap_evicts_only_what_draining_traces_do_not_free() -> None:
    clock = ManualClock()
    a = online_assembler(clock, max_buffered_spans=4)
    a.offer([span("done", "r")])  # drains by itself
    a.offer([span("open", f"c{i}", parent="r") for i in range(3)])
    clock.now += 10
    with pytest.raises(BufferFull):
        # 6 > 4, and 5 even once "done" is graded: the open one must go
        a.offer([span("open", "c3", parent="r"), span("open", "c4", parent="r")])
    assert a.evictions == 1
    released = [(r.trace_id, r.reason) for r in a.due()]
    assert released == [("open", "evicted"), ("done", "complete")]
    a2 = online_assembler(clock, max_buffered_spans=4)
    a2.offer([span("done", "r"), span("done", "c", parent="r")])
    a2.offer([span("open", "c1", parent="r")])
    with pytest.raises(BufferFull):
        a2.offer([span("new", "a", parent="r"), span("new", "b", parent="r")])
    assert a2.evictions == 0, "the complete trace frees enough: refusing is enough"


def test_collector_retry_queue_drains_a_tiny_buffer_with_nothing_lost() -> None:
    """Model of tests/collector's full_grader scenario, without a collector: batches of 4
    records mixing up to 3 traces, log records before their spans, children before roots;
    a sender retrying refused batches (up to 10 in flight, as the collector's consumers) in
    arrival order. Every trace must be graded complete and no record lost."""
    import random

    rng = random.Random(7)
    clock = ManualClock()
    a = online_assembler(clock, max_traces=3, decision_wait=1.0, max_trace_age=300.0)
    records: list[SpanRecord | LogRecord] = []
    for i in range(40):
        t = f"t{i:02d}"
        records.append(LogRecord(trace_id=t, span_id="r", event_name="e", time_ns=1))
        records += [span(t, f"c{j}", parent="r") for j in range(3)]
        records.append(span(t, "r"))
    batches = [records[i : i + 4] for i in range(0, len(records), 4)]
    queue = list(batches)
    inflight: list[list[SpanRecord | LogRecord]] = []
    graded: dict[str, str] = {}
    refused = 0
    for _step in range(2000):
        while queue and len(inflight) < 10:
            inflight.append(queue.pop(0))
        rng.shuffle(inflight)
        still = []
        for batch in inflight:
            spans_ = [r for r in batch if isinstance(r, SpanRecord)]
            logs = [r for r in batch if isinstance(r, LogRecord)]
            try:
                adm = a.offer(spans_, logs)
            except BufferFull:
                refused += 1
                still.append(batch)
                continue
            assert adm.late == 0, "nothing may arrive after its trace was graded"
        inflight = still
        clock.now += 0.25
        for ready in a.due():
            graded[ready.trace_id] = ready.reason
        if not queue and not inflight and not a.buffered_traces:
            break
    assert refused > 0, "the tiny buffer should have pushed back"
    assert len(graded) == 40, f"only {len(graded)} graded: livelock"
    assert set(graded.values()) == {"complete"}, graded
    assert clock.now - 1000.0 < 60, "drained long before max_trace_age"
