"""The privacy boundary: by default nothing from the trace's content leaves the process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_oracles.emit import EmitSettings, build_emitter, explain, looks_secret
from otel_oracles.emit import _names as n
from otel_oracles.model.result import OracleResult, Outcome
from tests.emit.conftest import SECRETS, make_trajectory, make_verdict
from tests.support.otlp_sink import OtlpSink


def _emit_everything(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, protocol: str, explain_mode: str | None
) -> None:
    endpoint = sink.grpc_endpoint if protocol == "grpc" else sink.http_endpoint
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
    emitter = build_emitter("otlp", explain=explain_mode)
    trajectory = make_trajectory()
    emitter.export([(make_verdict(trajectory), trajectory)])
    emitter.shutdown()
    sink.wait_for_spans(1)
    sink.wait_for_logs(6)
    sink.wait_for_metric(n.METRIC_RESULTS)


@pytest.mark.parametrize("protocol", ["grpc", "http/protobuf"])
def test_no_planted_secret_in_any_emitted_byte_by_default(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink, protocol: str
) -> None:
    _emit_everything(monkeypatch, sink, protocol, None)
    wire = sink.all_bytes()
    assert len(wire) > 1000, "the test must actually see the emitted telemetry"
    for secret in SECRETS:
        assert secret.encode() not in wire, f"planted secret {secret!r} leaked to OTLP"
    for secret in ("jane.doe", "sk-live", "grandmother"):
        assert secret.encode() not in wire, f"fragment {secret!r} leaked to OTLP"


def test_explain_full_is_an_explicit_opt_in_that_does_emit_messages(
    monkeypatch: pytest.MonkeyPatch, sink: OtlpSink
) -> None:
    _emit_everything(monkeypatch, sink, "grpc", "full")
    assert b"jane.doe@example-customer.com" in sink.all_bytes(), (
        "with --explain full the oracle's own message is emitted (proves the grep can fail)"
    )


def test_no_planted_secret_in_results_file_by_default(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    emitter = build_emitter(None, out)
    trajectory = make_trajectory()
    emitter.export([(make_verdict(trajectory), trajectory)])
    emitter.shutdown()
    data = out.read_bytes()
    assert b"resourceLogs" in data
    for secret in SECRETS:
        assert secret.encode() not in data


def test_template_explanation_keeps_ids_tool_names_and_budgets() -> None:
    result = OracleResult(
        oracle_type="tool_retries",
        name="no-flaky-tools",
        layer="tolerance",
        outcome=Outcome.BUDGET_EXHAUSTED,
        passed=False,
        message="irrelevant",
        used=3,
        budget=1,
        step_indexes=[2, 4],
        details={"tool": "search_docs", "retries": 3, "query": "my password is hunter2"},
    )
    text = explain(result)
    assert text == (
        "no-flaky-tools: budget exhausted (used 3 of 1); steps=2,4; retries=3; tool=search_docs"
    )


def test_identifier_shaped_secrets_are_redacted_even_under_allowed_keys() -> None:
    result = OracleResult(
        oracle_type="tool_not_called",
        name="x",
        outcome=Outcome.INVARIANT_FAILURE,
        passed=False,
        message="",
        details={"tool": "sk-proj-abcdef0123456789abcdef", "tools": ["ok_tool", "a@b.io"]},
    )
    text = explain(result)
    assert "sk-proj" not in text and "a@b.io" not in text
    assert "ok_tool" in text and "[redacted]" in text


@pytest.mark.parametrize(
    "value",
    [
        "jane@example.com",
        "sk-live-abc123def456ghi789",
        "AKIAIOSFODNN7EXAMPLE",
        "eyJhbGciOiJIUzI1NiJ9x",
    ],
)
def test_secret_shapes_are_recognised(value: str) -> None:
    assert looks_secret(value)


@pytest.mark.parametrize("value", ["delete_records", "search_docs", "KeyError", "gpt-4o-mini"])
def test_identifiers_are_not_mistaken_for_secrets(value: str) -> None:
    assert not looks_secret(value)


def test_explanations_are_length_capped() -> None:
    result = OracleResult(
        oracle_type="t", name="n", outcome=Outcome.ERROR, passed=False, message="x" * 10_000
    )
    assert len(explain(result, "full")) <= 2048
    long_name = result.model_copy(update={"name": "n" * 1000})
    assert len(explain(long_name)) <= 256


def test_invalid_explain_mode_is_a_user_error() -> None:
    from otel_oracles.errors import OtelOraclesError

    with pytest.raises(OtelOraclesError, match="--explain"):
        build_emitter(None, None, explain="everything")
    assert EmitSettings().explain == "template"
    assert json.dumps(EmitSettings().model_dump())  # settings stay plain data


def test_bad_explain_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from otel_oracles.errors import OtelOraclesError

    monkeypatch.setenv("OTEL_ORACLES_EXPLAIN", "verbose")
    with pytest.raises(OtelOraclesError) as info:
        build_emitter(None, None)
    assert info.value.source == "OTEL_ORACLES_EXPLAIN"
    monkeypatch.setenv("OTEL_ORACLES_EXPLAIN", "full")
    assert EmitSettings.from_env().explain == "full"
