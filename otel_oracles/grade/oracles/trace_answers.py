"""Trace oracles about the answer and where it came from: ``citations_grounded``,
``citation_required``, ``degraded_answer``, ``final_output``, ``schema_valid`` and
``handoff``.

Content-dependent checks declare ``final_output`` (or tool arguments/results) as evidence,
so a trace recorded without message content gets ``missing_evidence`` from them, never a
pass. When the answer is known but a tool result that could decide the question was not
captured (a cited id might be in it; an uncaptured result might have been empty), the check
says so and reports missing evidence rather than guessing.
"""

import fnmatch
import json
import operator
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from otel_oracles import safe_regex
from otel_oracles._native import CheckPlan, ground_ids, json_indented
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
    JsonSchema,
    Regex,
    call_failure,
    indexes,
    is_timeout,
    nameless_twins,
    one_string_or_list,
    result_text,
    schema_problems,
    span_ids,
    step_glob,
    step_result_text,
    string_items,
)
from otel_oracles.grade.registry import register_oracle
from otel_oracles.model.defaults import new_list
from otel_oracles.model.step import Step

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


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _cited_ids(pattern: str, text: str) -> list[str]:
    """Ids in first-seen order; the first group when the regex has one, else the match."""
    seen: dict[str, None] = {}
    for m in safe_regex.finditer(pattern, text):
        ident = m.group(1) if m.groups() else m.group(0)
        if ident:  # an optional group that did not take part is no id
            seen.setdefault(ident, None)
    return list(seen)


def _answer_cites(ctx: GradeContext, pattern: str, answer: str) -> list[str]:
    """``_cited_ids`` of the final answer, found once per trajectory and pattern:
    ``citations_grounded`` and ``citation_required`` usually search the same answer for the
    same ids (a fresh list per call)."""
    ids: list[str] = ctx.evidence.memoized(("answer_cites", pattern), _cited_ids, pattern, answer)
    return list(ids)


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


def _source_texts(ev: Evidence, step: Step) -> str | None:
    """What a tool or retrieval step returned, as text to search for ids (None = unknown)."""
    parts = []
    if step.documents is not None and "documents" not in step.redacted:
        parts.append(result_text(step.documents))
    if not absent(step, "result"):
        parts.append(step_result_text(ev, step))
    return "\n".join(parts) if parts else None


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
    texts would be. ``None``: the search ran past ``CITATION_SCAN_BUDGET``."""
    found = ground_ids(ids, sources.source, _continues_id, searched, CITATION_SCAN_BUDGET)
    if found is None:
        return None
    steps = sources.steps
    return {ident: steps[i] for ident, i in zip(ids, found[0], strict=True) if i is not None}


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

    def check(self, ctx: GradeContext) -> Finding:
        p = self.given
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
                f"searching the earlier results for {len(ids):,} cited ids exceeds the "
                f"check's budget of {CITATION_SCAN_BUDGET:,} scanned characters; not graded"
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


def _parsed(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def is_empty_result(value: Any) -> bool:
    """Empty: ``""``, ``[]``, ``{}``, JSON ``null``, or an object whose every list field is
    empty (``{"documents": [], "status": "..."}``)."""
    v = _parsed(value)
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

    def check(self, ctx: GradeContext) -> Finding:
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

    def check(self, ctx: GradeContext) -> Finding:
        p = self.given
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


# ---- output shape -------------------------------------------------------------------------------


class FinalOutputParams(OracleParams):
    must_match: list[Regex] = Field(default_factory=new_list, json_schema_extra=one_string_or_list)
    """Regexes the final answer must each match (``re.search``)."""
    must_not_match: list[Regex] = Field(
        default_factory=new_list, json_schema_extra=one_string_or_list
    )
    """Regexes the final answer must not match."""

    @field_validator("must_match", "must_not_match", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        return _one_or_many(value)


@register_oracle
class FinalOutput(OracleCheck):
    """The final answer matches every must_match regex and no must_not_match regex."""

    oracle_type = "final_output"
    Params = FinalOutputParams
    evidence: ClassVar[frozenset[str]] = frozenset({"final_output"})
    params: FinalOutputParams
    given: FinalOutputParams

    def check(self, ctx: GradeContext) -> Finding:
        p = self.given
        out = ctx.evidence.final_output()
        assert out.text is not None
        spans = span_ids([out.step]) if out.step else ()
        missing = [rx for rx in p.must_match if not safe_regex.search(rx, out.text)]
        present = [
            (rx, m.group(0)) for rx in p.must_not_match if (m := safe_regex.search(rx, out.text))
        ]
        problems = [f"does not match /{rx}/" for rx in missing] + [
            f"matches /{rx}/ ({hit!r})" for rx, hit in present
        ]
        if problems:
            return Finding.fail("final answer " + "; ".join(problems), span_ids=spans)
        return Finding.ok("final answer matches its patterns", span_ids=spans)


def _json_of(text: str) -> tuple[bool, Any]:
    stripped = text.strip()
    fenced = safe_regex.fullmatch(r"```(?:json)?\s*(.*?)\s*```", stripped, safe_regex.DOTALL)
    if fenced:
        stripped = fenced.group(1)
    try:
        return True, json.loads(stripped)
    except ValueError:
        return False, None


class SchemaValidParams(OracleParams):
    schema_: JsonSchema = Field(alias="schema")
    """The JSON Schema (any draft the ``jsonschema`` library knows)."""
    target: Literal["final_output", "tool_arguments", "tool_results"] = "final_output"
    """What to validate. The final answer must be JSON (a fenced ```json block is fine)."""
    tools: list[str] = Field(default_factory=new_list)
    """For tool targets: tool globs to validate (empty = every tool)."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


@register_oracle
class SchemaValid(OracleCheck):
    """The final output, tool arguments or tool results validate against a JSON Schema."""

    oracle_type = "schema_valid"
    Params = SchemaValidParams
    params: SchemaValidParams
    given: SchemaValidParams

    def required_evidence(self) -> frozenset[str]:
        p = self.given
        if p.target == "final_output":
            return frozenset({"final_output"})
        base = p.target
        names = {f"{base}:{t}" for t in p.tools} if p.tools else {base}
        return frozenset({"tool_names", *names})

    def check(self, ctx: GradeContext) -> Finding:
        p = self.given
        if p.target == "final_output":
            out = ctx.evidence.final_output()
            assert out.text is not None
            spans = span_ids([out.step]) if out.step else ()
            # A structured answer (a final-answer tool's arguments) is validated as it is.
            ok, value = (True, out.value) if out.value is not None else _json_of(out.text)
            if not ok:
                return Finding.fail(f"final answer is not JSON: {out.text[:80]!r}", span_ids=spans)
            problems = schema_problems(p.schema_, value)
            if problems:
                return Finding.fail(
                    "final answer fails the schema: " + "; ".join(problems),
                    span_ids=spans,
                    details={"problems": problems},
                )
            return Finding.ok("final answer validates against the schema", span_ids=spans)
        calls = [
            s
            for s in ctx.evidence.tool_calls()
            if (not p.tools or step_glob(s, p.tools) is not None)
            and not (p.target == "tool_results" and s.status == "error")
        ]
        bad: list[tuple[Step, list[str]]] = []
        for s in calls:
            if p.target == "tool_arguments":
                value = s.arguments
                if value is None:
                    ok, value = _json_of(s.arguments_raw or "")
                    if not ok:
                        bad.append((s, ["arguments are not a JSON value"]))
                        continue
            else:
                value = _parsed(s.result)
            problems = schema_problems(p.schema_, value)
            if problems:
                bad.append((s, problems))
        what = p.target.replace("_", " ")
        if bad:
            first = "; ".join(f"{where(s)}: {probs[0]}" for s, probs in bad[:3])
            return Finding.fail(
                f"{what} of {len(bad)} of {len(calls)} call(s) fail the schema: {first}",
                span_ids=span_ids(s for s, _ in bad),
                step_indexes=indexes(s for s, _ in bad),
                details={"failures": [{"step": s.index, "problems": pr} for s, pr in bad]},
            )
        return Finding.ok(f"{what} of {len(calls)} call(s) validate against the schema")


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
        return [_transfer(v) for v in _one_or_many(value)] if value is not None else value


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
        helpers = (fnmatch.fnmatchcase, where, nameless_twins)
        self.native_plan = PLANS.handoff(p.required, p.forbidden, helpers)

    def check(self, ctx: GradeContext) -> Finding:
        # Every answer is the core's (``native_plan``): the transfers seen, against the
        # rules.
        found = self.native_plan.finding(ctx)
        if found is None:  # (a plan of ``check_plans_more.rs`` answers every trajectory)
            raise RuntimeError("handoff's plan gave no finding")
        return found
