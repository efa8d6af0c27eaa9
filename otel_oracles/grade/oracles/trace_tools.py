"""Trace oracles about which tools ran, how often, in what order, and how they failed:
``tool_called``, ``tool_not_called``, ``tool_sequence``, ``tool_retries``, ``loop_detected``,
``tool_errors``, ``max_tool_calls`` and ``max_steps``.

All of them need to know which tools ran (evidence ``tool_names``): on a raw-client trace
with content capture off that is unknowable, and they report missing evidence rather than
pass. Budget params (``max``) make the same class usable as an invariant (``max: 0``) and as
a tolerance (``max: 1`` retry is fine, the second is not).

Tool names in params are matched by ``model.tool_name`` (a bare name matches its
plugin/toolset/MCP-qualified forms). The checks that forbid or count calls
(``tool_not_called``, ``max_tool_calls``, ``tool_retries``, ``tool_errors``,
``loop_detected``) fail closed: a recorded name without a namespace counts for a qualified
contract name, since nothing shows it came from another namespace.
"""

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from otel_oracles._native import CheckPlan
from otel_oracles.grade.evidence import list_steps, where
from otel_oracles.grade.oracles.base import (
    CoverageParams,
    Finding,
    GradeContext,
    OracleCheck,
    OracleParams,
)
from otel_oracles.grade.oracles.trace_common import (
    DEFAULT_ERROR_PATTERN,
    DENIED,
    PLANS,
    ArgsMatch,
    NamelessTwins,
    Regex,
    args_mismatch,
    call_failures,
    constrained_mismatch_why,
    indexes,
    is_denied,
    nameless_twins,
    one_string_or_list,
    shown_run,
    span_ids,
    step_glob,
    string_items,
)
from otel_oracles.grade.registry import register_oracle
from otel_oracles.model.defaults import new_list
from otel_oracles.model.step import TOOLISH_KINDS, Step, StepKind
from otel_oracles.model.tool_name import first_match


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _args_evidence(items: list[ArgsMatch], tools: list[str]) -> set[str]:
    """``tool_arguments`` scoped to the tools whose arguments a check constrains."""
    if not any(i.constrains_args() for i in items):
        return set()
    return {f"tool_arguments:{t}" for t in tools} if tools else {"tool_arguments"}


# ---- tool_called / tool_not_called --------------------------------------------------------------


class ToolCalledParams(ArgsMatch, CoverageParams):
    tool: str
    """Tool name or glob (``search_*``)."""
    min: int = Field(default=1, ge=0)
    """Fewest matching calls allowed."""
    max: int | None = Field(default=None, ge=0)
    """Most matching calls allowed (``None`` = no upper bound)."""


@register_oracle
class ToolCalled(OracleCheck):
    """A tool was called between min and max times, optionally with matching arguments."""

    oracle_type = "tool_called"
    Params = ToolCalledParams
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names"})
    params: ToolCalledParams
    given: ToolCalledParams
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: ToolCalledParams) -> None:
        super().__init__(params)
        p = self.given
        helpers = (args_mismatch, shown_run, DENIED)
        self.native_plan = PLANS.tool_called(p, p.constrains_args(), helpers)

    def required_evidence(self) -> frozenset[str]:
        return self.evidence | _args_evidence([self.given], [self.given.tool])

    def check(self, ctx: GradeContext) -> Finding:
        # Every answer is the core's (``native_plan``): the calls that ran, their arguments
        # matched, the count against the bounds.
        found = self.native_plan.finding(ctx)
        if found is None:  # (a plan of ``check_plans_more.rs`` answers every trajectory)
            raise RuntimeError("tool_called's plan gave no finding")
        return found


class ToolNotCalledParams(CoverageParams):
    tool: list[str] = Field(json_schema_extra=one_string_or_list)
    """Tool names or globs that must not be called (a single string is accepted). A bare
    name also forbids its plugin/toolset/MCP-qualified forms; a qualified name also catches
    a bare recorded name (its namespace unknown)."""
    max: int = Field(default=0, ge=0)
    """Calls tolerated (as a tolerance: ``max: 1`` lets one call through, counted)."""

    @field_validator("tool", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return _as_list(value)


@register_oracle
class ToolNotCalled(OracleCheck):
    """None of the named tools (names or globs) was called."""

    oracle_type = "tool_not_called"
    Params = ToolNotCalledParams
    needs_full_coverage = True
    failure_stands_on_gaps = True
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names"})
    params: ToolNotCalledParams
    given: ToolNotCalledParams
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: ToolNotCalledParams) -> None:
        super().__init__(params)
        self.native_plan = PLANS.tool_not_called(tuple(self.given.tool), self.given.max)

    def check(self, ctx: GradeContext) -> Finding:
        # Every answer is the core's (``native_plan``): the calls of the tools, none in most
        # runs, within ``max`` or over it (a call an approval step refused is still the
        # agent's request for the tool, counted and said).
        found = self.native_plan.finding(ctx)
        if found is None:  # (``check_plans.rs`` answers every trajectory)
            raise RuntimeError("tool_not_called's plan gave no finding")
        return found


# ---- tool_sequence ------------------------------------------------------------------------------


class SequenceItem(ArgsMatch):
    tool: str
    """Tool name or glob."""


SequenceMode = Literal["exact", "in_order", "any_order", "subset", "superset"]


class ToolSequenceParams(OracleParams):
    expected: list[SequenceItem] = Field(json_schema_extra=string_items)
    """Expected calls: tool names, or ``{tool, args, args_mode, args_regex, args_schema}``."""
    mode: SequenceMode = "in_order"
    """``exact``: the calls are exactly these, in order; ``in_order``: these appear in this
    order, other calls may be interleaved; ``any_order``: exactly these, any order;
    ``superset``: at least these, any order; ``subset``: only calls from this list."""
    ignore: list[str] = Field(default_factory=new_list)
    """Tool globs left out of the actual sequence before matching (e.g. ``transfer_to_*``).
    Final-answer tool calls (smolagents' ``final_answer``, pydantic-ai's ``final_result``:
    the answer's delivery channel, not work) are left out too unless ``expected`` names them."""

    @field_validator("expected", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"tool": v} if isinstance(v, str) else v for v in value]
        return value


_Item = tuple[SequenceItem, tuple[str, ...], bool]
"""An expected item as the core's ``tool_sequence_diff`` reads it: the item, its tool as a
pattern tuple (``step_glob``'s), whether it constrains the arguments. Made once per check."""


def sequence_items(expected: Sequence[SequenceItem]) -> tuple[_Item, ...]:
    """``expected`` as the alignment reads it (``_Item``)."""
    return tuple((i, (i.tool,), i.constrains_args()) for i in expected)


def _assign(weights: list[list[int]]) -> tuple[list[int], list[int]]:
    """The unordered modes' optimal one-to-one assignment (Hungarian algorithm) of items
    (rows) to calls (columns), maximizing the weights the core gives each pair: as many full
    matches as possible, then as many name-only matches; greedy first-match can miss a
    complete matching."""
    # Imported here: scipy.optimize costs ~0.7 s CPU to import, paid only by the contracts
    # whose sequences need an assignment, not by every grading run's start-up.
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(weights, maximize=True)
    return rows.tolist(), cols.tolist()


@register_oracle
class ToolSequence(OracleCheck):
    """Tool calls follow an expected sequence (exact, in_order, any_order, subset, superset)."""

    oracle_type = "tool_sequence"
    Params = ToolSequenceParams
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names"})
    params: ToolSequenceParams
    given: ToolSequenceParams
    native_plan: "CheckPlan[Finding]"

    def required_evidence(self) -> frozenset[str]:
        p = self.given
        tools = [i.tool for i in p.expected if i.constrains_args()]
        return self.evidence | _args_evidence(list(p.expected), tools)

    def __init__(self, params: ToolSequenceParams) -> None:
        super().__init__(params)
        # What every check of this contract reads of its params, as tuples, made once.
        given = self.given
        self._items = sequence_items(given.expected)
        self._named: tuple[str, ...] = tuple(i.tool for i in given.expected)
        self._ignore: tuple[str, ...] = tuple(given.ignore)
        self.native_plan = PLANS.tool_sequence(
            given.mode,
            self._items,
            self._named,
            self._ignore,
            first_match,
            constrained_mismatch_why,  # asked only of the items that constrain arguments
            _assign,
        )

    def check(self, ctx: GradeContext) -> Finding:
        # Every answer is the core's (``native_plan``): the calls taking part, their
        # alignment and the finding, in one call.
        found = self.native_plan.finding(ctx)
        if found is None:  # (a plan of ``check_plans_more.rs`` answers every trajectory)
            raise RuntimeError("tool_sequence's plan gave no finding")
        return found


# ---- retries, loops, errors ---------------------------------------------------------------------


class ToolRetriesParams(CoverageParams):
    max: int = Field(default=0, ge=0)
    """Retries allowed in total."""
    max_per_tool: int | None = Field(default=None, ge=0)
    """Retries allowed for any one tool (``None`` = only the total counts)."""
    tools: list[str] = Field(default_factory=new_list)
    """Tool globs to count (empty = every tool)."""
    error_pattern: Regex | None = DEFAULT_ERROR_PATTERN
    """A result matching this regex counts as a failed call (for traces without tool-span
    status, where the error is only in the result handed back to the model)."""


find_retries = PLANS.find_retries
"""``find_retries(ev, tools, error_pattern)``: (retry, failed call it repeats, why that call
failed): a call of a tool within the same agent whose previous call of that tool failed,
unless the two were asked for together: the model requested both in one turn (their call
ids in one model call's output), or the second started before the failed one ended (they
ran side by side). Either way nothing was known to have failed when the second was asked
for. Where the trace shows neither (no ids or messages, no times), the order of the steps
decides: a repeat is counted, never missed.

Only calls of ``tools`` count (every call when empty; ``model.tool_name``, failing closed).
Which call repeats which does not depend on them: a call's previous call of its tool is a
call of the same tool, kept or left out with it. So the repeats of the failed calls are
found once per trajectory and pattern (``tool_repeats`` of the calls in step order, the
pairs whose earlier call failed), and each ``tools`` asks only which of them it counts,
once per trajectory (``Evidence.memoized``'s table). The core's
(``native/python/src/retries.rs``; ``tool_retries``' plan calls it without a Python frame)."""


@register_oracle
class ToolRetries(OracleCheck):
    """Retries after failed tool calls stay within max (total) and max_per_tool."""

    oracle_type = "tool_retries"
    Params = ToolRetriesParams
    needs_full_coverage = True
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "tool_outcomes"})
    params: ToolRetriesParams
    given: ToolRetriesParams
    native_plan: "CheckPlan[Finding]"

    def required_evidence(self) -> frozenset[str]:
        """Which calls ran needs every call's name, but whether a call was a retry rests only
        on the outcome of the previous call of its own tool: with ``tools`` set, the outcomes
        of those tools' calls (a deletion whose outcome is unknown says nothing about the
        searches' retries). A call whose name is unknown keeps ``tool_names`` missing."""
        tools = self.given.tools
        if not tools:
            return self.evidence
        return frozenset({"tool_names", *(f"tool_outcomes:{t}" for t in tools)})

    def __init__(self, params: ToolRetriesParams) -> None:
        super().__init__(params)
        p = self.given
        self.native_plan = PLANS.tool_retries(
            p.error_pattern, tuple(p.tools), p.max, p.max_per_tool
        )

    def check(self, ctx: GradeContext) -> Finding:
        # Every answer is the core's (``native_plan``): none when no call failed (most runs),
        # else the retries ``find_retries`` finds, counted per tool and worded within or
        # over ``max`` and ``max_per_tool``.
        found = self.native_plan.finding(ctx)
        if found is None:
            raise AssertionError("tool_retries' plan answers every trajectory")
        return found


class LoopDetectedParams(CoverageParams):
    threshold: int = Field(default=3, ge=2)
    """This many calls of one tool with the same normalized arguments make a loop."""
    max: int = Field(default=0, ge=0)
    """Loops tolerated."""
    tools: list[str] = Field(default_factory=new_list)
    """Tool globs to watch (empty = every tool)."""


@register_oracle
class LoopDetected(OracleCheck):
    """No tool is called with the same normalized arguments threshold or more times."""

    oracle_type = "loop_detected"
    Params = LoopDetectedParams
    needs_full_coverage = True
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "tool_arguments"})
    params: LoopDetectedParams
    given: LoopDetectedParams
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: LoopDetectedParams) -> None:
        super().__init__(params)
        p = self.given
        self.native_plan = PLANS.loop_detected(tuple(p.tools), p.threshold, p.max)

    def required_evidence(self) -> frozenset[str]:
        if self.given.tools:
            return frozenset({"tool_names", *(f"tool_arguments:{t}" for t in self.given.tools)})
        return self.evidence

    def check(self, ctx: GradeContext) -> Finding:
        # Every answer is the core's (``native_plan``): fewer calls than ``threshold``, or
        # none that may repeat another's arguments so often (``repeated_args_candidates``),
        # in most runs; else the candidates grouped by tool and normalized arguments
        # (``step_normalized_args``), the loops within ``max`` or over it.
        found = self.native_plan.finding(ctx)
        if found is None:  # (``check_plans.rs`` answers every trajectory)
            raise RuntimeError("loop_detected's plan gave no finding")
        return found


class ToolErrorsParams(CoverageParams):
    max: int = Field(default=0, ge=0)
    """Failed calls allowed."""
    tools: list[str] = Field(default_factory=new_list)
    """Tool globs to count (empty = every tool)."""
    error_pattern: Regex | None = DEFAULT_ERROR_PATTERN
    """A result matching this regex counts as a failed call."""


@register_oracle
class ToolErrors(OracleCheck):
    """Failed tool calls (error status, error.type, exception, error result) stay within max."""

    oracle_type = "tool_errors"
    Params = ToolErrorsParams
    needs_full_coverage = True
    failure_stands_on_gaps = True  # recorded failures over budget: unseen calls add more
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names", "tool_outcomes"})
    params: ToolErrorsParams
    given: ToolErrorsParams
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: ToolErrorsParams) -> None:
        super().__init__(params)
        p = self.given
        self.native_plan = PLANS.tool_errors(p.error_pattern, tuple(p.tools), p.max)

    def check(self, ctx: GradeContext) -> Finding:
        # The core's (``native_plan``) when no call is nameless: no call failed (most runs),
        # or the failed calls within ``max`` or over it. A nameless call may be a named
        # call's twin, whose failure is that call's (``_failure_of_pair``): worded here.
        found = self.native_plan.finding(ctx)
        if found is not None:
            return found
        p = self.given
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


def _failure_of_pair(
    call: Step, twins: NamelessTwins, failures: dict[int, str | None]
) -> str | None:
    """Why ``call`` failed (``failures``: ``call_failures`` of the check's pattern), or, for
    a named call with a nameless twin (``nameless_twins``: two records of one call), why
    that twin failed: a tool span that recorded no name but the failure is the same call's
    record of it."""
    why = failures[id(call)]
    twin = twins.twin_of.get(id(call))
    if why is None and twin is not None:
        why = failures[id(twin)]
        if why is not None:
            why = f"{why} (recorded by {where(twin)}, which holds no tool name)"
    return why


# ---- counts -------------------------------------------------------------------------------------


class MaxToolCallsParams(CoverageParams):
    max: int = Field(ge=0)
    """Most tool calls allowed."""
    tools: list[str] = Field(default_factory=new_list)
    """Tool globs to count (empty = every tool). Final-answer tool calls (smolagents'
    ``final_answer``, pydantic-ai's ``final_result``: the answer's delivery channel, not work)
    are not counted unless ``tools`` names them, as ``tool_sequence`` leaves them out."""


@register_oracle
class MaxToolCalls(OracleCheck):
    """At most max tool calls (optionally of the given tools)."""

    oracle_type = "max_tool_calls"
    Params = MaxToolCallsParams
    needs_full_coverage = True
    failure_stands_on_gaps = True  # recorded calls over the limit: unseen calls add more
    evidence: ClassVar[frozenset[str]] = frozenset({"tool_names"})
    params: MaxToolCallsParams
    given: MaxToolCallsParams
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: MaxToolCallsParams) -> None:
        super().__init__(params)
        self.native_plan = PLANS.max_tool_calls(tuple(self.given.tools), self.given.max)

    def check(self, ctx: GradeContext) -> Finding:
        # No call left out of the count (most runs): the count within ``max`` or over it,
        # the core's (``native_plan``), which also words the count within ``max`` below.
        found = self.native_plan.finding(ctx)
        if found is not None:
            return found
        p = self.given
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
        if len(calls) > p.max:  # worded by the core, as the plan words its own count over
            return self.native_plan.over(tuple(calls))
        # Within ``max``: a pass, or a lower bound when a framework's limit cut the run off.
        return self.native_plan.within(ctx, len(calls))


DEFAULT_STEP_KINDS: list[StepKind] = [
    StepKind.GENERATION,
    StepKind.TOOL_CALL,
    StepKind.FILE_EDIT,
    StepKind.COMMAND,
    StepKind.RETRIEVAL,
]


class MaxStepsParams(CoverageParams):
    max: int = Field(ge=0)
    """Most steps allowed."""
    kinds: list[StepKind] = Field(default_factory=lambda: list(DEFAULT_STEP_KINDS))
    """Step kinds that count (default: model calls and tool calls)."""

    @model_validator(mode="after")
    def _nonempty(self) -> "MaxStepsParams":
        if not self.kinds:
            raise ValueError("kinds: list at least one step kind")
        return self


TOOL_KINDS = {StepKind.TOOL_CALL, StepKind.FILE_EDIT, StepKind.COMMAND, StepKind.RETRIEVAL}


@register_oracle
class MaxSteps(OracleCheck):
    """At most max steps of the given kinds (default: model calls plus tool calls)."""

    oracle_type = "max_steps"
    Params = MaxStepsParams
    needs_full_coverage = True
    failure_stands_on_gaps = True  # recorded steps over the limit: unseen steps add more
    evidence: ClassVar[frozenset[str]] = frozenset({"steps"})
    params: MaxStepsParams
    given: MaxStepsParams
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: MaxStepsParams) -> None:
        super().__init__(params)
        p = self.given
        self.native_plan = PLANS.max_steps(
            frozenset(p.kinds), StepKind.GENERATION, p.max, TOOLISH_KINDS, StepKind.AGENT
        )

    def required_evidence(self) -> frozenset[str]:
        if set(self.given.kinds) & TOOL_KINDS:
            return frozenset({"steps", "tool_names"})
        return self.evidence

    def check(self, ctx: GradeContext) -> Finding:
        # The usual answer, a count within ``max`` that stands, or over it when the kinds
        # are whole groups of the step view: the core's (``native_plan``, which also words a
        # count within ``max`` below).
        found = self.native_plan.finding(ctx)
        if found is not None:
            return found
        p = self.given
        kinds = set(p.kinds)
        twinned = nameless_twins(ctx.evidence).twinned
        counted = [s for s in ctx.trajectory.steps if s.kind in kinds and id(s) not in twinned]
        details = {"steps": len(counted), "kinds": sorted(k.value for k in kinds)}
        if len(counted) > p.max:
            extra = counted[p.max :]
            return Finding.fail(
                f"{len(counted)} steps, at most {p.max} allowed; "
                f"over the limit: {list_steps(extra)}",
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
        # Within ``max``: a pass, or a lower bound when a framework's limit cut the run off.
        return self.native_plan.within(ctx, len(counted))
