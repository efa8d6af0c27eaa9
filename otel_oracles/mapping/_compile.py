"""Compiling mapping files into predicates and extractors, once per ``ConventionSet``.

Why compile: a trace has many spans and a run has many traces, so every regex is compiled
once, every rule becomes a chain of closures, and a span's attributes are read only for the
keys some rule asks about, through a per-span cache (decoded attributes may be lazy mappings
that convert a value on first access; reading every attribute would cost more than mapping).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from otel_oracles import safe_regex
from otel_oracles.mapping._loader import ConventionSet
from otel_oracles.mapping._tool_results import ToolResultRules, tool_result_rules
from otel_oracles.mapping.config import SPAN_KINDS, Condition, Match, Rule, Source
from otel_oracles.mapping.parsers import Parser
from otel_oracles.model.span import SpanRecord, StatusCode

log = logging.getLogger(__name__)

MISSING: Any = object()
"""Sentinel for "no value from this source" (``None`` may be a real attribute value)."""
_UNREAD: Any = object()


class SpanView:
    """A span plus its direct children, with memoized attribute reads.

    The span's key set is taken once (keys are cheap; values may be converted lazily), so a
    source naming an absent attribute, the common case for fallbacks, costs one set lookup."""

    __slots__ = ("_cache", "children", "keys", "span")

    def __init__(self, span: SpanRecord, children: list[SpanRecord]) -> None:
        self.span = span
        self.children = children
        self.keys: frozenset[str] = frozenset(span.attributes)
        self._cache: dict[str, Any] = {}

    def get(self, key: str) -> Any:
        if key not in self.keys:
            return MISSING
        cache = self._cache
        value = cache.get(key, _UNREAD)
        if value is _UNREAD:
            value = cache[key] = self.span.attributes.get(key, MISSING)
        return value

    def has(self, key: str) -> bool:
        """Presence without converting the value."""
        return key in self.keys

    def prefixed(self, prefix: str) -> dict[str, Any]:
        """Attributes under ``prefix.``, keyed by the rest of the key (flattened lists)."""
        start = prefix + "."
        cut = len(start)
        attrs = self.span.attributes
        return {k[cut:]: attrs[k] for k in attrs if k.startswith(start)}


Predicate = Callable[[SpanView], bool]
Extractor = Callable[[SpanView], Any]

_STATUS = {"error": StatusCode.ERROR, "ok": StatusCode.OK, "unset": StatusCode.UNSET}


def _attr_predicate(cond: Condition) -> Predicate:
    key = cond.attr
    assert key is not None
    if cond.exists is not None:
        if cond.exists:
            return lambda v: v.has(key)
        return lambda v: not v.has(key)
    if cond.regex is not None:
        value_test = _cached_search(cond.regex)
        return lambda v: isinstance(val := v.get(key), str) and value_test(val)
    accepted = cond.equals if isinstance(cond.equals, list) else [cond.equals]
    if all(isinstance(a, str) for a in accepted):
        accepted_set = frozenset(accepted)
        return lambda v: isinstance(val := v.get(key), str) and val in accepted_set
    return lambda v: v.get(key) in accepted


def _cached_search(pattern: str) -> Callable[[str], bool]:
    """``re.search`` memoized per string: span names, scope names and attribute values such as
    operation ids repeat across spans, and a budgeted search costs microseconds to set up."""
    rx = safe_regex.compile_pattern(pattern)

    @functools.lru_cache(maxsize=4096)
    def test(text: str) -> bool:
        return safe_regex.search(rx, text) is not None

    return test


def compile_condition(cond: Condition) -> Predicate:
    if cond.attr is not None:
        return _attr_predicate(cond)
    if cond.span_name is not None:
        name_test = _cached_search(cond.span_name)
        return lambda v: name_test(v.span.name)
    if cond.scope is not None:
        scope_test = _cached_search(cond.scope)
        return lambda v: scope_test(v.span.scope_name)
    if cond.kind is not None:
        kinds = frozenset(SPAN_KINDS[k.lower()] for k in cond.kind)
        return lambda v: int(v.span.kind) in kinds
    if cond.status is not None:
        code = _STATUS[cond.status]
        return lambda v: int(v.span.status_code) == code
    assert cond.child is not None
    nested = compile_match(cond.child)
    return lambda v: any(nested(SpanView(c, [])) for c in v.children)


def split_match(match: Match) -> tuple[Predicate, Predicate] | None:
    """(span-only part, child part) of a match whose child conditions are all in ``all``;
    ``compile_match`` is their conjunction, span-only part first. None otherwise."""
    if not any(c.child is not None for c in match.all) or any(
        c.child is not None for c in match.any
    ):
        return None
    static = compile_match(
        Match.model_construct(all=[c for c in match.all if c.child is None], any=match.any)
    )
    child_preds = [compile_condition(c) for c in match.all if c.child is not None]
    # A child condition holds for some child: a span without children fails them all.
    return static, lambda v: bool(v.children) and all(pred(v) for pred in child_preds)


def compile_match(match: Match) -> Predicate:
    """Cheap tests first: ``all`` conditions on the span itself, then ``any``, and only then
    conditions that look at child spans (the result is the same, the order is not)."""
    all_preds = [compile_condition(c) for c in match.all if c.child is None]
    child_preds = [compile_condition(c) for c in match.all if c.child is not None]
    any_preds = [compile_condition(c) for c in match.any]

    def predicate(view: SpanView) -> bool:
        for pred in all_preds:
            if not pred(view):
                return False
        if any_preds and not any(pred(view) for pred in any_preds):
            return False
        return all(pred(view) for pred in child_preds)

    return predicate


def _event_extractor(src: Source) -> Extractor:
    names = frozenset(src.event or ())
    if src.body:

        def body(v: SpanView) -> Any:
            for e in v.span.events:
                if e.name in names and e.body is not None:
                    return e.body
            return MISSING

        return body
    if src.attr is not None:
        key = src.attr

        def attr(v: SpanView) -> Any:
            for e in v.span.events:
                if e.name in names and key in e.attributes:
                    return e.attributes[key]
            return MISSING

        return attr

    def events(v: SpanView) -> Any:
        found = [e for e in v.span.events if e.name in names]
        return found or MISSING

    return events


def compile_source(src: Source) -> Extractor:
    """The raw value a source yields for a span, or ``MISSING``."""
    if src.event is not None:
        return _event_extractor(src)
    if src.attr is not None:
        key = src.attr
        return lambda v: v.get(key)
    if src.attrs is not None:
        keys = tuple(src.attrs)

        def many(v: SpanView) -> Any:
            found = {k: val for k in keys if (val := v.get(k)) is not MISSING}
            return found or MISSING

        return many
    if src.attr_prefix is not None:
        prefix = src.attr_prefix
        return lambda v: v.prefixed(prefix) or MISSING
    if src.span_name is not None:
        rx = safe_regex.compile_pattern(src.span_name)

        @functools.lru_cache(maxsize=4096)
        def first_group(name: str) -> Any:
            m = safe_regex.search(rx, name)
            return m.group(1) if m and m.group(1) else MISSING

        return lambda v: first_group(v.span.name)
    if src.status_message:
        return lambda v: v.span.status_message or MISSING
    if src.child_attr is not None:
        key = src.child_attr

        def from_child(v: SpanView) -> Any:
            for child in v.children:
                if key in child.attributes:
                    return child.attributes[key]
            return MISSING

        return from_child
    const = src.const
    return lambda v: const


@dataclass(slots=True)
class CompiledSource:
    extract: Extractor
    parse: Parser | None
    """The source's ``parse:`` chain, resolved through the set's parser registry."""
    attr: str | None = None
    """Set for plain ``attr`` sources: absent keys are skipped without calling ``extract``."""
    events: bool = False
    """An ``event`` source: it yields nothing for a span without events."""
    key: str | None = None
    """The source's ``key:``: the value is that key of the parsed object."""


Plan = tuple[tuple[str, tuple[tuple[str | None, Extractor, Parser | None], ...]], ...]
"""Per field: (attribute key or None, extractor, parser or None) per source, in order."""


@dataclass(slots=True)
class CompiledRule:
    """One rule, ready to run: ``file``/``rule_id`` name it in coverage reports."""

    file: str
    rule_id: str
    step: str
    predicate: Predicate
    fields: dict[str, list[CompiledSource]]
    keep: tuple[str, ...]
    synthesize: bool
    error_keys: tuple[str, ...]
    result_error_keys: tuple[str, ...] = ()
    nested_agent_is_handoff: bool = False
    delegate_works_inside: bool = False
    merged_model_calls: bool = False
    agent_inside_is_delegation: bool = False
    result_from_messages: bool = False
    requests_from_next_input: bool = False
    guard: Guard | None = None
    """Necessary conditions checkable from the span's dispatch signature (see ``Guard``)."""
    plan: Plan = ()
    """``fields`` flattened to tuples for ``read_fields`` (built by ``compile_set``)."""
    plan_no_events: Plan = ()
    """``plan`` without its event sources, for spans without events (most spans)."""
    deferred: Plan = ()
    """Fields read only after the trace-level passes, and only if still needed: a non-agent
    step's ``agent_name``, which the enclosing agent's name replaces (see ``_mapper``)."""
    split: tuple[Predicate, Predicate] | None = None
    """For a rule with child conditions (only in ``all``): its span-only part, decided by
    the signature, and its child part, evaluated per span (see ``split_match``)."""
    determined: bool = False
    """The match reads nothing beyond a span's full signature (scope, name, kind, status,
    values of ``CompiledSet.value_keys``, presence of ``presence_set`` keys): its outcome is
    the same for every span with that signature."""


@dataclass(frozen=True, slots=True)
class Guard:
    """Necessary conditions of a rule, derived from its match, that depend only on a span's
    *signature* (scope name, values of dispatch keys, presence of presence keys). Spans share
    few signatures, so the rules worth evaluating are computed once per signature and most
    rules are never evaluated for most spans. A guard only ever skips rules that could not
    match; the full predicate still decides."""

    scope: Callable[[str], bool] | None = None
    required: tuple[str, frozenset[str]] | None = None
    """Attribute that must hold one of these strings."""
    present: tuple[str, ...] = ()
    """At least one of these attributes must be present."""
    alternatives: tuple[tuple[str, frozenset[str] | None], ...] = ()
    """From ``any``: at least one (key, accepted values or None = present) must hold."""


def _accepted(cond: Condition) -> frozenset[str] | None:
    if cond.attr is None or cond.equals is None:
        return None
    accepted = cond.equals if isinstance(cond.equals, list) else [cond.equals]
    return frozenset(accepted) if all(isinstance(a, str) for a in accepted) else None


def _needs_presence(cond: Condition) -> bool:
    return cond.attr is not None and (
        cond.equals is not None or cond.regex is not None or cond.exists is True
    )


def _guard(match: Match) -> Guard | None:
    scope = next((_cached_search(c.scope) for c in match.all if c.scope is not None), None)
    required = next(
        ((c.attr, acc) for c in match.all if c.attr and (acc := _accepted(c)) is not None), None
    )
    if required is None and match.any:
        accepted = [_accepted(c) for c in match.any]
        keys = {c.attr for c in match.any}
        if len(keys) == 1 and all(a is not None for a in accepted):
            key = next(iter(keys))
            assert key is not None
            required = (key, frozenset().union(*(a for a in accepted if a is not None)))
    present: tuple[str, ...] = ()
    alternatives: tuple[tuple[str, frozenset[str] | None], ...] = ()
    first = next((c.attr for c in match.all if _needs_presence(c)), None)
    if first is not None:
        present = (first,)
    if match.any and all(_needs_presence(c) for c in match.any):
        alternatives = tuple((c.attr, _accepted(c)) for c in match.any if c.attr is not None)
    if scope is None and required is None and not present and not alternatives:
        return None
    return Guard(scope=scope, required=required, present=present, alternatives=alternatives)


Resolved = tuple[tuple[tuple[Predicate, CompiledRule], ...], CompiledRule | None]


SIGNATURE_CACHE_SIZE = 4096
"""Span signatures remembered per dispatch cache (bench data has a few dozen)."""


def remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    """Insert, evicting the oldest entry when full. Why not stop caching when full: a
    long-running server sees span names drift (new tools, new models); a cache frozen on
    the first 4,096 signatures would send every later span through the slow path. Safe
    without a lock: grading threads only race to evict the same oldest entry."""
    if len(cache) >= SIGNATURE_CACHE_SIZE:
        # Another thread may change the cache meanwhile; it stays bounded anyway.
        with contextlib.suppress(StopIteration, RuntimeError, KeyError):
            del cache[next(iter(cache))]
    cache[key] = value


@dataclass(slots=True)
class CompiledSet:
    rules: list[CompiledRule]
    placeholders: frozenset[str]
    tool_call_finish_reasons: frozenset[str]
    control_flow_exceptions: frozenset[str] = frozenset()
    """The files' ``control_flow_exceptions`` (last dotted part of the type name)."""
    files: list[str] = field(default_factory=list)
    finish_reasons: dict[str, str] = field(default_factory=dict)
    """Lower-cased spelling -> canonical finish reason (the files' ``finish_reasons``; the
    highest-priority file wins a spelling two files define differently)."""
    tool_results: ToolResultRules = field(default_factory=ToolResultRules)
    """The files' ``tool_results`` / ``tool_outcomes``, merged."""
    dispatch_keys: tuple[str, ...] = ()
    """Attribute keys some guard requires a value of (read once per span)."""
    presence_set: frozenset[str] = frozenset()
    """Attribute keys some guard requires present (tested without converting values)."""
    candidates: dict[tuple[Any, ...], list[CompiledRule]] = field(default_factory=dict)
    """Rules worth evaluating per span signature (few distinct signatures occur)."""

    value_keys: tuple[str, ...] = ()
    """Attribute keys whose values some determined rule compares (a superset of
    ``dispatch_keys``); read once per span, only when present."""
    resolved: dict[tuple[Any, ...], Resolved] = field(default_factory=dict)
    """Per full span signature: the (check, rule) pairs whose outcome still depends on the
    span (in order), then the rule that matches for sure if none of them does."""

    def rule_for(self, view: SpanView) -> CompiledRule | None:
        """The first rule (priority order) whose match holds for the span."""
        span = view.span
        get = view.get
        keys = view.keys
        key = (
            span.scope_name,
            span.name,
            span.kind,
            span.status_code,
            tuple([get(k) if k in keys else MISSING for k in self.value_keys]),
            self.presence_set & keys,
        )
        try:
            dynamic, final = self.resolved[key]
        except KeyError:
            dynamic, final = self._resolve(view, key)
        except TypeError:  # an unhashable attribute value (a list) under a value key
            return self._first_match(view)
        for check, rule in dynamic:
            if check(view):
                return rule
        return final

    def _resolve(self, view: SpanView, key: tuple[Any, ...]) -> Resolved:
        """Evaluate the determined candidates once for this signature (their outcome holds
        for every span that shares it); keep the others, in order, for per-span evaluation
        (only their child conditions when their span-only part holds for the signature)."""
        dynamic: list[tuple[Predicate, CompiledRule]] = []
        final = None
        for rule in self._candidate_rules(view):
            if not rule.determined:
                if rule.split is None:
                    dynamic.append((rule.predicate, rule))
                elif rule.split[0](view):
                    dynamic.append((rule.split[1], rule))
            elif rule.predicate(view):
                final = rule
                break
        entry = (tuple(dynamic), final)
        remember(self.resolved, key, entry)
        return entry

    def _first_match(self, view: SpanView) -> CompiledRule | None:
        for rule in self._candidate_rules(view):
            if rule.predicate(view):
                return rule
        return None

    def _candidate_rules(self, view: SpanView) -> list[CompiledRule]:
        get = view.get
        signature = (
            view.span.scope_name,
            tuple([get(k) for k in self.dispatch_keys]),
            self.presence_set & view.keys,
        )
        try:
            return self.candidates[signature]
        except KeyError:
            return self._candidates(signature)
        except TypeError:  # an unhashable attribute value (a list) under a dispatch key
            return self._candidates(signature, cache=False)

    def _candidates(self, signature: tuple[Any, ...], cache: bool = True) -> list[CompiledRule]:
        scope_name, dispatch_values, present = signature
        values = dict(zip(self.dispatch_keys, dispatch_values, strict=True))

        def possible(g: Guard | None) -> bool:
            if g is None:
                return True
            if g.scope is not None and not g.scope(scope_name):
                return False
            if g.required is not None:
                value = values[g.required[0]]
                if not isinstance(value, str) or value not in g.required[1]:
                    return False
            if g.present and not any(k in present for k in g.present):
                return False
            return not g.alternatives or any(
                k in present
                and (
                    accepted is None
                    or k not in values
                    or (isinstance(values[k], str) and values[k] in accepted)
                )
                for k, accepted in g.alternatives
            )

        rules = [r for r in self.rules if possible(r.guard)]
        if cache:
            remember(self.candidates, signature, rules)
        return rules


def _resolved_fields(
    rule: Rule, conventions: ConventionSet, seen: tuple[str, ...] = ()
) -> dict[str, list[Source]]:
    """A rule's fields with ``extends`` applied (own fields replace inherited ones)."""
    if rule.extends is None or rule.extends in seen:
        return dict(rule.fields)
    base = conventions.rule(rule.extends)
    inherited = _resolved_fields(base, conventions, (*seen, rule.extends)) if base else {}
    return {**inherited, **rule.fields}


def compile_set(conventions: ConventionSet) -> CompiledSet:
    rules: list[CompiledRule] = []
    placeholders: set[str] = set()
    reasons: set[str] = set()
    vocabulary: dict[str, str] = {}
    for conv in conventions.files:
        placeholders.update(conv.redaction_placeholders)
        reasons.update(conv.tool_call_finish_reasons)
        for canonical, spellings in conv.finish_reasons.items():
            for spelling in (canonical, *spellings):
                vocabulary.setdefault(spelling.lower(), canonical)
            if canonical == "tool_call":
                reasons.update((canonical, *spellings))
        for rule in conv.rules:
            fields = {
                name: [
                    CompiledSource(
                        compile_source(s),
                        conventions.parsers.chain(s.parse),
                        s.attr if s.event is None else None,
                        s.event is not None,
                        s.key,
                    )
                    for s in sources
                ]
                for name, sources in _resolved_fields(rule, conventions).items()
            }
            rules.append(
                CompiledRule(
                    file=conv.name,
                    rule_id=rule.id,
                    step=rule.step,
                    predicate=compile_match(rule.match),
                    fields=fields,
                    keep=tuple(rule.keep),
                    synthesize=rule.synthesize_tool_calls.enabled,
                    error_keys=tuple(rule.synthesize_tool_calls.error_keys),
                    result_error_keys=tuple(rule.result_error_keys),
                    nested_agent_is_handoff=rule.nested_agent_is_handoff,
                    delegate_works_inside=rule.delegate_works_inside,
                    merged_model_calls=rule.merged_model_calls,
                    agent_inside_is_delegation=rule.agent_inside_is_delegation,
                    result_from_messages=rule.result_from_messages,
                    requests_from_next_input=rule.requests_from_next_input,
                    guard=_guard(rule.match),
                    split=split_match(rule.match),
                )
            )
    for compiled_rule in rules:
        now = compiled_rule.fields
        if compiled_rule.step != "agent" and "agent_name" in now:
            later = {"agent_name": now["agent_name"]}
            now = {name: sources for name, sources in now.items() if name != "agent_name"}
            compiled_rule.deferred = _plan(later, with_events=True)
        compiled_rule.plan = _plan(now, with_events=True)
        compiled_rule.plan_no_events = _plan(now, with_events=False)
    value_keys = {r.guard.required[0] for r in rules if r.guard and r.guard.required}
    presence = {
        k
        for r in rules
        if r.guard
        for k in (*r.guard.present, *(a[0] for a in r.guard.alternatives))
    }
    for conv in conventions.files:
        for rule in conv.rules:
            for cond in (*rule.match.all, *rule.match.any):
                if cond.attr is None:
                    continue
                if cond.exists is not None:
                    presence.add(cond.attr)
                else:
                    value_keys.add(cond.attr)
    for compiled_rule, rule in zip(
        rules, (r for conv in conventions.files for r in conv.rules), strict=True
    ):
        compiled_rule.determined = all(c.child is None for c in (*rule.match.all, *rule.match.any))
    return CompiledSet(
        rules=rules,
        placeholders=frozenset(placeholders),
        tool_call_finish_reasons=frozenset(reasons),
        control_flow_exceptions=frozenset(
            name for conv in conventions.files for name in conv.control_flow_exceptions
        ),
        files=[c.name for c in conventions.files],
        finish_reasons=vocabulary,
        tool_results=tool_result_rules(conventions.files),
        dispatch_keys=tuple(
            sorted({r.guard.required[0] for r in rules if r.guard and r.guard.required})
        ),
        presence_set=frozenset(presence),
        value_keys=tuple(sorted(value_keys)),
    )


def _keyed(parse: Parser | None, key: str | None) -> Parser | None:
    """``parse`` (if any), then the value under ``key`` of the object it yields (``None``,
    i.e. no value, for anything else): a source's ``key:``."""
    if key is None:
        return parse

    def keyed(value: Any) -> Any:
        if parse is not None:
            value = parse(value)
        return value.get(key) if isinstance(value, dict) else None

    return keyed


def _plan(fields: dict[str, list[CompiledSource]], with_events: bool) -> Plan:
    plan = []
    for name, sources in fields.items():
        steps = tuple(
            (src.attr, src.extract, _keyed(src.parse, src.key))
            for src in sources
            if with_events or not src.events
        )
        if steps:
            plan.append((name, steps))
    return tuple(plan)


def read_fields(
    view: SpanView,
    rule: CompiledRule,
    placeholders: frozenset[str],
    content_fields: frozenset[str],
    fields: dict[str, Any],
    redacted: set[str],
    plan: Plan | None = None,
) -> None:
    """For every field of the rule (or of ``plan``), the first source with a usable value,
    in order, into ``fields`` / ``redacted`` (mapping's hot path: ~7 fields per span). A
    placeholder (``__REDACTED__``, empty string...) is remembered but later sources are
    still tried; if nothing better turns up the field stays unset and, for a content
    field, is flagged redacted. A placeholder the parsers unwrap (MLflow JSON-encodes every
    attribute, so a masked payload is ``"[REDACTED]"`` with its quotes) counts the same.
    The rule's ``deferred`` fields are not read here."""
    keys = view.keys
    span = view.span
    # Straight from the (lazy) mapping, past SpanView's memo: a field rarely reads a key
    # that dispatch already read, and the memo's bookkeeping costs more than it saves here.
    get = span.attributes.get
    if plan is None:
        plan = rule.plan if span.events else rule.plan_no_events
    for name, sources in plan:
        flagged = False
        for key, extract, parse in sources:
            if key is not None:
                if key not in keys:
                    continue
                raw = get(key, MISSING)
            else:
                raw = extract(view)
            if raw is MISSING or raw is None:
                continue
            if isinstance(raw, str) and raw in placeholders:
                flagged = True
                continue
            if parse is None:
                value = raw
            else:
                try:
                    value = parse(raw)
                except Exception:  # a parser bug (or plug-in's) is "no value", logged
                    log.debug("parser %s failed", _name(parse), exc_info=True)
                    continue
                if value is None:
                    continue
                if isinstance(value, str) and value in placeholders:
                    flagged = True
                    continue
            fields[name] = value
            flagged = False
            break
        if flagged and name in content_fields:
            redacted.add(name)


def _name(parse: Parser) -> str:
    return getattr(parse, "__name__", "chain")


def read_keep(view: SpanView, keys: tuple[str, ...]) -> dict[str, Any]:
    out = {}
    for key in keys:
        val = view.get(key)
        if val is not MISSING:
            out[key] = val
    return out


def plain(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """A plain dict copy (for the few whole mappings the trajectory keeps)."""
    return {k: mapping[k] for k in mapping}
