"""What a report shows of a verdict, built as a copy: each result's message and details
replaced by what the privacy filter shows of them (``shown_message``, ``scrub_details``).

The writers apply the filter as they render each result and build no copy; this copy is
the reference their text is held to (rendering it without the filter must give the same
bytes), as the reports were written when they were given such copies."""

from __future__ import annotations

from otel_oracles.emit import shown_message
from otel_oracles.emit._explain import scrub_details
from otel_oracles.model.result import OracleResult, Verdict


def shown_result(result: OracleResult) -> OracleResult:
    """``result`` with the message and details a report shows by default."""
    update = {"message": shown_message(result), "details": scrub_details(result.details)}
    return result.model_copy(update=update)


def shown_copy(verdict: Verdict) -> Verdict:
    """``verdict`` with every result as ``shown_result`` makes it."""
    return verdict.model_copy(update={"results": [shown_result(r) for r in verdict.results]})
