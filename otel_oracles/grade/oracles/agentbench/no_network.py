"""``no_network``: network access or a package-registry install in any step, or an outbound
request the trace recorded. It reads only the trajectory, so it imports nothing the three
workspace oracles share (``_workspace``)."""

from typing import ClassVar

from pydantic import Field, field_validator

from otel_oracles._native import CheckPlan
from otel_oracles.grade.network import OutboundRequest, outbound_requests
from otel_oracles.grade.oracles.base import (
    CoverageParams,
    Finding,
    GradeContext,
    OracleCheck,
    OracleParams,
)
from otel_oracles.grade.oracles.trace_common import PLANS
from otel_oracles.grade.registry import register_oracle
from otel_oracles.model.step import DEFAULT_NETWORK_PATTERNS, network_search


@register_oracle
class NoNetwork(OracleCheck):
    """Fail when any step mentions network access or a package-registry install.

    A case-insensitive substring scan of every step's raw JSON (curl, wget, http://,
    pip install, npm install, go get, ...). The first violation is named in the message.
    On a trace, every string a tool step carries is scanned (``Step.scan_text``), and an
    outbound HTTP request the trace recorded (``grade/network.py``) fails it too, naming the
    host.
    """

    oracle_type = "no_network"
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "tool_inputs"})
    needs_full_coverage = True
    failure_stands_on_gaps = True  # a recorded network command or request happened

    class Params(CoverageParams):
        patterns: tuple[str, ...] = Field(default=DEFAULT_NETWORK_PATTERNS, min_length=1)
        """Substrings that count as network access (case-insensitive); defaults to the
        AgentBench list."""

        @field_validator("patterns")
        @classmethod
        def _non_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
            if any(not p for p in value):
                raise ValueError("an empty pattern would match every step")
            return value

    given: Params
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: OracleParams) -> None:
        super().__init__(params)
        search, scan = network_search(self.given.patterns)
        self.native_plan = PLANS.no_network(search, scan, outbound_requests)

    def check(self, ctx: GradeContext) -> Finding:
        # The usual answer, no pattern in any step and no request: the core's
        # (``native_plan``, which searches as ``network_violations`` does).
        planned = self.native_plan.finding(ctx)
        return planned if planned is not None else self.python_body(ctx)

    def python_body(self, ctx: GradeContext) -> Finding:
        """Every answer of the check, the plan's included: ``check`` asks it where the plan
        leaves the answer to Python, and the plan's tests hold the plan to it."""
        params = self.given
        found = ctx.evidence.network_violations(params.patterns, ctx.trajectory.steps)
        requests = outbound_requests(ctx.evidence)
        if not found and requests:
            return _requests_finding(requests)
        if not found:
            return Finding.ok(f"no network access in {len(ctx.trajectory.steps)} steps")
        first = found[0]
        tool = f" ({first.tool})" if first.tool else ""
        steps = sorted({v.step_index for v in found})
        more = f" ({len(found) - 1} more match(es))" if len(found) > 1 else ""
        by_index = {s.index: s for s in ctx.trajectory.steps}
        spans = tuple(
            s.source.span_id for i in steps if (s := by_index.get(i)) and s.source is not None
        )
        return Finding.fail(
            f"step {first.step_index}{tool} matches network pattern {first.pattern!r}{more}",
            step_indexes=tuple(steps),
            span_ids=spans,
            details={
                "violations": [
                    {"step": v.step_index, "tool": v.tool, "pattern": v.pattern}
                    for v in found[:100]
                ]
            },
        )


def _requests_finding(requests: list[OutboundRequest]) -> Finding:
    first = requests[0]
    hosts = sorted({r.host for r in requests})
    more = f" ({len(requests) - 1} more request(s))" if len(requests) > 1 else ""
    return Finding.fail(
        f"step {first.step.index} is an outbound HTTP {first.method} request to {first.host}"
        f"{more}; hosts: {', '.join(hosts)}",
        step_indexes=tuple(r.step.index for r in requests),
        span_ids=tuple(r.step.source.span_id for r in requests if r.step.source is not None),
        details={
            "requests": [
                {"step": r.step.index, "method": r.method, "host": r.host} for r in requests[:100]
            ]
        },
    )
