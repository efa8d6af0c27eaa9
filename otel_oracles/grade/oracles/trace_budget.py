"""Resource budgets: ``latency`` and ``tokens``.

(The compact ``budget:`` contract shorthand is ``otel_oracles.grade.budget``.)
"""

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from otel_oracles._native import CheckPlan
from otel_oracles.grade.evidence import group_steps, list_steps
from otel_oracles.grade.oracles.base import (
    CoverageParams,
    Finding,
    GradeContext,
    OracleCheck,
    OracleParams,
)
from otel_oracles.grade.oracles.trace_common import PLANS, indexes, span_ids
from otel_oracles.grade.registry import register_oracle
from otel_oracles.model.defaults import new_list
from otel_oracles.model.step import Step

NS_PER_MS = 1_000_000


class LatencyParams(OracleParams):
    max_ms: float = Field(gt=0)
    """Longest duration allowed, in milliseconds."""
    scope: Literal["trace", "tool", "generation"] = "trace"
    """``trace``: first step start to last step end; ``tool``: each tool call;
    ``generation``: each model call."""
    tools: list[str] = Field(default_factory=new_list)
    """With ``scope: tool``: tool globs to time (empty = every tool)."""
    max: int = Field(default=0, ge=0)
    """Calls allowed over ``max_ms`` (as a tolerance: one slow call is fine)."""


@register_oracle
class Latency(OracleCheck):
    """The trace, each tool call or each model call finishes within max_ms."""

    oracle_type = "latency"
    Params = LatencyParams
    failure_stands_on_gaps = True  # time already over the limit: unseen steps add more
    evidence: ClassVar[frozenset[str]] = frozenset({"steps"})
    params: LatencyParams
    given: LatencyParams

    def __init__(self, params: LatencyParams) -> None:
        super().__init__(params)
        if self.given.scope == "trace":
            self.native_plan = PLANS.latency(self.given.max_ms, self.given.max)

    def required_evidence(self) -> frozenset[str]:
        if self.given.scope == "tool":
            return frozenset({"steps", "tool_names"})
        return self.evidence

    def _timed(self, ctx: GradeContext) -> list[Step]:
        """The calls ``scope: tool`` or ``scope: generation`` times, each on its own (the
        trace's extent is read off every step in ``check``)."""
        ev = ctx.evidence
        if self.given.scope == "tool":
            return list(ev.calls_of(tuple(self.given.tools)))
        return ev.generations()

    def check(self, ctx: GradeContext) -> Finding:
        p = self.given
        if p.scope == "trace":
            # Every end set (most runs): the core's pass, failure or tolerated pass over the
            # extent its step view kept (``native_plan``).
            if self.native_plan is not None:
                found = self.native_plan.finding(ctx)
                if found is not None:
                    return found
            # Every time the steps record, read once each. A step whose end is unset (0,
            # OTLP's unset: its span never ended) may still have been running, so the run's
            # duration is unknown, never the extent of the other steps (only a failure
            # stands on what is known). Any other end before its start is a span's clock at
            # fault (OpenLIT's Claude Agent SDK instrumentation writes model calls ending a
            # microsecond before they start): both are instants of the run, so the extent
            # covers both. The extent is kept as it is read (earliest instant, latest
            # instant), not as lists of every step's instants reduced afterwards.
            first: int | None = None
            last = 0
            unset: list[Step] = []
            for s in ctx.trajectory.steps:
                start, end = s.start_ns, s.end_ns
                if start is None or end is None:
                    continue
                if end == 0 < start:
                    unset.append(s)  # its start is still an instant of the run
                    end = start
                elif end < start:
                    start, end = end, start
                if first is None:
                    first, last = start, end
                else:
                    if start < first:
                        first = start
                    if end > last:
                        last = end
            ms = (last - first) / NS_PER_MS if first is not None else 0.0
            details = {"duration_ms": round(ms, 3)}
            if unset and not (ms > p.max_ms and p.max < 1):  # over already: the rest adds
                return Finding.missing(
                    f"latency: {len(unset)} step(s) of the trace have no end time (a span "
                    "that never ended, or whose end was not written): " + list_steps(unset)
                )
            if first is None:
                return Finding.missing("latency: no step of the trace has start and end times")
            if ms <= p.max_ms:
                return Finding.ok(
                    f"trace took {ms:.1f} ms (limit {p.max_ms:g} ms)", details=details
                )
            if p.max < 1:
                return Finding.fail(
                    f"trace took {ms:.1f} ms, limit {p.max_ms:g} ms", details=details, used=1
                )
            return Finding.ok(
                f"trace took {ms:.1f} ms, over {p.max_ms:g} ms but tolerated",
                details=details,
                used=1,
            )
        steps = self._timed(ctx)
        untimed = [s for s in steps if s.duration_ns is None]
        if untimed:
            return Finding.missing(
                f"latency: no start/end times for {len(untimed)} {p.scope} step(s) "
                "(calls seen only in model messages have no span of their own; a span that "
                "never ended, or ends before it starts, does not say how long it took): "
                + list_steps(untimed)
            )
        slow = [s for s in steps if (s.duration_ns or 0) > p.max_ms * NS_PER_MS]
        worst = max(((s.duration_ns or 0) / NS_PER_MS for s in steps), default=0.0)
        kw: dict[str, Any] = {
            "used": len(slow),
            "span_ids": span_ids(slow),
            "step_indexes": indexes(slow),
            "details": {"slow": len(slow), "timed": len(steps), "max_ms_seen": round(worst, 3)},
        }
        if len(slow) > p.max:
            listed = ", ".join(
                f"step {s.index} ({s.tool or s.model}) {(s.duration_ns or 0) / NS_PER_MS:.1f} ms"
                for s in slow[:5]
            )
            return Finding.fail(
                f"{len(slow)} {p.scope} call(s) over {p.max_ms:g} ms (allowed {p.max}): {listed}",
                **kw,
            )
        return Finding.ok(
            f"{len(steps)} {p.scope} call(s), slowest {worst:.1f} ms (limit {p.max_ms:g} ms"
            + (f", {len(slow)} slow within {p.max}" if slow else "")
            + ")",
            **kw,
        )


class TokensParams(CoverageParams):
    max_input_tokens: int | None = Field(default=None, ge=0)
    max_output_tokens: int | None = Field(default=None, ge=0)
    max_total_tokens: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _some_limit(self) -> "TokensParams":
        if (self.max_input_tokens, self.max_output_tokens, self.max_total_tokens) == (None,) * 3:
            raise ValueError(
                "give at least one of max_input_tokens, max_output_tokens, max_total_tokens"
            )
        return self


def leaf_generations(gens: list[Step]) -> list[Step]:
    """Model calls that contain no other model call in time.

    Some instrumentations wrap a provider call in an outer generation-like span that repeats
    its usage; counting only leaves avoids counting tokens twice. The mapping flags known
    wrappers (``attributes["usage_aggregated"]``); steps carry no parent id, so containment
    of [start, end] intervals catches the rest: a call contains another when the other
    starts no earlier and ends no later, and the two intervals differ. A step with an
    unknown start or end contains nothing and is contained by nothing; a failed attempt of
    the call around it (the mapping's ``failed_attempt``: a retry's first try, recorded
    below the call) is no call that call aggregates: it contains nothing and makes nothing
    a wrapper.

    Decided by the core over the times its ``StepView`` read once per trajectory
    (``StepView.leaf_generations``, ``native/python/src/evidence/view.rs``), in one sort (n
    log n), not by testing every pair: a long run has thousands of model calls, and a trace
    of 20,000 spans spent minutes here. The ``tokens`` check asks it of
    ``Evidence.groups`` directly; this is the same for any list of model calls."""
    return group_steps(gens).leaf_generations()


@register_oracle
class Tokens(OracleCheck):
    """Input/output/total tokens summed over leaf model calls stay within the limits."""

    oracle_type = "tokens"
    Params = TokensParams
    needs_full_coverage = True
    failure_stands_on_gaps = True  # tokens recorded over the budget: unrecorded usage adds more
    evidence: ClassVar[frozenset[str]] = frozenset({"token_usage"})
    params: TokensParams
    given: TokensParams
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: TokensParams) -> None:
        super().__init__(params)
        p = self.given
        self.native_plan = PLANS.tokens(p.max_input_tokens, p.max_output_tokens, p.max_total_tokens)

    def check(self, ctx: GradeContext) -> Finding:
        # The core's sums over the leaf model calls its step view found, and its pass or
        # failure (``native_plan``): every run whose counts are plain ints.
        found = self.native_plan.finding(ctx)
        if found is not None:
            return found
        p = self.given
        ev = ctx.evidence
        leaves: list[Step] = ev.memoized("leaf_generations", ev.groups.leaf_generations)
        used_in = sum(g.input_tokens or 0 for g in leaves)
        used_out = sum(g.output_tokens or 0 for g in leaves)
        sums = {"input": used_in, "output": used_out, "total": used_in + used_out}
        limits = {
            "input": p.max_input_tokens,
            "output": p.max_output_tokens,
            "total": p.max_total_tokens,
        }
        over = [f"{k} {sums[k]} > {v}" for k, v in limits.items() if v is not None and sums[k] > v]
        details = {"model_calls": len(leaves), **{f"{k}_tokens": v for k, v in sums.items()}}
        # Over a limit with a count the core left to Python (a bool, an int past 64 bits).
        heavy = sorted(leaves, key=lambda g: -((g.input_tokens or 0) + (g.output_tokens or 0)))
        heavy = heavy[:5]
        return Finding.fail(
            f"token budget exceeded over {len(leaves)} model call(s): {'; '.join(over)}",
            details=details,
            span_ids=span_ids(heavy),
            step_indexes=indexes(heavy),
        )
