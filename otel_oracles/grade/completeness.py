"""``trace_complete``: the evidence check every contract gets for free.

Why it is not an oracle a contract lists: a trace whose spans name parents that never arrived
(a lost export batch, a span of the run still in flight when the trace was released) shows
the graders only part of the run, whatever the contract checks. So every verdict of such a
trajectory carries one ``missing_evidence`` result naming the orphan spans. The same spans
make the trace a fragment of its run (``evidence.fragment_gap``): the checks the missing part
could falsify, and those reading the answer, are missing evidence on their own.

That result fails the verdict even under ``on_missing_evidence: warn``. Why: ``warn`` accepts
what the instrumentation does not record (content capture off, a redacted value), a
standing property of the set-up that a contract's owner decided to live with. Spans naming a
parent that never arrived are no such property: they show that this run was cut off (its
process killed, an export lost, the run still going), and under ``warn`` every check such a
run cannot answer is accepted, so a killed run would pass. A run not shown to have finished
is never a pass.
"""

from __future__ import annotations

from otel_oracles.model.contract import Contract
from otel_oracles.model.result import OracleResult, Outcome
from otel_oracles.model.step import Trajectory

TRACE_COMPLETE = "trace_complete"
"""The check's ``oracle_type`` and ``name`` in results."""


def trace_complete(contract: Contract, trajectory: Trajectory) -> list[OracleResult]:
    """No result when every span's parent is in the trace; else one ``missing_evidence``
    result naming the spans whose parent is missing, failing whatever the contract's
    ``on_missing_evidence`` (see above)."""
    orphans = trajectory.orphan_spans
    if not orphans:
        return []
    return [
        OracleResult(
            oracle_type=TRACE_COMPLETE,
            name=TRACE_COMPLETE,
            layer="evidence",
            outcome=Outcome.MISSING_EVIDENCE,
            passed=False,
            message=(
                f"{len(orphans)} span(s) name a parent span that is not in the trace: "
                "part of the trace is missing, so the run is not shown to have finished "
                "(this fails the trace even under on_missing_evidence: warn)"
            ),
            details={"orphan_spans": list(orphans)},
            span_ids=list(orphans),
            contract_id=contract.id,
            contract_version=contract.version,
        )
    ]
