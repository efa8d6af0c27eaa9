"""Fixtures for the emit tests: verdicts over one trajectory that carries planted secrets,
and a real OTLP sink."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

from otel_oracles.emit import Sink
from otel_oracles.emit._records import ItemBatch
from otel_oracles.model.result import OracleResult, Outcome, Verdict, count_outcomes
from otel_oracles.model.step import SpanRef, Step, StepKind, Trajectory
from tests.support.otlp_sink import OtlpSink

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
ROOT_SPAN = "00f067aa0ba902b7"
TOOL_SPAN = "b7ad6b7169203331"
CHAT_SPAN = "53995c3f42cd8ad8"

SECRET_EMAIL = "jane.doe@example-customer.com"
SECRET_KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
SECRET_BODY = "Please refund order 55321 for my sick grandmother"
SECRETS = (SECRET_EMAIL, SECRET_KEY, SECRET_BODY)


def make_trajectory(trace_id: str | None = TRACE_ID) -> Trajectory:
    ref = (lambda s: SpanRef(trace_id=trace_id, span_id=s)) if trace_id else (lambda s: None)
    return Trajectory(
        trace_id=trace_id,
        root_span_id=ROOT_SPAN if trace_id else None,
        root_name="invoke_agent support",
        agent_name="support",
        resource={"service.name": "support-agent", "service.version": "2.4.1"},
        steps=[
            Step(
                index=0,
                kind=StepKind.GENERATION,
                provider="openai",
                model="gpt-4o-mini",
                input_messages=[
                    {"role": "user", "parts": [{"type": "text", "content": SECRET_BODY}]}
                ],
                source=ref(CHAT_SPAN),
            ),
            Step(
                index=1,
                kind=StepKind.TOOL_CALL,
                tool="delete_records",
                arguments={"email": SECRET_EMAIL, "api_key": SECRET_KEY},
                result=f"deleted records of {SECRET_EMAIL}",
                source=ref(TOOL_SPAN),
            ),
        ],
    )


def make_results(contract_id: str = "support-answers") -> list[OracleResult]:
    """One result per outcome; every message quotes trace content, as a careless oracle might."""
    common = {"contract_id": contract_id, "contract_version": 3}
    return [
        OracleResult(
            oracle_type="tool_not_called",
            name="never-delete",
            outcome=Outcome.INVARIANT_FAILURE,
            passed=False,
            message=f"delete_records called with {{'email': '{SECRET_EMAIL}', "
            f"'api_key': '{SECRET_KEY}'}}",
            details={"tool": "delete_records", "arguments": {"email": SECRET_EMAIL}, "calls": 1},
            span_ids=[TOOL_SPAN],
            step_indexes=[1],
            **common,
        ),
        OracleResult(
            oracle_type="tool_retries",
            name="one-retry",
            layer="tolerance",
            outcome=Outcome.TOLERATED,
            passed=True,
            message=f"1 retry of search ({SECRET_BODY})",
            used=1,
            budget=1,
            **common,
        ),
        OracleResult(
            oracle_type="tool_retries",
            name="no-flaky-tools",
            layer="tolerance",
            outcome=Outcome.BUDGET_EXHAUSTED,
            passed=False,
            message="3 retries",
            used=3,
            budget=1,
            details={"tool": SECRET_KEY},
            span_ids=[TOOL_SPAN],
            **common,
        ),
        OracleResult(
            oracle_type="schema_valid",
            name="answer-schema",
            layer="evidence",
            outcome=Outcome.MISSING_EVIDENCE,
            passed=False,
            message=f"output messages not captured; last user said {SECRET_BODY}",
            **common,
        ),
        OracleResult(
            oracle_type="citations_grounded",
            name="grounded",
            outcome=Outcome.ERROR,
            passed=False,
            message=f"oracle raised KeyError: '{SECRET_EMAIL}'",
            details={"error.type": "KeyError"},
            **common,
        ),
        OracleResult(
            oracle_type="tool_not_called",
            name="no-shell",
            outcome=Outcome.PASS,
            passed=True,
            message="shell never called",
            span_ids=[CHAT_SPAN],
            **common,
        ),
    ]


def make_verdict(
    trajectory: Trajectory,
    results: list[OracleResult] | None = None,
    contract_id: str = "support-answers",
) -> Verdict:
    results = make_results(contract_id) if results is None else results
    return Verdict(
        contract_id=contract_id,
        contract_version=3,
        contract_hash="0123456789abcdef",
        subject=trajectory.trace_id or "trajectories/run-01.json",
        trace_id=trajectory.trace_id,
        root_span_id=trajectory.root_span_id,
        root_name=trajectory.root_name,
        agent_name=trajectory.agent_name,
        passed=all(r.passed for r in results),
        results=results,
        counts=count_outcomes(results),
        duration_ns=1_500_000,
    )


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    with OtlpSink() as s:
        yield s


_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: base64.b64decode(v).hex() if k in _ID_KEYS and isinstance(v, str) else _hex_ids(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def reference_otlp_json(message: Message) -> bytes:
    """A protobuf OTLP request as protobuf's own JSON printer writes it, with the hex ids
    OTLP/JSON uses: the reference the core's OTLP/JSON writers are held to."""
    return orjson.dumps(_hex_ids(MessageToDict(message, use_integers_for_enums=True)))


class KeepingSink(Sink):
    """Keeps every batch it is handed, by signal, as the emitter hands it to every sink."""

    name = "keep"

    def __init__(self) -> None:
        self.batches: dict[str, list[ItemBatch[Any]]] = {"traces": [], "logs": []}

    def export(self, signal: Any, batch: ItemBatch[Any]) -> bool:
        self.batches[signal].append(batch)
        return True

    def shutdown(self) -> None:
        pass
