"""A token budget on runs whose model API answered an error instead of a completion.

``u_model_retry`` (the first model request answered HTTP 503, retried) and ``o_run_error``
(every model request after the search answered HTTP 500) hold model calls that failed before
any completion came back. Such a call spent no tokens: the model API refused the request
(an HTTP error status) or was never reached, so there is no usage to record, and the
instrumentations record none. A token budget over such a run is judged on the calls that
were answered, exactly as on the same run without the failure (``a_happy``'s capture of
the same source): a recovered retry's run as ``a_happy``'s, a run that ended in the refusal
of its only request as a run that spent nothing.

A failed call whose trace does not show that the API refused it (a timeout, a failure after
an answer came back, a span that records only "finish reason error") may have spent tokens:
its usage stays unknown and the budget missing evidence, never a pass (DESIGN section 8).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.model.contract import Contract
from otel_oracles.model.result import Outcome
from tests.oracles.test_contracts_on_real_traces import (
    MODEL_RETRY_UNRECOVERED,
    RUN_SPAN_UNENDED_ON_ERROR,
    TRACES,
    grade_file,
    trace_file,
)
from tests.support.one_check import one_check_contract

RECOVERED = "u_model_retry"
RUN_ERROR = "o_run_error"

UNRECOVERED = MODEL_RETRY_UNRECOVERED
"""``u_model_retry``: nothing retried the refused first request, so the run ended in it (the
matrix's list, which says why for each source): no model call was answered and the run spent
no tokens."""

REFUSAL_UNSHOWN = (
    "mastra",
    "mastra-stream",
    "pydantic-ai-openinference-stream",
    "dspy-otel-genai",
)
"""The refused model call's span does not show the refusal: Mastra's ``chat`` span records
finish reason ``error`` and nothing else, pydantic-ai's streamed ``chat`` span ends without
an error at all (the HTTP status is only on the agent run's span). A call that ended in an
error may have streamed part of an answer first, and one that shows no error may have been
answered with usage left unrecorded, so its usage is not known to be nothing: the budget
is missing evidence. DSPy 3.4's own engine raises ``dspy.utils.exceptions.LMServerError``
with the provider's message and no HTTP status in it (``error.type`` and the span's status
message under OpenTelemetry's DSPy instrumentation), and DSPy says of its retryable errors
that they are "not proof that the provider did no work": no refusal either."""

REFUSAL_HIDDEN_WITHOUT_CONTENT = {
    ("agent-framework-openinference", RUN_ERROR),
    ("livekit-agents", RUN_ERROR),
}
"""The failed call's error names the HTTP status only in its message, which content capture
off drops: Agent Framework's ``ChatClientException`` and LiveKit's ``APIConnectionError``
(raised once the client's own retries are spent, each retry's span typed ``500``) are no
HTTP-status classes, and both also stand for failures after which tokens may have been
spent. With content on the message shows the status."""


def sources(scenario: str) -> list[str]:
    """The sources that captured ``scenario``."""
    return sorted(
        {p.parent.name for p in TRACES.glob(f"*/{scenario}.otlp.json*") if ".logs." not in p.name}
    )


def budget_outcome(source: str, scenario: str, content: bool, contract: Contract) -> Outcome:
    """The one token-budget check's outcome on the capture."""
    [(verdict, _)] = grade_file(trace_file(source, scenario, content), contract)
    [result] = [r for r in verdict.results if r.oracle_type == "tokens"]
    return result.outcome


def truth(source: str, scenario: str, content: bool, budget: int, tmp_path: Path) -> Outcome:
    """What a budget of ``budget`` total tokens must give on the capture.

    The same run without the refused calls is ``a_happy``'s capture of the source: a
    recovered run spent what it spent, an ``o_run_error`` run spent a part of it (its first
    model call's, which asked for the search), and a run whose only request was refused
    spent nothing."""
    if scenario == RECOVERED and source in UNRECOVERED:
        return Outcome.MISSING_EVIDENCE if source in REFUSAL_UNSHOWN else Outcome.PASS
    happy = budget_outcome(
        source,
        "a_happy",
        content,
        one_check_contract(tmp_path, "{type: tokens, max_total_tokens: 1}"),
    )
    refusal_hidden = not content and (source, scenario) in REFUSAL_HIDDEN_WITHOUT_CONTENT
    if happy == Outcome.MISSING_EVIDENCE:
        return Outcome.MISSING_EVIDENCE  # the source records no usage on an answered call
    assert happy == Outcome.INVARIANT_FAILURE, (source, "a_happy spends more than 1 token")
    if budget == 1:
        return Outcome.INVARIANT_FAILURE  # the answered calls' recorded usage is over it
    if scenario == RUN_ERROR and source in RUN_SPAN_UNENDED_ON_ERROR:
        # The run's span never ended: its children name a parent the trace lacks, so the
        # trace is a fragment of the run, and a count within budget is not the run's.
        return Outcome.MISSING_EVIDENCE
    if source in REFUSAL_UNSHOWN or refusal_hidden:
        return Outcome.MISSING_EVIDENCE
    return Outcome.PASS


@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
@pytest.mark.parametrize(
    ("source", "scenario"),
    [(s, RECOVERED) for s in sources(RECOVERED)] + [(s, RUN_ERROR) for s in sources(RUN_ERROR)],
)
def test_a_refused_model_call_spent_no_tokens(
    source: str, scenario: str, content: bool, tmp_path: Path
) -> None:
    """The budget is judged on the answered calls; a refused call neither adds usage nor
    hides the run's."""
    assert len(sources(RECOVERED)) >= 12 and len(sources(RUN_ERROR)) >= 30
    for budget in (1_000_000_000, 1):
        want = truth(source, scenario, content, budget, tmp_path)
        c = one_check_contract(tmp_path, f"{{type: tokens, max_total_tokens: {budget}}}")
        got = budget_outcome(source, scenario, content, c)
        assert got == want, (budget, got, want)
