"""Tool results a framework wraps in an envelope of its own (AgentScope's ``ToolResponse``,
recorded as JSON by 2.x and as its Python repr by 1.x): the envelope's content is the tool's
result, so a failure or an empty result inside it is seen, never read as a success."""

from __future__ import annotations

import pytest

from otel_oracles.model.result import Outcome
from tests.oracles.test_contracts_on_real_traces import TRACES, contract_named, grade_files


@pytest.mark.parametrize(
    ("scenario", "check", "want"),
    [
        ("c_retry_exhausted", "search-retry", Outcome.BUDGET_EXHAUSTED),
        ("j_undisclosed_failure", "degraded-disclosed", Outcome.INVARIANT_FAILURE),
        ("f_degraded", "degraded-disclosed", Outcome.TOLERATED),
    ],
)
def test_an_agentscope_1_tool_response_repr_is_the_tool_s_result(
    scenario: str, check: str, want: Outcome
) -> None:
    """AgentScope 1.x records a tool's ``ToolResponse`` as its Python repr
    (``ToolResponse(content=[{'type': 'text', 'text': 'Error: ...'}], ...)``). Held out, the
    results were unread, so every OK call had no known outcome (missing evidence, never a
    pass); ``agentscope.yaml`` reads the repr into the same envelope as 2.x's JSON, so the
    failed and the empty searches are seen."""
    path = TRACES / "agentscope-1" / f"{scenario}.otlp.json"
    verdict, _ = grade_files([path], contract_named("support-rag"))[0]
    assert {r.name: r.outcome for r in verdict.results}[check] == want
