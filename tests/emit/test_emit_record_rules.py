"""The rules the core's record builder (``VerdictRecords``) applies to a verdict's ids and
lists, and where it cuts the records into export requests: which span a log record points
at, which span ids a result shows, when a grade span is a child of the graded span and when
it starts a trace of its own, and how many records a request holds."""

from __future__ import annotations

from typing import Any

from otel_oracles.emit import EmitResult, EmitSettings, OtelEmitter
from otel_oracles.emit import _names as n
from otel_oracles.emit._records import LogItem, SpanItem, merged
from otel_oracles.model.result import OracleResult, Outcome
from tests.emit.conftest import ROOT_SPAN, TRACE_ID, KeepingSink, make_trajectory, make_verdict


def _result(name: str, span_ids: list[str]) -> OracleResult:
    return OracleResult(
        oracle_type="tool_not_called",
        name=name,
        outcome=Outcome.INVARIANT_FAILURE,
        passed=False,
        message="m",
        span_ids=span_ids,
        contract_id="support-answers",
        contract_version=3,
    )


def _emit(pairs: list[tuple[Any, Any]], **settings: Any) -> KeepingSink:
    keep = KeepingSink()
    emitter = OtelEmitter(sinks=[keep], settings=EmitSettings(metrics=False, **settings))
    assert emitter.export(pairs) is EmitResult.SUCCESS
    emitter.shutdown()
    return keep


def test_a_log_record_points_at_the_first_usable_span_id_of_its_result() -> None:
    late = "00000000000000bb"
    results = [
        _result("shown", ["not-an-id", "00000000000000aa", "00000000000000AC", late]),
        # none usable among the first 16: the first usable one after them is pointed at,
        # and none is shown
        _result("past", ["x"] * 16 + ["00000000000000FF", late, "00000000000000cc"]),
        _result("none", ["x"] * 20),
    ]
    trajectory = make_trajectory()
    keep = _emit([(make_verdict(trajectory, results), trajectory)])
    logs: list[LogItem] = [log for batch in keep.batches["logs"] for log in batch]
    by_name = {merged(log.chunks, log.extra)[n.EVALUATION_NAME]: log for log in logs}
    shown = merged(by_name["shown"].chunks, by_name["shown"].extra)
    assert shown[n.EVALUATED_SPAN_IDS] == ["00000000000000aa", late]
    assert by_name["shown"].span_id == 0xAA
    assert n.EVALUATED_SPAN_IDS not in (by_name["past"].extra or {})
    assert by_name["past"].span_id == 0xBB
    assert by_name["none"].span_id == int(ROOT_SPAN, 16), "no usable id: the root span"
    assert {log.trace_id for log in logs} == {int(TRACE_ID, 16)}


def test_a_grade_span_is_a_child_of_the_graded_span_only_when_its_ids_are_usable() -> None:
    trajectory = make_trajectory()
    upper = make_verdict(trajectory).model_copy(
        update={"trace_id": TRACE_ID.upper(), "root_span_id": ROOT_SPAN.upper()}
    )
    zero = make_verdict(trajectory).model_copy(
        update={"root_span_id": "0" * 16, "subject": "runs/agent-run.json"}
    )
    keep = _emit([(upper, trajectory), (zero, trajectory)])
    spans: list[SpanItem] = [span for batch in keep.batches["traces"] for span in batch]
    assert (spans[0].trace_id, spans[0].parent_id) == (int(TRACE_ID, 16), int(ROOT_SPAN, 16))
    assert spans[1].parent_id is None, "a zero span id is no parent"
    assert spans[1].trace_id not in (0, int(TRACE_ID, 16)), "its own, random trace"
    assert spans[1].extra is not None
    assert spans[1].extra[n.SUBJECT] == "agent-run.json", "the file's name only"
    assert len({span.span_id for span in spans}) == 2
    logs: list[LogItem] = [log for batch in keep.batches["logs"] for log in batch]
    zero_logs = logs[len(upper.results) :]
    ids = [
        (n.EVALUATED_SPAN_IDS in (log.extra or {}), (log.trace_id, log.span_id))
        for log in zero_logs
    ]
    pointed = {pair for shows, pair in ids if shows}
    unpointed = {pair for shows, pair in ids if not shows}
    assert unpointed == {(0, 0)}, "the root span's zero id: the record points at no span"
    assert pointed and (0, 0) not in pointed, "a result's own usable span id is kept"


def test_records_are_cut_into_requests_after_the_verdict_that_fills_one() -> None:
    trajectory = make_trajectory()
    two = [_result("a", []), _result("b", [])]
    pairs = [(make_verdict(trajectory, two), trajectory) for _ in range(5)]
    keep = _emit(pairs, max_export_batch_size=3)
    assert [len(b) for b in keep.batches["logs"]] == [4, 4, 2]
    assert [len(b) for b in keep.batches["traces"]] == [3, 2]


def test_checks_share_a_run_exactly_when_everything_it_holds_is_the_same() -> None:
    """A check's shared run (its contract, name, type, layer, outcome, explanation and error
    type) is found again by what it is made of: results that would make the same run share
    one object, and a result differing in any of those (its explanation through its steps,
    its error type, its contract's version) gets a run of its own that says so."""

    def result(name: str, **fields: Any) -> OracleResult:
        values: dict[str, Any] = {"outcome": Outcome.PASS, "passed": True}
        values.update(fields)
        return OracleResult(oracle_type="tool_not_called", name=name, message="m", **values)

    def errored(error: str) -> OracleResult:
        return result("crashed", outcome=Outcome.ERROR, passed=False, details={"error.type": error})

    trajectory = make_trajectory()
    first = make_verdict(
        trajectory,
        [
            result("a"),
            result("a", used=2, span_ids=["00000000000000aa"]),  # own values only: shared
            result("a", step_indexes=[3]),  # `steps=3` in its explanation
            errored("ValueError"),
            errored("KeyError"),
        ],
    )
    bumped = make_verdict(trajectory, [result("a")]).model_copy(update={"contract_version": 4})
    keep = _emit([(first, trajectory), (first, trajectory), (bumped, trajectory)])
    logs: list[LogItem] = [log for batch in keep.batches["logs"] for log in batch]
    runs = [log.chunks for log in logs]
    again = runs[5:10]
    assert all(x is y for x, y in zip(runs[:5], again, strict=True)), "a verdict seen again"
    assert runs[0] is runs[1]
    assert len({id(run) for run in runs[1:5]}) == 4
    assert runs[10] is not runs[0]
    shown = [merged(log.chunks, None) for log in logs]
    assert shown[2][n.EVALUATION_EXPLANATION] == "a: holds; steps=3"
    assert [s.get(n.ERROR_TYPE) for s in shown[3:5]] == ["ValueError", "KeyError"]
    assert (shown[0][n.CONTRACT_VERSION], shown[10][n.CONTRACT_VERSION]) == (3, 4)
