"""Which failed model calls spent no tokens (``evidence.refused_model_call``), and what a
token budget makes of them: a call the model API refused counts as 0, any other failed
call without usage keeps the budget missing evidence.

The real captures are graded in ``tests/oracles/test_token_budget_unanswered_calls.py``;
these cases pin the edges the captures do not hold (a timeout, a failure after an answer
came back, an answer recorded on a failed span). Which error classes and messages say the
API answered an HTTP error status is the conventions' knowledge (``model_errors``): these
cases read the bundled files' declarations, as a mapped trajectory carries them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from otel_oracles.grade.evidence import find_gaps, refused_model_call
from otel_oracles.mapping import load_conventions
from otel_oracles.model.step import Step, StepKind, Trajectory

BUNDLED_ERRORS, BUNDLED_PATTERNS = load_conventions().model_status_errors()


def refused(step: Step) -> bool:
    """``refused_model_call`` with the bundled conventions' ``model_errors``."""
    return refused_model_call(step, BUNDLED_ERRORS, BUNDLED_PATTERNS)


def trajectory(*steps: Step) -> Trajectory:
    """A trajectory carrying the bundled ``model_errors``, as ``map_trace`` makes one."""
    return Trajectory(
        steps=list(steps),
        model_status_errors=BUNDLED_ERRORS,
        model_status_patterns=BUNDLED_PATTERNS,
    )


def call(**fields: Any) -> Step:
    """A failed model call with no usage, no output and no finish reason, plus ``fields``."""
    values: dict[str, Any] = {"index": 0, "kind": StepKind.GENERATION, "status": "error"}
    values.update(fields)
    return Step(**values)


@pytest.mark.parametrize(
    "fields",
    [
        {"error_type": "503"},
        {"error_type": "429", "error_message": ""},
        {"error_type": "openai.InternalServerError"},
        {"error_type": "AI_APICallError", "error_message": "The server is overloaded."},
        {"error_type": "azure.core.exceptions.HttpResponseError"},
        {"error_type": "pydantic_ai.exceptions.ModelHTTPError"},
        {"error_type": "Exception", "error_message": "Error code: 500 - The server had an error"},
        {"error_type": "ResponseError", "error_message": "Boom. (status code: 502)"},
        {"error_message": "ModelServerError: status_code: 500, model_name: m"},
        {"error_message": "503 UNAVAILABLE. {'error': {'code': 503}}"},
        {"error_type": "503", "finish_reasons": ["error"], "input_tokens": 12},
        {"error_type": "503", "output_messages": [{"role": "assistant", "parts": []}]},
    ],
)
def test_the_model_api_refused_the_call(fields: dict[str, Any]) -> None:
    assert refused(call(**fields))


@pytest.mark.parametrize(
    "fields",
    [
        {"status": "ok", "error_type": "503"},  # not failed
        {"error_type": "APITimeoutError", "error_message": "Request timed out."},
        {"error_type": "ValidationError", "error_message": "1 validation error for Answer"},
        {"error_type": "ChatClientException", "error_message": ""},  # status not shown
        {"error_type": "200"},
        {"error_type": "5031"},
        {"error_type": "\uff15\uff10\uff13"},  # fullwidth digits: no HTTP status
        {"error_message": "the report says Error code: 5000 items"},
        {"error_message": "retry after 503 seconds"},
        {"error_type": "503", "output_tokens": 7},  # usage recorded: an answer came back
        {"error_type": "503", "finish_reasons": ["length"]},
        {
            "error_type": "503",
            "output_messages": [
                {"role": "assistant", "parts": [{"type": "text", "content": "hi"}]}
            ],
        },
        {"error_type": None, "finish_reasons": ["error"]},  # Mastra's chat span
    ],
)
def test_a_call_that_may_have_spent_tokens(fields: dict[str, Any]) -> None:
    assert not refused(call(**fields))


def test_token_usage_evidence_skips_refused_calls_only() -> None:
    answered = Step(
        index=1, kind=StepKind.GENERATION, status="ok", input_tokens=10, output_tokens=5
    )
    refused = call(error_type="503")
    timed_out = call(index=2, error_type="APITimeoutError")
    assert find_gaps(["token_usage"], trajectory(refused, answered)) == []
    assert find_gaps(["token_usage"], trajectory(refused)) == []
    [gap] = find_gaps(["token_usage"], trajectory(refused, answered, timed_out))
    assert "1 of 3 model call(s)" in gap


def test_the_client_error_names_are_the_conventions_not_the_graders() -> None:
    """An error class or message no convention declares is no refusal: the grader knows no
    client of its own. Without any declaration only an HTTP status in ``error.type`` (the
    semantic conventions' own value) says the API refused the call."""
    by_class = call(error_type="openai.RateLimitError")
    by_text = call(error_type="Exception", error_message="Error code: 429 - slow down")
    assert refused(by_class) and refused(by_text)
    assert not refused_model_call(by_class) and not refused_model_call(by_text)
    assert refused_model_call(call(error_type="429"))
    answered = Step(
        index=1, kind=StepKind.GENERATION, status="ok", input_tokens=10, output_tokens=5
    )
    [gap] = find_gaps(["token_usage"], Trajectory(steps=[by_class, answered]))
    assert "1 of 2 model call(s)" in gap


def test_a_convention_file_declares_its_clients_errors(tmp_path: Path) -> None:
    """A user's file adds its client's error class and message form to the bundled ones
    (the lists of all files in effect are joined)."""
    (tmp_path / "acme.yaml").write_text(
        "name: acme\n"
        "model_errors:\n"
        "  status_errors: [AcmeQuotaError]\n"
        "  status_pattern: 'acme says [45]\\d\\d'\n"
        "rules: []\n"
    )
    errors, patterns = load_conventions([tmp_path]).model_status_errors()
    assert "AcmeQuotaError" in errors and set(BUNDLED_ERRORS) <= set(errors)
    assert len(patterns) == len(BUNDLED_PATTERNS) + 1
    assert refused_model_call(call(error_type="acme.AcmeQuotaError"), errors, patterns)
    assert refused_model_call(call(error_message="acme says 503, try later"), errors, patterns)
    assert not refused_model_call(call(error_message="acme says 503, try later"))
