"""A surrogate is no character and has no UTF-8 text, yet a ``str`` an application or a
plug-in oracle made can hold one (``surrogateescape`` decoding, ``os.fsdecode``). The report
writers write it as its escape (``\\udcff``, see ``tests/report/test_surrogate_text.py``);
the OTLP emitter refused the whole batch with ``UnicodeEncodeError``, so results already
graded never reached the collector. It now writes the same escape, through the real SDK
exporter into a real sink, in each explain mode."""

from __future__ import annotations

import pytest

from otel_oracles.emit import EmitResult, EmitSettings, build_emitter
from otel_oracles.emit import _names as n
from otel_oracles.model.result import Outcome
from tests.emit.conftest import make_results, make_trajectory, make_verdict
from tests.support.otlp_sink import OtlpSink

LONE = "\udcff"
"""What ``b"\\xff".decode("utf-8", "surrogateescape")`` gives."""
SHOWN = "\\udcff"
"""The escape every writer writes for it."""


@pytest.mark.parametrize("explain", ["template", "full"])
def test_surrogates_in_a_verdict_are_sent_as_their_escapes(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, explain: str
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.http_endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    emitter = build_emitter("otlp", settings=EmitSettings(explain=explain))  # type: ignore[arg-type]
    trajectory = make_trajectory().model_copy(update={"agent_name": f"support{LONE}"})
    results = [
        r.model_copy(
            update={
                "name": f"{r.name}{LONE}",
                "message": f"{r.message} at /data/{LONE}.csv",
                "details": {**r.details, f"file{LONE}": f"/data/{LONE}.csv"},
            }
        )
        for r in make_results()
    ]
    verdict = make_verdict(trajectory, results).model_copy(update={"agent_name": f"support{LONE}"})
    assert emitter.export([(verdict, trajectory)]) is EmitResult.SUCCESS
    emitter.shutdown()

    spans = sink.wait_for_spans(1)
    logs = sink.wait_for_logs(len(results))
    assert spans[0].attributes[n.AGENT_NAME] == f"support{SHOWN}"
    names = {item.attributes[n.EVALUATION_NAME] for item in logs}
    assert names == {f"{r.name[:-1]}{SHOWN}" for r in results}
    failed = next(i for i in logs if i.attributes[n.EVALUATION_NAME] == f"never-delete{SHOWN}")
    assert failed.attributes[n.OUTCOME] == Outcome.INVARIANT_FAILURE.value
    if explain == "full":
        explanation = failed.attributes[n.EVALUATION_EXPLANATION]
        assert explanation.endswith(f"at /data/{SHOWN}.csv")
    traces = sink.wait_for_metric(n.METRIC_TRACES)
    assert [a[n.AGENT_NAME] for m in traces for a, _ in m.points()] == [f"support{SHOWN}"]
    # No byte of the requests is a surrogate's (invalid) UTF-8 form.
    assert b"\xed\xb3\xbf" not in sink.all_bytes()
