"""Compiling mapping files into predicates and extractors, once per ``ConventionSet``.

Why compile: a trace has many spans and a run has many traces, so every regex is compiled
once, every rule becomes a chain of closures, and a span's attributes are read only for the
keys some rule asks about, through a per-span cache (decoded attributes may be lazy mappings
that convert a value on first access; reading every attribute would cost more than mapping).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from otel_oracles import safe_regex
from otel_oracles._native import RuleTable
from otel_oracles.mapping._loader import ConventionSet
from otel_oracles.mapping._tool_results import ToolResultRules, tool_result_rules
from otel_oracles.mapping.config import SPAN_KINDS, Condition, Match, Rule, Source
from otel_oracles.mapping.parsers import Parser
from otel_oracles.model.span import SpanRecord, StatusCode, Trace

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


Extractor = Callable[[SpanView], Any]


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
    plan: Plan = ()
    """``fields`` flattened to tuples for ``read_fields`` (built by ``compile_set``)."""
    plan_no_events: Plan = ()
    """``plan`` without its event sources, for spans without events (most spans)."""
    deferred: Plan = ()
    """Fields read only after the trace-level passes, and only if still needed: a non-agent
    step's ``agent_name``, which the enclosing agent's name replaces (see ``_mapper``)."""


@dataclass(slots=True)
class CompiledSet:
    rules: list[CompiledRule]
    placeholders: frozenset[str]
    tool_call_finish_reasons: frozenset[str]
    table: RuleTable
    """The rules' matches as the compiled core's rule table (``rule_table``): it selects
    each span's rule."""
    control_flow_exceptions: frozenset[str] = frozenset()
    """The files' ``control_flow_exceptions`` (last dotted part of the type name)."""
    files: list[str] = field(default_factory=list)
    finish_reasons: dict[str, str] = field(default_factory=dict)
    """Lower-cased spelling -> canonical finish reason (the files' ``finish_reasons``; the
    highest-priority file wins a spelling two files define differently)."""
    tool_results: ToolResultRules = field(default_factory=ToolResultRules)
    """The files' ``tool_results`` / ``tool_outcomes``, merged."""

    def select(self, trace: Trace) -> list[CompiledRule | None]:
        """Per span of the trace (in ``trace.spans`` order), the first rule (priority
        order) whose match holds, or ``None``: evaluated by the compiled core."""
        rules = self.rules
        return [
            rules[index] if index >= 0 else None
            for index in self.table.select(trace.spans, trace.children)
        ]


_STATUS = {"error": int(StatusCode.ERROR), "ok": int(StatusCode.OK), "unset": int(StatusCode.UNSET)}

TableCondition = tuple[str, Any, Any]
"""One condition as the core's table reads it: ``(tag, a, b)`` (see ``rule_table``)."""


def rule_table(rules: list[Rule]) -> RuleTable:
    """The matches of ``rules`` (priority order) as the compiled core's ``RuleTable``.

    Plain data: attribute keys and regexes are numbered; per rule ``(all, any)``, each
    condition ``(tag, a, b)``: ``exists`` (key, wanted), ``equals`` (key, texts),
    ``equals_host`` (key, number of a value list compared in Python: ``equals`` values that
    are not all strings), ``regex`` (key, regex), ``span_name`` / ``scope`` (regex),
    ``kinds`` (OTLP numbers), ``status`` (OTLP number), ``child`` (a nested ``(all, any)``).
    Regexes stay Python's (``safe_regex``, their syntax and time budget): the core calls
    ``search`` once per distinct text and remembers the answer."""
    keys: dict[str, int] = {}
    patterns: dict[str, int] = {}
    host_lists: list[list[Any]] = []

    def key(name: str) -> int:
        return keys.setdefault(name, len(keys))

    def regex(pattern: str) -> int:
        return patterns.setdefault(pattern, len(patterns))

    def condition(cond: Condition) -> TableCondition:
        if cond.attr is not None:
            if cond.exists is not None:
                return ("exists", key(cond.attr), cond.exists)
            if cond.regex is not None:
                return ("regex", key(cond.attr), regex(cond.regex))
            accepted = cond.equals if isinstance(cond.equals, list) else [cond.equals]
            if all(isinstance(a, str) for a in accepted):
                return ("equals", key(cond.attr), accepted)
            host_lists.append(list(accepted))
            return ("equals_host", key(cond.attr), len(host_lists) - 1)
        if cond.span_name is not None:
            return ("span_name", regex(cond.span_name), None)
        if cond.scope is not None:
            return ("scope", regex(cond.scope), None)
        if cond.kind is not None:
            return ("kinds", sorted({SPAN_KINDS[k.lower()] for k in cond.kind}), None)
        if cond.status is not None:
            return ("status", _STATUS[cond.status], None)
        assert cond.child is not None
        return ("child", match(cond.child), None)

    def match(m: Match) -> tuple[list[TableCondition], list[TableCondition]]:
        return [condition(c) for c in m.all], [condition(c) for c in m.any]

    data = [match(rule.match) for rule in rules]
    compiled = [safe_regex.compile_pattern(p) for p in patterns]

    def search(index: int, text: str) -> bool:
        return safe_regex.search(compiled[index], text) is not None

    return RuleTable(data, list(keys), host_lists, len(compiled), search)


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
    return CompiledSet(
        rules=rules,
        placeholders=frozenset(placeholders),
        tool_call_finish_reasons=frozenset(reasons),
        table=rule_table([rule for conv in conventions.files for rule in conv.rules]),
        control_flow_exceptions=frozenset(
            name for conv in conventions.files for name in conv.control_flow_exceptions
        ),
        files=[c.name for c in conventions.files],
        finish_reasons=vocabulary,
        tool_results=tool_result_rules(conventions.files),
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
