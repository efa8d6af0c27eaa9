"""The built-in checks whose usual answers the core computes (``CheckPlan``,
``native/python/src/check_plans.rs``, ``check_plans_more.rs``, ``check_plans_agentbench.rs``)
as their whole Python bodies were before it did, kept
as their specification: each finding, usual or not, byte for byte.

``REFERENCE[oracle_type](oracle, ctx)`` answers as that check's ``check`` did (``tool_sequence``,
``citations_grounded`` and others: their whole bodies, every answer of which their plans
make). The checks whose plans make only their usual answers (``degraded_answer``, ``no_network``,
``file_not_modified``, ``assertion_exists``) keep their whole body in the oracle
(``python_body``), which is then the reference: no copy here to drift from it.
"""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from otel_oracles import safe_regex
from otel_oracles._frozen import Frozen, set_field
from otel_oracles._native import ground_ids, json_indented, tool_repeats, tool_sequence_diff
from otel_oracles.errors import WorkBudgetExceeded
from otel_oracles.grade.evidence import (
    EVIDENCE_DESCRIPTIONS,
    MAX_LISTED,
    WORK_INVISIBLE,
    Evidence,
    Plan,
    is_placeholder,
    tool_responses,
    work_invisible,
)
from otel_oracles.grade.oracles import trace_answers
from otel_oracles.grade.oracles.base import Finding, GradeContext
from otel_oracles.grade.oracles.trace_answers import (
    Transfer,
    _continues_id,
    _source_texts,
    find_degradation,
)
from otel_oracles.grade.oracles.trace_budget import NS_PER_MS
from otel_oracles.grade.oracles.trace_common import (
    DENIED,
    args_mismatch,
    args_mismatch_why,
    call_failures,
    failed_calls,
    indexes,
    is_denied,
    nameless_twins,
    repeated_args_candidates,
    result_text,
    shown_run,
    span_ids,
    step_glob,
    step_normalized_args,
)
from otel_oracles.grade.oracles.trace_tools import (
    SequenceMode,
    _assign,
    _failure_of_pair,
)
from otel_oracles.model.step import GENERATION, Step, StepKind, Trajectory
from otel_oracles.model.tool_name import first_match

# ---- the Python the core's ``evidence/naming.rs`` and ``IdPattern`` replaced ----------------


def absent(step: Step, field: str) -> bool:
    """Whether ``field`` of ``step`` was not captured (None, redacted or a placeholder)."""
    return field in step.redacted or is_placeholder(getattr(step, field))


def where(step: Step) -> str:
    """``step 3 (search_docs, span ab12...)``: how messages point at a step."""
    model = step.model if step.kind == GENERATION else None
    name = step.tool or model or step.agent_name or step.model or step.kind.value
    if step.source is not None:
        return f"step {step.index} ({name}, span {step.source.span_id})"
    return f"step {step.index} ({name})"


def list_steps(steps: Sequence[Step]) -> str:
    shown = ", ".join(where(s) for s in steps[:MAX_LISTED])
    more = len(steps) - MAX_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def calls_named(
    calls: Sequence[Step], names: tuple[str, ...], unknown_namespace_matches: bool
) -> tuple[Step, ...]:
    """``Evidence.calls_of``'s selection as the Python made it (``evidence._calls_named``):
    the ``calls`` whose tool, or the MCP server's own name for a call a framework qualified
    (``mcp_tool``), one of ``names`` names (``first_match``)."""
    named: dict[str | None, bool] = {}
    out: list[Step] = []
    for s in calls:
        tool = s.tool
        hit = named.get(tool)
        if hit is None:
            hit = named[tool] = bool(first_match(tool, names, unknown_namespace_matches))
        if hit:
            out.append(s)
            continue
        served = s.attributes.get("mcp_tool")
        if served is not None and first_match(served, names, unknown_namespace_matches):
            out.append(s)
    return tuple(out)


def _cited_ids(pattern: str, text: str) -> list[str]:
    """Ids in first-seen order; the first group when the regex has one, else the match: the
    regex engine's answer for every pattern and text."""
    seen: dict[str, None] = {}
    for m in safe_regex.finditer(pattern, text):
        ident = m.group(1) if m.groups() else m.group(0)
        if ident:  # an optional group that did not take part is no id
            seen.setdefault(ident, None)
    return list(seen)


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


def find_retries(
    ev: Evidence, tools: tuple[str, ...], error_pattern: str | None
) -> tuple[tuple[Step, Step, str], ...]:
    """``trace_tools.find_retries`` as it was in Python (memoized under its own keys, so the
    core's answers in the same memo are not read here)."""
    found: tuple[tuple[Step, Step, str], ...] = ev.memoized(
        ("reference retries", tools, error_pattern), _retries, ev, tools, error_pattern
    )
    return found


def _retries(
    ev: Evidence, tools: tuple[str, ...], error_pattern: str | None
) -> tuple[tuple[Step, Step, str], ...]:
    failed = failed_calls(ev, error_pattern)
    if not failed:
        return ()
    repeats: list[tuple[Step, Step]] = ev.memoized(
        ("reference repeats", error_pattern), _repeats, ev, failed
    )
    chosen = {id(s) for s in ev.calls_of(tools, unknown_namespace_matches=True)} if tools else None
    out: list[tuple[Step, Step, str]] = []
    for s, prev in repeats:
        why = failed.get(id(prev))
        if why is None or is_denied(prev):
            continue
        if chosen is None or id(s) in chosen:
            out.append((s, prev, why))
    return tuple(out)


def _repeats(ev: Evidence, after: Any = None) -> list[tuple[Step, Step]]:
    return tool_repeats(
        sorted(ev.calls_of(()), key=lambda s: s.index), ev.groups.generations, after
    )


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


def tool_called(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
    # A call an approval step refused never ran: asking is not calling (``is_denied``).
    asked = ctx.evidence.calls_of((p.tool,))
    calls = [s for s in asked if not is_denied(s)]
    refused = len(asked) - len(calls)
    matching: list[Step] = []
    rejected: list[tuple[Step, str]] = []
    for s in calls:
        why = args_mismatch(p, s)
        if why is None:
            matching.append(s)
        else:
            rejected.append((s, why))
    # A request nothing shows ran (no span of its own, no result: ``shown_run``) may
    # have run or not: it counts against an upper bound (fail closed, as the checks that
    # forbid or count calls do) but never towards the lower one.
    unshown = [s for s in matching if not shown_run(s)]
    n = len(matching) - len(unshown)
    bound = f"at least {p.min}" + (f" and at most {p.max}" if p.max is not None else "")
    details = {"matching_calls": n, "calls_of_tool": len(calls)}
    if refused:
        details["denied_calls"] = refused
    if unshown:
        details["calls_not_shown_run"] = len(unshown)
    if n < p.min and n + len(unshown) >= p.min:
        return Finding.missing(
            f"{p.tool} shown called {n} time(s), expected {bound}; {len(unshown)} more "
            "requested, but nothing shows that they ran (no span of the tool, no result "
            f"captured): {list_steps(unshown)}",
            details=details,
            span_ids=span_ids(unshown),
            step_indexes=indexes(unshown),
        )
    if n < p.min:
        near = "; ".join(f"{where(s)}: {why}" for s, why in rejected[:3])
        return Finding.fail(
            f"{p.tool} called {n} time(s)"
            + (" with matching arguments" if p.constrains_args() else "")
            + f", expected {bound}"
            + (f" (non-matching: {near})" if near else "")
            + (f"; {refused} more requested and {DENIED}" if refused else ""),
            details=details,
            span_ids=span_ids(s for s, _ in rejected),
            step_indexes=indexes(s for s, _ in rejected),
            unseen=True,  # the calls not seen may be in spans no convention recognised
        )
    if p.max is not None and len(matching) > p.max:
        extra = matching[p.max :]
        return Finding.fail(
            f"{p.tool} called {len(matching)} time(s), expected {bound}; extra: "
            f"{list_steps(extra)}",
            details=details,
            span_ids=span_ids(extra),
            step_indexes=indexes(extra),
        )
    return Finding.ok(
        f"{p.tool} called {n} time(s) ({bound})",
        details=details,
        span_ids=span_ids(matching),
        step_indexes=indexes(matching),
    )


def _curable_by_unseen_calls(mode: SequenceMode, counts: dict[str, int]) -> bool:
    """Whether calls the trace did not show could make the failed sequence hold: then the
    failure is ``Finding.unseen`` (missing evidence where spans went unrecognised). In
    ``in_order`` and ``superset`` extra calls are allowed, so every failure is an expected
    call not seen (or seen only with other arguments, where an unseen call could still
    match). In ``exact`` and ``any_order`` only a shortfall is: a call seen that the
    sequence has no place for, or calls seen out of order, stay violations whatever else
    ran. In ``subset`` every failure is a call seen."""
    if mode in ("in_order", "superset"):
        return True
    if mode in ("exact", "any_order"):
        return bool(counts["missing"]) and not counts["unexpected"] and not counts["args_mismatch"]
    return False


def tool_sequence(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
    answering = ctx.evidence.answering()
    named, ignore = oracle._named, oracle._ignore
    every = ctx.evidence.calls_of(())
    if ignore or answering:
        calls: Sequence[Step] = [
            s
            for s in every
            if (not ignore or step_glob(s, ignore) is None)
            and (id(s) not in answering or step_glob(s, named) is not None)
        ]
    else:  # no call is ignored, none answers: every call takes part
        calls = every
    holds, counts, actual, diff, steps, text = tool_sequence_diff(
        p.mode, oracle._items, named, calls, first_match, args_mismatch_why, _assign
    )
    details = {"mode": p.mode, "expected": list(named), "actual": actual, "diff": diff}
    if holds:
        return Finding.ok(
            f"tool sequence ({p.mode}) holds: {text}",
            details=details,
            span_ids=span_ids(steps),
            step_indexes=indexes(steps),
        )
    relevant = {
        "exact": ("missing", "unexpected", "args_mismatch"),
        "any_order": ("missing", "unexpected", "args_mismatch"),
        "in_order": ("missing", "args_mismatch"),
        "superset": ("missing", "args_mismatch"),
        "subset": ("unexpected", "args_mismatch"),
    }[p.mode]
    summary = ", ".join(f"{counts[op]} {op.replace('_', ' ')}" for op in relevant if counts[op])
    if p.mode == "exact" and not summary:
        summary = "order differs"
    return Finding.fail(
        f"tool sequence ({p.mode}) does not hold: {summary}\n{text}",
        details=details,
        span_ids=span_ids(steps),
        step_indexes=indexes(steps),
        unseen=_curable_by_unseen_calls(p.mode, counts),
    )


# A plain frozen class, not a dataclass: compared by identity, never printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class SeenTransfer(Frozen):
    """A transfer between agents the trace shows: who to whom, the step, and how."""

    __slots__ = ("from_agent", "step", "to_agent", "via")
    from_agent: str
    to_agent: str
    step: Step
    via: str

    def __init__(self, from_agent: str, to_agent: str, step: Step, via: str) -> None:
        set_field(self, "from_agent", from_agent)
        set_field(self, "to_agent", to_agent)
        set_field(self, "step", step)
        set_field(self, "via", via)


def find_transfers(t: Trajectory) -> list[SeenTransfer]:
    """Handoff steps (``from_agent -> to_agent``), plus delegation: an agent step running
    inside another named agent's time span (agent-as-tool, nested ``invoke_agent``)."""
    seen: list[SeenTransfer] = [
        SeenTransfer(h.from_agent or "?", h.to_agent or "?", h, "handoff") for h in t.handoffs()
    ]
    agents = [
        a for a in t.agents() if a.agent_name and a.start_ns is not None and a.end_ns is not None
    ]
    for inner in agents:
        outers = [
            o
            for o in agents
            if o is not inner
            and o.agent_name != inner.agent_name
            and o.start_ns is not None
            and o.end_ns is not None
            and inner.start_ns is not None
            and inner.end_ns is not None
            and o.start_ns <= inner.start_ns
            and inner.end_ns <= o.end_ns
        ]
        if outers:
            parent = max(outers, key=lambda o: o.start_ns or 0)
            seen.append(
                SeenTransfer(parent.agent_name or "?", inner.agent_name or "?", inner, "delegation")
            )
    unique: dict[tuple[str, str], SeenTransfer] = {}
    for s in seen:
        unique.setdefault((s.from_agent, s.to_agent), s)
    return list(unique.values())


def _hits(rule: Transfer, seen: list[SeenTransfer]) -> list[SeenTransfer]:
    return [
        s
        for s in seen
        if fnmatch.fnmatchcase(s.from_agent, rule.from_)
        and fnmatch.fnmatchcase(s.to_agent, rule.to)
    ]


def _could_be(rule: Transfer, seen: SeenTransfer) -> bool:
    """Whether a transfer with an unrecorded agent ("?") may be the one ``rule`` names."""
    return (seen.from_agent == "?" or fnmatch.fnmatchcase(seen.from_agent, rule.from_)) and (
        seen.to_agent == "?" or fnmatch.fnmatchcase(seen.to_agent, rule.to)
    )


def handoff(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
    seen = find_transfers(ctx.trajectory)
    listed = ", ".join(f"{s.from_agent} -> {s.to_agent} ({s.via}, {where(s.step)})" for s in seen)
    details = {"transfers": [{"from": s.from_agent, "to": s.to_agent, "via": s.via} for s in seen]}
    # A transfer whose agents were not recorded ("?") may be the one a rule names: that
    # rule can be neither confirmed nor refuted, which is missing evidence, not a verdict.
    unnamed = [s for s in seen if "?" in (s.from_agent, s.to_agent)]
    undecided = [
        r
        for r in [*p.required, *p.forbidden]
        if not _hits(r, seen) and any(_could_be(r, s) for s in unnamed)
    ]
    missing = [r for r in p.required if not _hits(r, seen) and r not in undecided]
    # A native handoff is a tool call (LlamaIndex's handOff, a swarm's transfer_to_*): a
    # required transfer not seen may be one of the calls whose tool the trace did not
    # name (a model call's finish reason asked for tools no span records), so it can be
    # neither confirmed nor refuted. A nameless call that is a named call's twin is no
    # other call.
    nameless: list[Step] = []
    if missing:
        twinned = nameless_twins(ctx.evidence).twinned
        nameless = [s for s in ctx.evidence.nameless_calls() if id(s) not in twinned]
    if nameless:
        undecided += missing
        unnamed += [SeenTransfer("?", "?", s, "tool call, name not recorded") for s in nameless]
        missing = []
    bad = [(r, h) for r in p.forbidden for h in _hits(r, seen)]
    problems = [f"required transfer {r} did not happen" for r in missing] + [
        f"forbidden transfer {h.from_agent} -> {h.to_agent} ({where(h.step)})" for _, h in bad
    ]
    if not problems and undecided:
        return Finding.missing(
            f"cannot tell whether {', '.join(str(r) for r in undecided)} happened: "
            + (
                f"transfers seen without agent names ({listed})"
                if not nameless
                else f"{len(nameless)} tool call(s) without a recorded tool name, any of "
                f"which may be the transfer ({where(nameless[0])}; transfers seen: "
                f"{listed or 'none'})"
            ),
            details=details,
            span_ids=span_ids(s.step for s in unnamed),
            step_indexes=indexes(s.step for s in unnamed),
        )
    if problems:
        return Finding.fail(
            "; ".join(problems) + f" (transfers seen: {listed or 'none'})",
            details=details,
            span_ids=span_ids(h.step for _, h in bad),
            step_indexes=indexes(h.step for _, h in bad),
            # A required transfer not seen may be in spans no convention recognised; a
            # forbidden one seen is a failure whatever else the trace holds.
            unseen=not bad,
        )
    hits = [h for r in p.required for h in _hits(r, seen)]
    return Finding.ok(
        f"transfers as required: {listed or 'none'}",
        details=details,
        span_ids=span_ids(h.step for h in hits),
        step_indexes=indexes(h.step for h in hits),
    )


# ---- citations (the bodies and the helpers only they used) ----


def _answer_cites(ctx: GradeContext, pattern: str, answer: str) -> list[str]:
    """``_cited_ids`` of the final answer, found once per trajectory and pattern:
    ``citations_grounded`` and ``citation_required`` usually search the same answer for the
    same ids (a fresh list per call)."""
    ids: list[str] = ctx.evidence.memoized(("answer_cites", pattern), _cited_ids, pattern, answer)
    return list(ids)


def _earlier(steps: Iterable[Step], final: Step | None, with_final: bool = False) -> list[Step]:
    """The ``steps`` before the ``final`` answer's step (all of them when it is unknown), in
    order, with ``final`` itself if ``with_final``: ended no later than it when both record
    an end, else earlier in step order. One comprehension per check: ``citations_grounded``
    asked a function of every call of every trajectory."""
    if final is None:
        return list(steps)
    end, index = final.end_ns, final.index
    if end is None:
        return [
            s for s in steps if (s.index < index and s is not final) or (with_final and s is final)
        ]
    return [
        s
        for s in steps
        if (s is not final and (s.index < index if s.end_ns is None else s.end_ns <= end))
        or (with_final and s is final)
    ]


def _search_text(value: Any) -> tuple[str, bool]:
    """``(text, made)``: what ``result_text(value)`` is searched through for cited ids, and
    whether it is that text itself. A structured value is written by the core
    (``json_indented(value, 0)``, two to three times faster than Python's ``json``; the
    serialization was most of what ``citations_grounded`` cost): ``json.dumps(value,
    indent=0, ensure_ascii=False)``, which writes every token (strings with their escapes,
    numbers, ``true``/``false``/``null``) exactly as ``result_text`` does and in the same
    order, and differs only between tokens: ``,\n`` for ``, ``, and a newline after each
    opening and before each closing bracket of a non-empty container. Both texts are thus
    the same sequence of maximal runs of characters outside the breaks (space, newline,
    ``,``, brackets and braces: what may stand between two JSON tokens; the core's
    ``breaks_run``; a raw newline never occurs inside a JSON string), so an id holding none
    of those characters occurs in
    one where it occurs in the other, in the same order and between the same neighbours or
    a break, and no break continues an id (``_ID_CHAR``): the search answers alike after
    testing the same occurrences. Only the length it is charged differs: the indented
    text is longer (two characters per non-empty container), hence ``_ground``'s second
    search when the first runs past the budget. What the core does not write (values that
    are not plain JSON data) is made by ``result_text``."""
    if isinstance(value, str):
        return value, True
    indented = json_indented(value, 0)
    if indented is None:
        return result_text(value), True
    return indented, False


def _source_search(ev: Evidence, step: Step) -> tuple[str, bool] | None:
    """``_search_text`` of ``_source_texts(ev, step)`` (None = unknown), the result's once
    per step."""
    parts = []
    if step.documents is not None and "documents" not in step.redacted:
        parts.append(_search_text(step.documents))
    if not absent(step, "result"):
        made: tuple[str, bool] = ev.step_memoized(
            step, "result_search_text", _search_text, step.result
        )
        parts.append(made)
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return "\n".join(text for text, _ in parts), all(made for _, made in parts)


_CALL: Any = object()
"""``_Sources.values``' entry for a call, whose result (and documents) is the source."""


class _Sources:
    """What ``citations_grounded`` searches, in order: the earlier calls' results (their
    steps given), then the tool results each earlier model call was handed in its input
    (the call itself may belong to a part of the run outside this trace), read from the
    model calls only when a search first gets past the calls. Each source's text is made
    when a search first reaches it (most answers cite ids found in the first results, and
    serializing a structured result is the costly part): the order searched is the order
    listed, as if all were made up front. The model calls themselves are picked (``models``,
    called once) only then: most answers are grounded in the calls' results, and picking
    them reads every model call's times."""

    __slots__ = ("ev", "pending", "searched", "steps", "texts", "values")

    def __init__(self, ev: Evidence, calls: list[Step], models: Callable[[], list[Step]]) -> None:
        self.ev = ev
        self.steps = calls
        """Each source's step: the call, or the model call handed the result."""
        self.values: list[Any] = [_CALL] * len(calls)
        """Each source's value: ``_CALL`` for a call's result, else the result handed in."""
        self.pending: Callable[[], list[Step]] | None = models
        self.texts: dict[int, str | None] = {}
        self.searched: dict[int, str | None] = {}

    def reaches(self, i: int) -> bool:
        """Whether there is an ``i``-th source (the model calls' inputs read on first ask)."""
        if i < len(self.steps):
            return True
        models, self.pending = self.pending, None
        if models is None:
            return False
        for g in models():
            for r in tool_responses(g):
                self.steps.append(g)
                self.values.append(r)
        return i < len(self.steps)

    def count(self) -> int:
        """How many sources there are."""
        self.reaches(len(self.steps))
        return len(self.steps)

    def source(self, i: int, searched: bool) -> str | Literal[False] | None:
        """What ``ground_ids`` asks: the ``i``-th source's ``search_text`` (``searched``) or
        ``text``; ``False`` when there is no ``i``-th source."""
        if not self.reaches(i):
            return False
        return self.search_text(i) if searched else self.text(i)

    def text(self, i: int) -> str | None:
        """The ``i``-th source's text (``_source_texts``, ``result_text``; None = unknown)."""
        if i in self.texts:  # (not a caught KeyError: each source's first read misses)
            return self.texts[i]
        value = self.values[i]
        text = self.texts[i] = (
            _source_texts(self.ev, self.steps[i]) if value is _CALL else result_text(value)
        )
        return text

    def search_text(self, i: int) -> str | None:
        """The text ``_search_text`` stands in for ``text(i)`` with (``_source_search``)."""
        if i in self.searched:  # (not a caught KeyError: each source's first read misses)
            return self.searched[i]
        value = self.values[i]
        found = _source_search(self.ev, self.steps[i]) if value is _CALL else _search_text(value)
        text = self.searched[i] = None if found is None else found[0]
        return text


def _ground(ids: list[str], sources: _Sources, searched: bool = True) -> dict[str, Step] | None:
    """Each cited id -> the first of ``sources`` that returns it as a whole id (the core's
    ``ground_ids``), searching each source's made text (``_Sources.text``), or, with
    ``searched`` and for an id holding no break character (``_search_text``), the text
    ``_search_text`` stands in for it with: the same answers, charged at least what the made
    texts would be. ``None``: the search ran past ``trace_answers.CITATION_SCAN_BUDGET``."""
    found = ground_ids(
        ids, sources.source, _continues_id, searched, trace_answers.CITATION_SCAN_BUDGET
    )
    if found is None:
        return None
    steps = sources.steps
    return {ident: steps[i] for ident, i in zip(ids, found[0], strict=True) if i is not None}


def citations_grounded(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
    out = ctx.evidence.final_output()
    assert out.text is not None  # guaranteed by the declared evidence
    ids = _answer_cites(ctx, p.pattern, out.text)
    if not ids:
        return Finding.ok(
            "the final answer cites no ids",
            span_ids=span_ids([out.step]) if out.step else (),
        )
    # A final-answer tool delivers the answer; its result (often the answer echoed)
    # grounds nothing.
    ev = ctx.evidence
    answering = ev.answering()
    final = out.step
    globs = p.sources
    every: Iterable[Step] = ev.calls_of(())
    if answering or globs:  # (most contracts name no sources; most runs answer in text)
        every = [
            s
            for s in every
            if id(s) not in answering and (not globs or step_glob(s, globs) is not None)
        ]
    calls = _earlier(every, final)
    # Tool results the model was handed in its input count too (its calls picked when
    # a search first gets past the calls' own results).
    generations = ev.groups.generations
    sources = _Sources(ev, calls, lambda: _earlier(generations, final, with_final=True))
    grounded = _ground(ids, sources)
    if grounded is None:
        # The stand-in texts are longer than the made ones: whether the made texts run
        # past the budget is decided on them.
        grounded = _ground(ids, sources, searched=False)
    if grounded is None:
        raise WorkBudgetExceeded(
            f"searching the earlier results for {len(ids):,} cited ids exceeds the check's "
            f"budget of {trace_answers.CITATION_SCAN_BUDGET:,} scanned characters; not graded"
        )
    ungrounded = [i for i in ids if i not in grounded]
    if ungrounded:
        texts = [(sources.steps[i], sources.text(i)) for i in range(sources.count())]
    details = {
        "cited": ids,
        "grounded": {i: s.index for i, s in grounded.items()},
        "ungrounded": ungrounded,
    }
    if not ungrounded:
        return Finding.ok(
            f"all {len(ids)} cited id(s) appear in earlier results: "
            + ", ".join(f"{i} ({where(s)})" for i, s in grounded.items()),
            details=details,
            span_ids=span_ids([*grounded.values(), *([out.step] if out.step else [])]),
            step_indexes=indexes(grounded.values()),
        )
    final_spans = span_ids([out.step]) if out.step else ()
    unknown = [s for s, t in texts if t is None and s.status != "error"]
    if unknown:
        return Finding.missing(
            f"cannot tell whether {', '.join(ungrounded)} came from a tool: results not "
            f"captured for {list_steps(unknown)}",
            details=details,
            span_ids=final_spans,
        )
    if work_invisible(ctx.evidence.trajectory):
        # No result is in the trace because none of the run's work is: an id the answer
        # cites may have come from any tool (DESIGN section 8: fail closed, never a guess).
        return Finding.missing(
            f"cannot tell whether {', '.join(ungrounded)} came from a tool: "
            f"{WORK_INVISIBLE}, so nothing shows what the run's tools returned",
            details=details,
            span_ids=final_spans,
        )
    returned = sorted({i for _, t in texts if t for i in _cited_ids(p.pattern, t)})
    return Finding.fail(
        f"cited id(s) not returned by any earlier tool or retrieval: {', '.join(ungrounded)}"
        f" (ids returned: {', '.join(returned) or 'none'})",
        details={**details, "returned": returned},
        span_ids=final_spans,
        step_indexes=indexes([out.step]) if out.step else (),
    )


def citation_required(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
    out = ctx.evidence.final_output()
    assert out.text is not None
    ids = _answer_cites(ctx, p.pattern, out.text)
    spans = span_ids([out.step]) if out.step else ()
    if len(ids) >= p.min:
        return Finding.ok(
            f"the answer cites {', '.join(ids)}", span_ids=spans, details={"cited": ids}
        )
    if p.unless_degraded:
        # The exemption needs to see which tools ran (only asked when it matters).
        gaps = ctx.evidence.gaps(("tool_names",))
        if gaps:
            return Finding.missing(
                f"no citation, and whether the run was degraded is unknown: {gaps[0]}",
                span_ids=spans,
            )
        deg = find_degradation(ctx.evidence, p)
        if deg.degraded:
            return Finding.ok(
                f"no citation, not required: the run was degraded ({deg.describe()})",
                span_ids=spans,
                details={"cited": ids},
            )
        if deg.unknown:
            return Finding.missing(
                "no citation, and whether the run was degraded is unknown: results not "
                "captured for " + list_steps(deg.unknown),
                span_ids=spans,
            )
    # With the degradation exemption, a span no convention recognised may be the failed
    # call that exempts the answer (unseen: missing evidence there).
    return Finding.fail(
        f"the answer cites {len(ids)} id(s) matching /{p.pattern}/, at least {p.min} required",
        span_ids=spans,
        step_indexes=indexes([out.step]) if out.step else (),
        details={"cited": ids},
        unseen=p.unless_degraded,
    )


def evidence(oracle: Any, ctx: GradeContext) -> Finding:
    p = oracle.given
    if p.attribute is not None:
        return Finding.ok(f"attribute {p.attribute!r} present")
    assert p.field is not None
    what = EVIDENCE_DESCRIPTIONS.get(p.field, p.field)
    return Finding.ok(f"captured: {what}" + (f" (tool {p.tool})" if p.tool else ""))


def python_body(oracle: Any, ctx: GradeContext) -> Finding:
    """The oracle's own Python body: the oracles whose plans answer only their usual
    outcomes keep it whole (every answer, the plan's included), so it is the reference."""
    body: Finding = oracle.python_body(ctx)
    return body


REFERENCE: dict[str, Callable[[Any, GradeContext], Finding]] = {
    "tool_not_called": tool_not_called,
    "tool_retries": tool_retries,
    "loop_detected": loop_detected,
    "tool_errors": tool_errors,
    "max_tool_calls": max_tool_calls,
    "tokens": tokens,
    "max_steps": max_steps,
    "latency": latency,
    "tool_sequence": tool_sequence,
    "tool_called": tool_called,
    "handoff": handoff,
    "citations_grounded": citations_grounded,
    "citation_required": citation_required,
    "degraded_answer": python_body,
    "evidence": evidence,
    "no_network": python_body,
    "file_not_modified": python_body,
    "assertion_exists": python_body,
}


def lacking_of(ev: Evidence, plan: Plan) -> tuple[tuple[str, str], ...]:
    """``Evidence.lacking_of`` as the Python made it (not kept): the core plan's lacking
    names worded by the plan's wordings, the Python-probed names asked of ``probed``, in
    position order."""
    names = plan.names
    found: list[tuple[int, str, str]] = []
    core = plan.core
    if core is not None:
        view = ev.groups
        answering = ev.answering() if plan.outcomes else None
        fragmented = plan.tool_names and not view.nameless and ev.fragment_gap() is not None
        for pos, read, gaps in core.lacking(view, ev.trajectory.steps, answering, fragmented):
            words = plan.wordings[pos]
            assert words is not None
            message = words(ev, read, gaps)
            if message:
                found.append((pos, names[pos], message))
    if plan.python:
        core_found = bool(found)
        for pos, name in plan.python:
            message = ev.probed(name)
            if message:
                found.append((pos, name, message))
        if core_found:
            found.sort()
    return tuple((name, message) for _, name, message in found)


def known_clear(ev: Evidence, plan: Plan, incomplete: bool) -> tuple[bool, bool]:
    """``evaluator._known_clear`` as the Python made it: ``(clear, gapless)``, each
    ``False`` when working it out raised (``KeyboardInterrupt`` excepted)."""
    if incomplete:
        return False, False
    try:
        clear = not lacking_of(ev, plan)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - as the evaluator did
        clear = False
    try:
        gapless = ev.fragment_gap() is None and ev.coverage_gap() is None
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - as the evaluator did
        gapless = False
    return clear, gapless
