"""Trace oracles about the answer and where it came from: ``citations_grounded``,
``citation_required``, ``degraded_answer`` and ``handoff`` (the answer's shape,
``final_output`` and ``schema_valid``, is ``trace_output``'s: a contract naming these
does not import those).

Content-dependent checks declare ``final_output`` (or tool arguments/results) as evidence,
so a trace recorded without message content gets ``missing_evidence`` from them, never a
pass. When the answer is known but a tool result that could decide the question was not
captured (a cited id might be in it; an uncaptured result might have been empty), the check
says so and reports missing evidence rather than guessing.
"""

import fnmatch
import operator
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from otel_oracles import safe_regex
from otel_oracles._native import CheckPlan, cited_ids
from otel_oracles.errors import WorkBudgetExceeded
from otel_oracles.grade.evidence import (
    WORK_INVISIBLE,
    Evidence,
    absent,
    attribute_value,
    list_steps,
    tool_responses,
    where,
    work_invisible,
)
from otel_oracles.grade.oracles.base import (
    CoverageParams,
    Finding,
    GradeContext,
    OracleCheck,
    OracleParams,
)
from otel_oracles.grade.oracles.trace_common import (
    DEFAULT_ERROR_PATTERN,
    PLANS,
    Regex,
    as_list,
    call_failure,
    indexes,
    is_timeout,
    nameless_twins,
    parsed_result,
    result_text,
    span_ids,
    step_glob,
    step_result_text,
    string_items,
)
from otel_oracles.grade.registry import register_oracle
from otel_oracles.model.defaults import new_list
from otel_oracles.model.step import Step
from otel_oracles.model.tool_name import first_match

DEFAULT_CITATION_PATTERN = r"doc-\d+"

DEFAULT_DISCLOSURE = (
    r"(?i)\b(degraded|unavailable|outage|failed|failing|timed? ?out|no results|"
    r"could not (?:retrieve|find|reach)|incomplete)\b"
)
"""What a degraded answer must say unless the contract names its own wording."""

DEFAULT_UNCERTAINTY = (
    r"(?i)\b(i (?:do not|don't) know|i(?:'m| am) not sure|i (?:cannot|can't) answer|"
    r"unable to (?:answer|find|determine)|no (?:relevant )?information)\b"
)
""""I do not know"-style wording; it must be tied to degraded evidence."""


def _cited_ids(pattern: str, text: str) -> list[str]:
    """Ids in first-seen order; the first group when the regex has one, else the match. The
    citation checks' plans (``native/python/src/check_plans_cite.rs``) find them once per
    trajectory and pattern (the evidence's memo, ``("answer_cites", pattern)``: both checks
    usually search the same answer), and in each source's text (made or stand-in) for a
    failure's list of the ids the sources returned: by the core where the pattern is a
    literal and a digit run (``cited_ids``: ``doc-\\d+``), asking this function only for
    another pattern or a text the core leaves to the engine (a character beyond ASCII
    where ``\\d`` could take it)."""
    found = cited_ids(pattern, text)
    if found is not None:
        return found
    seen: dict[str, None] = {}
    for m in safe_regex.finditer(pattern, text):
        ident = m.group(1) if m.groups() else m.group(0)
        if ident:  # an optional group that did not take part is no id
            seen.setdefault(ident, None)
    return list(seen)


_ID_CHAR = r"[\w-]"
"""A character that would continue an id: ``doc-4`` must not be found inside ``doc-42``
(compiled on its first character by ``safe_regex``, not at import)."""

_CONTINUES: dict[str, bool] = {}
"""Character -> whether it matches ``_ID_CHAR`` (``_continues_id``)."""


def _continues_id(char: str) -> bool:
    """Whether ``char`` (beyond ASCII: the core decides ASCII itself) matches ``_ID_CHAR``,
    asked of the engine once per character: the core's search for cited ids
    (``ground_ids``) tests every occurrence's two neighbours, and each test through
    ``safe_regex`` paid the time budget's clock (docs/performance-history.md, "The checks
    stage and serve's workers, cheaper per verdict"). Kept to a few thousand characters."""
    try:
        return _CONTINUES[char]
    except KeyError:
        pass
    continues = safe_regex.match(_ID_CHAR, char) is not None
    if len(_CONTINUES) >= 4096:
        _CONTINUES.clear()
    _CONTINUES[char] = continues
    return continues


CITATION_SCAN_BUDGET = 2_000_000_000
"""Characters the search for cited ids may scan in one ``citations_grounded`` check: every
cited id is looked for in every earlier result until found, so the work is the number of ids
times the size of the results, which a trace can make absurd (an answer citing 300,000 ids
against megabytes of results). About a second of substring search; a check beyond it ends in
``error`` instead of stalling the grader. The core's search (``ground_ids``) charges each
text searched its characters and each occurrence of an id whose neighbours it tests 1,000
(``OCCURRENCE_COST`` in ``native/core/src/citations.rs``)."""


def _source_texts(ev: Evidence, step: Step) -> str | None:
    """What a tool or retrieval step returned, as text to search for ids (None = unknown):
    what ``citations_grounded``'s plan searches for an id holding a break character, past
    the budget on the stand-in texts, and lists a failure's returned ids from when the
    pattern is not the core's (``IdPattern``) or its literal holds a break character (the
    core lists them from its own stand-in texts otherwise: the same ids, no JSON encoding
    in Python)."""
    parts = []
    if step.documents is not None and "documents" not in step.redacted:
        parts.append(result_text(step.documents))
    if not absent(step, "result"):
        parts.append(step_result_text(ev, step))
    return "\n".join(parts) if parts else None


# ---- citations ----------------------------------------------------------------------------------


class CitationsGroundedParams(CoverageParams):
    pattern: Regex = DEFAULT_CITATION_PATTERN
    """Regex finding citation ids in the final answer (first group, if any, is the id)."""
    sources: list[str] = Field(default_factory=new_list)
    """Tool globs whose results count as sources (empty = every tool and retrieval)."""


@register_oracle
class CitationsGrounded(OracleCheck):
    """Every id cited in the final answer appears in an earlier tool or retrieval result."""

    oracle_type = "citations_grounded"
    Params = CitationsGroundedParams
    needs_full_coverage = True
    holds_on_fragments = True
    evidence: ClassVar[frozenset[str]] = frozenset({"final_output"})
    params: CitationsGroundedParams
    given: CitationsGroundedParams
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: CitationsGroundedParams) -> None:
        super().__init__(params)
        p = self.given
        helpers = (
            _cited_ids,
            step_glob,
            result_text,
            _source_texts,
            tool_responses,
            work_invisible,
            WORK_INVISIBLE,
            _continues_id,
            WorkBudgetExceeded,
        )
        self.native_plan = PLANS.citations_grounded(
            p.pattern, p.sources, CITATION_SCAN_BUDGET, helpers
        )

    def check(self, ctx: GradeContext) -> Finding:
        # Every answer is the core's (``native_plan``): the cited ids, the earlier results
        # searched for them, the finding.
        found = self.native_plan.finding(ctx)
        if found is None:  # (a plan of ``check_plans_cite.rs`` answers every trajectory)
            raise RuntimeError("citations_grounded's plan gave no finding")
        return found


# ---- degradation --------------------------------------------------------------------------------


class DegradationParams(OracleParams):
    dependencies: list[str] = Field(default_factory=new_list)
    """Tool/retrieval globs whose failure degrades the answer (empty = every tool)."""
    degraded_attribute: str | None = None
    """An attribute (step, root span or resource) whose truthy value declares degradation."""
    error_pattern: Regex | None = DEFAULT_ERROR_PATTERN
    """A result matching this regex counts as an errored call."""
    empty_pattern: Regex | None = None
    """A result matching this regex counts as empty (beyond structurally empty results)."""


# A plain class, not a dataclass: compared by identity, never printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class Degradation:
    """What the trace shows about degraded dependencies."""

    __slots__ = ("degraded", "unknown")

    def __init__(self) -> None:
        self.degraded: list[tuple[Step | None, str]] = []
        self.unknown: list[Step] = []

    def describe(self) -> str:
        return "; ".join(
            f"{where(s)} {why}" if s is not None else why for s, why in self.degraded[:3]
        )


def is_empty_result(value: Any) -> bool:
    """Empty: ``""``, ``[]``, ``{}``, JSON ``null``, or an object whose every list field is
    empty (``{"documents": [], "status": "..."}``)."""
    v = parsed_result(value)
    if v is None or v in ("", [], {}):
        return True
    if isinstance(v, str):
        return not v.strip()
    if isinstance(v, dict):
        lists = [x for x in v.values() if isinstance(x, list)]
        return bool(lists) and all(not x for x in lists)
    return False


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0", "no", "none", "ok")
    return bool(value)


_INDEX = operator.attrgetter("index")


def find_degradation(ev: Evidence, p: DegradationParams) -> Degradation:
    """A dependency is degraded when its last call (per agent) errored, timed out or came
    back empty: an earlier failure followed by a success is a retry, not a degradation."""
    t = ev.trajectory
    out = Degradation()
    if p.degraded_attribute:
        found, value, step = attribute_value(t, p.degraded_attribute)
        if found and _truthy(value):
            out.degraded.append((step, f"attribute {p.degraded_attribute}={value!r}"))
    last: dict[tuple[str | None, str | None], Step] = {}
    maybe: dict[tuple[str | None, str | None], Step] = {}
    deps = tuple(p.dependencies)  # (as ``glob_any`` reads them, once instead of per call)
    for s in sorted(ev.groups.calls, key=_INDEX):
        if not deps or step_glob(s, deps) is not None:
            last[(s.agent_name, s.tool)] = s
        elif step_glob(s, deps, unknown_namespace_matches=True) is not None:
            maybe[(s.agent_name, s.tool)] = s
    # A call that may be a dependency under a namespace the name does not show
    # (``docs_search_docs``: a toolset prefix joined by ``_``) and whose last call failed,
    # came back empty or cannot be read leaves the degradation unknown: neither a degraded
    # nor a healthy dependency is shown.
    for s in maybe.values():
        judged = Degradation()
        _judge_dependency(ev, p, s, judged)
        if judged.degraded or judged.unknown:
            out.unknown.append(s)
    for s in last.values():
        _judge_dependency(ev, p, s, out)
    return out


def _judge_dependency(ev: Evidence, p: DegradationParams, s: Step, out: Degradation) -> None:
    """Adds the dependency call ``s`` (its last call) to ``out.degraded`` or ``out.unknown``
    where it is so (``find_degradation``)."""
    failure = call_failure(ev, s, p.error_pattern)
    if failure is not None:
        out.degraded.append(
            (s, f"timed out ({failure})" if is_timeout(ev, s) else f"errored ({failure})")
        )
        return
    # Documents are a retrieval's result, whatever the step's kind: a retriever run by a tool
    # is merged into that tool's call (mapping/_stacked.py), its documents with it.
    documents = None if "documents" in s.redacted else s.documents
    if documents is not None and not documents:
        out.degraded.append((s, "returned no documents"))
        return
    if s.attributes.get("result_empty"):  # the mapping saw it empty (also a null result)
        out.degraded.append((s, "returned empty"))
        return
    if absent(s, "result"):
        if documents is None:
            out.unknown.append(s)
        return
    if is_empty_result(s.result) or (
        p.empty_pattern and safe_regex.search(p.empty_pattern, step_result_text(ev, s))
    ):
        out.degraded.append((s, "returned empty"))
    elif s.attributes.get("outcome_unknown"):
        out.unknown.append(s)  # a result that reads the same whether the call failed


class DegradedAnswerParams(DegradationParams):
    allowed: bool = True
    """Whether a degraded answer is acceptable at all."""
    must_disclose: Regex | None = DEFAULT_DISCLOSURE
    """Regex a degraded answer must match (its disclosure); ``null`` = no disclosure needed."""
    uncertainty_pattern: Regex = DEFAULT_UNCERTAINTY
    """"I do not know"-style wording that must be tied to degraded evidence."""


@register_oracle
class DegradedAnswer(OracleCheck):
    """A degraded answer (a dependency errored, timed out or came back empty) is allowed,
    disclosed, and uncertainty is never voiced without degraded evidence."""

    oracle_type = "degraded_answer"
    Params = DegradedAnswerParams
    evidence: ClassVar[frozenset[str]] = frozenset({"final_output", "tool_names"})
    params: DegradedAnswerParams
    given: DegradedAnswerParams
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: DegradedAnswerParams) -> None:
        super().__init__(params)
        p = self.given
        helpers = (
            first_match,
            safe_regex.search,
            attribute_value,
            _truthy,
            is_empty_result,
            step_result_text,
        )
        self.native_plan = PLANS.degraded_answer(
            tuple(p.dependencies),
            p.degraded_attribute or None,
            p.error_pattern,
            p.empty_pattern or None,
            p.must_disclose or None,
            p.uncertainty_pattern,
            helpers,
        )

    def check(self, ctx: GradeContext) -> Finding:
        # The usual answers, no dependency degraded (the answer voicing no uncertainty, or
        # voicing it untied): the core's (``native_plan``).
        found = self.native_plan.finding(ctx)
        return found if found is not None else self.python_body(ctx)

    def python_body(self, ctx: GradeContext) -> Finding:
        """Every answer of the check, the plan's included: ``check`` asks it where the plan
        leaves the answer to Python, and the plan's tests hold the plan to it."""
        p = self.given
        out = ctx.evidence.final_output()
        assert out.text is not None
        text = out.text
        deg = find_degradation(ctx.evidence, p)
        answer_spans = span_ids([out.step]) if out.step else ()
        disclosure = safe_regex.search(p.must_disclose, text) if p.must_disclose else None
        uncertainty = safe_regex.search(p.uncertainty_pattern, text)
        details: dict[str, Any] = {
            "degraded": [why for _, why in deg.degraded],
            "disclosed": disclosure.group(0) if disclosure else None,
            "uncertainty": uncertainty.group(0) if uncertainty else None,
        }
        if deg.degraded:
            steps = [s for s, _ in deg.degraded if s is not None]
            kw: dict[str, Any] = {
                "used": 1,
                "details": details,
                "span_ids": span_ids([*steps, *([out.step] if out.step else [])]),
                "step_indexes": indexes(steps),
            }
            if not p.allowed:
                return Finding.fail(
                    f"degraded answer not allowed: {deg.describe()}", breach="budget", **kw
                )
            if p.must_disclose and disclosure is None:
                return Finding.fail(
                    f"degraded ({deg.describe()}) but the answer does not disclose it "
                    f"(must match /{p.must_disclose}/)",
                    breach="rule",
                    **kw,
                )
            said = f"; disclosed: {disclosure.group(0)!r}" if disclosure else ""
            return Finding.ok(f"degraded answer: {deg.describe()}{said}", **kw)
        if deg.unknown:
            return Finding.missing(
                "cannot tell whether a dependency was degraded: results not captured for "
                + list_steps(deg.unknown),
                details=details,
                span_ids=answer_spans,
            )
        claim = uncertainty or disclosure
        if claim is not None:
            # "No dependency was degraded" is about every call: a span no convention
            # recognised may be the call that failed (unseen: missing evidence there).
            return Finding.fail(
                f"the answer says {claim.group(0)!r} but no dependency was degraded "
                "(uncertainty not tied to degraded evidence)",
                breach="rule",
                details=details,
                span_ids=answer_spans,
                step_indexes=indexes([out.step]) if out.step else (),
                unseen=True,
            )
        # "No dependency degraded" is about every call too: a span no convention recognised
        # may be the call that failed, which the answer then hides (unseen: missing evidence).
        return Finding.ok(
            "no dependency degraded; the answer voices no uncertainty", details=details, unseen=True
        )


class CitationRequiredParams(DegradationParams):
    pattern: Regex = DEFAULT_CITATION_PATTERN
    """Regex a citation must match in the final answer."""
    min: int = Field(default=1, ge=1)
    """Fewest distinct citations."""
    unless_degraded: bool = False
    """No citation needed when the run was degraded (see ``degraded_answer``); the
    degradation must be real, found in the trace, not merely claimed by the answer."""


@register_oracle
class CitationRequired(OracleCheck):
    """The final answer cites at least min ids matching pattern."""

    oracle_type = "citation_required"
    Params = CitationRequiredParams
    evidence: ClassVar[frozenset[str]] = frozenset({"final_output"})
    params: CitationRequiredParams
    given: CitationRequiredParams
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: CitationRequiredParams) -> None:
        super().__init__(params)
        helpers = (_cited_ids, find_degradation)
        self.native_plan = PLANS.citation_required(self.given, helpers)

    def check(self, ctx: GradeContext) -> Finding:
        # Every answer is the core's (``native_plan``): the cited ids counted, the run's
        # degradation asked only when they are too few and it may exempt the answer.
        found = self.native_plan.finding(ctx)
        if found is None:  # (a plan of ``check_plans_cite.rs`` answers every trajectory)
            raise RuntimeError("citation_required's plan gave no finding")
        return found


# ---- handoff ------------------------------------------------------------------------------------


class Transfer(BaseModel):
    """A transfer between agents; names are globs. Written ``{from: a, to: b}`` or ``a -> b``."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, serialize_by_alias=True
    )

    from_: str = Field(default="*", alias="from")
    to: str = "*"

    def __str__(self) -> str:
        return f"{self.from_} -> {self.to}"


def _transfer(value: Any) -> Any:
    if isinstance(value, str):
        left, sep, right = value.partition("->")
        if not sep:
            raise ValueError(f"expected 'from -> to', got {value!r}")
        return {"from": left.strip() or "*", "to": right.strip() or "*"}
    return value


class HandoffParams(CoverageParams):
    required: list[Transfer] = Field(default_factory=new_list, json_schema_extra=string_items)
    """Transfers that must happen."""
    forbidden: list[Transfer] = Field(default_factory=new_list, json_schema_extra=string_items)
    """Transfers that must not happen."""

    @field_validator("required", "forbidden", mode="before")
    @classmethod
    def _parse(cls, value: Any) -> Any:
        return [_transfer(v) for v in as_list(value)] if value is not None else value


@register_oracle
class Handoff(OracleCheck):
    """Required transfers between named agents happen; forbidden ones do not."""

    oracle_type = "handoff"
    Params = HandoffParams
    needs_full_coverage = True
    evidence: ClassVar[frozenset[str]] = frozenset({"agents"})
    params: HandoffParams
    given: HandoffParams
    native_plan: "CheckPlan[Finding]"

    def __init__(self, params: HandoffParams) -> None:
        super().__init__(params)
        p = self.given
        helpers = (fnmatch.fnmatchcase, nameless_twins)
        self.native_plan = PLANS.handoff(p.required, p.forbidden, helpers)

    def check(self, ctx: GradeContext) -> Finding:
        # Every answer is the core's (``native_plan``): the transfers seen, against the
        # rules.
        found = self.native_plan.finding(ctx)
        if found is None:  # (a plan of ``check_plans_more.rs`` answers every trajectory)
            raise RuntimeError("handoff's plan gave no finding")
        return found
