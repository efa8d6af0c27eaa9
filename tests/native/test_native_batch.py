"""The core's ``Batch``: counts and records of a decoded body, empty ones included."""

from __future__ import annotations

from otel_oracles import _native


def test_an_empty_batch_has_no_records_and_nothing_wrong() -> None:
    batch = _native.Batch()
    assert batch.records() == ([], [])
    assert (batch.span_count, batch.log_count) == (0, 0)
    assert (batch.ignored, batch.rejected, batch.problems, batch.problems_omitted) == (0, 0, [], 0)
    assert repr(batch) == "Batch(spans=0, logs=0, ignored=0, rejected=0, problems=0)"
