"""The built-in checks whose usual answers the core computes (``CheckPlan``,
``native/python/src/check_plans.rs``) as their whole Python bodies were before it did, kept
as their specification: each finding, usual or not, byte for byte.

``REFERENCE[oracle_type](oracle, ctx)`` answers as that check's ``check`` did.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from otel_oracles.grade.evidence import list_steps, where
from otel_oracles.grade.oracles.base import Finding, GradeContext
from otel_oracles.grade.oracles.trace_budget import NS_PER_MS
from otel_oracles.grade.oracles.trace_common import (
    DENIED,
    call_failures,
    failed_calls,
    indexes,
    is_denied,
    nameless_twins,
    repeated_args_candidates,
    span_ids,
    step_glob,
    step_normalized_args,
)
from otel_oracles.grade.oracles.trace_tools import _failure_of_pair, find_retries
from otel_oracles.model.step import Step, StepKind


def tool_not_called(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
    bad = ctx.evidence.calls_of(tuple(p.tool), unknown_namespace_matches=True)
    if not bad:  # the usual answer: nothing to name or point at
        return Finding.ok(
            f"none of {', '.join(p.tool)} was called",
            used=0,
            details={"calls": 0, "tools": []},
        )
    names = sorted({s.tool or "?" for s in bad})
    kw: dict[str, Any] = {
        "span_ids": span_ids(bad),
        "step_indexes": indexes(bad),
        "used": len(bad),
        "details": {"calls": len(bad), "tools": names},
    }
    # A call an approval step refused is still the agent's request for the tool: the
    # check is about what the agent did, and the refusal is another safeguard's work.
    refused = sum(is_denied(s) for s in bad)
    if len(bad) > p.max:
        return Finding.fail(
            f"forbidden tool called: {', '.join(names)} ({list_steps(bad)})"
            + (f"; {p.max} call(s) tolerated" if p.max else "")
            + (f"; {refused} of them requested, then {DENIED}" if refused else ""),
            **kw,
        )
    return Finding.ok(f"{len(bad)} call(s) of {', '.join(names)} within {p.max}", **kw)


def tool_retries(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
    retries = find_retries(ctx.evidence, tuple(p.tools), p.error_pattern)
    if not retries:  # the usual answer: within any budget, nothing to point at
        return Finding.ok(
            "no retries", used=0, details={"retries": 0, "per_tool": {}, "retried_after": []}
        )
    per_tool: dict[str, int] = defaultdict(int)
    for s, _, _ in retries:
        per_tool[s.tool or "?"] += 1
    total = len(retries)
    steps = [s for s, _, _ in retries]
    kw: dict[str, Any] = {
        "used": total,
        "span_ids": span_ids(steps),
        "step_indexes": indexes(steps),
        "details": {
            "retries": total,
            "per_tool": dict(per_tool),
            "retried_after": [
                {"retry_step": s.index, "failed_step": f.index, "failure": why}
                for s, f, why in retries
            ],
        },
    }
    breakdown = ", ".join(f"{t} x{n}" for t, n in sorted(per_tool.items()))
    if total > p.max:
        return Finding.fail(f"{total} retries ({breakdown}), budget {p.max}", **kw)
    if p.max_per_tool is not None:
        over = {t: n for t, n in per_tool.items() if n > p.max_per_tool}
        if over:
            worst = ", ".join(f"{t} x{n}" for t, n in sorted(over.items()))
            return Finding.fail(f"retries over the per-tool budget {p.max_per_tool}: {worst}", **kw)
    first = retries[0]
    return Finding.ok(
        f"{total} retr{'y' if total == 1 else 'ies'} ({breakdown}) within budget {p.max}; "
        f"first after {where(first[1])} failed: {first[2]}",
        **kw,
    )


def loop_detected(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
    groups: dict[tuple[str | None, str], list[Step]] = defaultdict(list)
    calls = ctx.evidence.calls_of(tuple(p.tools), unknown_namespace_matches=True)
    # Calls that cannot be part of a loop (a tool called fewer than threshold times, or
    # whose top-level string arguments differ from all but a few of its other calls) need
    # no normalizing (the costly part); leaving their groups out changes neither the
    # loops found nor their order.
    if len(calls) >= p.threshold:  # fewer calls in all make no loop
        for s in repeated_args_candidates(ctx.evidence, calls, p.threshold):
            groups[(s.tool, step_normalized_args(ctx.evidence, s))].append(s)
    loops = [g for g in groups.values() if len(g) >= p.threshold]
    if not loops:  # the usual answer: nothing to point at
        found = f"no tool called {p.threshold}+ times with the same arguments"
        stopped = ctx.evidence.stopped_short()
        if stopped is not None:  # the calls the limit cut off may have made a loop
            return Finding.missing(f"{found} before {stopped}", used=0, details={"loops": []})
        return Finding.ok(found, used=0, details={"loops": []})
    steps = [s for g in loops for s in g]
    kw: dict[str, Any] = {
        "used": len(loops),
        "span_ids": span_ids(steps),
        "step_indexes": indexes(steps),
        "details": {"loops": [{"tool": g[0].tool, "calls": len(g)} for g in loops]},
    }
    desc = "; ".join(
        f"{g[0].tool} x{len(g)} with identical arguments "
        f"(steps {', '.join(str(s.index) for s in g)})"
        for g in loops
    )
    if len(loops) > p.max:
        return Finding.fail(f"loop detected: {desc}", **kw)
    found = f"{len(loops)} loop(s) within {p.max}: {desc}"
    stopped = ctx.evidence.stopped_short()
    if stopped is not None:  # the calls the limit cut off may have made the loop
        return Finding.missing(f"{found} before {stopped}", **kw)
    return Finding.ok(found, **kw)


def tool_errors(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
    if not failed_calls(ctx.evidence, p.error_pattern):  # no call failed (most runs)
        return Finding.ok("no failed tool calls", used=0, details={"failed": []})
    twins = nameless_twins(ctx.evidence)
    failures = call_failures(ctx.evidence, p.error_pattern)
    calls = ctx.evidence.calls_of(tuple(p.tools), unknown_namespace_matches=True)
    if twins.twinned or twins.twin_of:
        failed = [
            (s, why)
            for s in calls
            if id(s) not in twins.twinned
            and (why := _failure_of_pair(s, twins, failures)) is not None
        ]
    else:  # no call has a nameless twin (every name recorded): each call's own failure
        failed = [(s, why) for s in calls if (why := failures[id(s)]) is not None]
    failed = [(s, why) for s, why in failed if not is_denied(s)]  # never ran: no failure
    steps = [s for s, _ in failed]
    kw: dict[str, Any] = {
        "used": len(failed),
        "span_ids": span_ids(steps),
        "step_indexes": indexes(steps),
        "details": {"failed": [{"step": s.index, "tool": s.tool, "why": w} for s, w in failed]},
    }
    if len(failed) > p.max:
        first = "; ".join(f"{where(s)}: {w}" for s, w in failed[:3])
        return Finding.fail(f"{len(failed)} failed tool call(s), budget {p.max}: {first}", **kw)
    if failed:
        return Finding.ok(f"{len(failed)} failed tool call(s) within budget {p.max}", **kw)
    return Finding.ok("no failed tool calls", **kw)


def max_tool_calls(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
    # A framework that answers through a tool makes one more call than one that answers
    # in text: counting it would fail a run that did no more work than the budget allows.
    answering = ctx.evidence.answering()
    twinned = nameless_twins(ctx.evidence).twinned
    selected = ctx.evidence.calls_of(tuple(p.tools), unknown_namespace_matches=True)
    calls: Sequence[Step]
    if answering or twinned:
        calls = [
            s
            for s in selected
            if (id(s) not in answering or step_glob(s, p.tools) is not None)
            and id(s) not in twinned
        ]
    else:  # no answering call, no twin: every selected call counts
        calls = selected
    if len(calls) > p.max:
        extra = calls[p.max :]
        return Finding.fail(
            f"{len(calls)} tool calls, at most {p.max} allowed; over the limit: "
            + list_steps(extra),
            details={"tool_calls": len(calls)},
            span_ids=span_ids(extra),
            step_indexes=indexes(extra),
        )
    stopped = ctx.evidence.stopped_short()
    if stopped is not None:  # a lower bound: the calls the limit cut off are unknown
        return Finding.missing(
            f"at least {len(calls)} tool calls (at most {p.max} allowed), but {stopped}: "
            "how many the agent would have made is not shown",
            details={"tool_calls": len(calls)},
        )
    return Finding.ok(
        f"{len(calls)} tool calls (at most {p.max})", details={"tool_calls": len(calls)}
    )


def tokens(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
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
    if over:
        heavy = sorted(leaves, key=lambda g: -((g.input_tokens or 0) + (g.output_tokens or 0)))
        heavy = heavy[:5]
        return Finding.fail(
            f"token budget exceeded over {len(leaves)} model call(s): {'; '.join(over)}",
            details=details,
            span_ids=span_ids(heavy),
            step_indexes=indexes(heavy),
        )
    return Finding.ok(
        f"{sums['input']} input + {sums['output']} output tokens over {len(leaves)} model call(s)",
        details=details,
    )


def max_steps(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
    kinds = set(p.kinds)
    twinned = nameless_twins(ctx.evidence).twinned
    counted = [s for s in ctx.trajectory.steps if s.kind in kinds and id(s) not in twinned]
    details = {"steps": len(counted), "kinds": sorted(k.value for k in kinds)}
    if len(counted) > p.max:
        extra = counted[p.max :]
        return Finding.fail(
            f"{len(counted)} steps, at most {p.max} allowed; over the limit: {list_steps(extra)}",
            details=details,
            span_ids=span_ids(extra),
            step_indexes=indexes(extra),
        )
    # A step whose span recorded several model calls, each over the last (the mapping
    # flags it), stands for an unknown number of them: the count is a lower bound.
    merged = [s for s in counted if s.attributes.get("merged_model_calls")]
    if merged:
        return Finding.missing(
            f"at least {len(counted)} steps (at most {p.max} allowed), but "
            f"{list_steps(merged)} may each stand for several model calls (one span "
            "recorded them all, each over the last)",
            details=details,
            span_ids=span_ids(merged),
            step_indexes=indexes(merged),
        )
    # Agents ran or tools were called, yet no model call was recorded (a tracer that
    # records agents and tools only, such as autogen-core's own spans): the model calls
    # that drove them are not in the trace, so a count that includes model calls is a
    # lower bound, never a pass.
    if StepKind.GENERATION in kinds and not ctx.evidence.generations():
        driven = ctx.evidence.tool_calls() + ctx.evidence.agents()
        if driven:
            return Finding.missing(
                f"at least {len(counted)} steps (at most {p.max} allowed), but no model "
                f"call was recorded beside {len(driven)} agent run(s) and tool call(s) that "
                "model calls drove: how many ran is unknown",
                details=details,
                span_ids=span_ids(driven[:3]),
                step_indexes=indexes(driven[:3]),
            )
    stopped = ctx.evidence.stopped_short()
    if stopped is not None:  # a lower bound: the steps the limit cut off are unknown
        return Finding.missing(
            f"at least {len(counted)} steps (at most {p.max} allowed), but {stopped}: "
            "how many the agent would have taken is not shown",
            details=details,
        )
    return Finding.ok(f"{len(counted)} steps (at most {p.max})", details=details)


def latency(oracle: Any, ctx: GradeContext) -> Finding:
    """The trace scope (the one a plan answers)."""
    p = oracle.given
    assert p.scope == "trace"
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
        return Finding.ok(f"trace took {ms:.1f} ms (limit {p.max_ms:g} ms)", details=details)
    if p.max < 1:
        return Finding.fail(
            f"trace took {ms:.1f} ms, limit {p.max_ms:g} ms", details=details, used=1
        )
    return Finding.ok(
        f"trace took {ms:.1f} ms, over {p.max_ms:g} ms but tolerated",
        details=details,
        used=1,
    )


REFERENCE: dict[str, Callable[[Any, GradeContext], Finding]] = {
    "tool_not_called": tool_not_called,
    "tool_retries": tool_retries,
    "loop_detected": loop_detected,
    "tool_errors": tool_errors,
    "max_tool_calls": max_tool_calls,
    "tokens": tokens,
    "max_steps": max_steps,
    "latency": latency,
}
