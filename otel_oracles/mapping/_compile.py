"""Compiling mapping files into predicates and extractors, once per ``ConventionSet``.

Why compile: a trace has many spans and a run has many traces, so every regex is compiled
once, every rule becomes a chain of closures, and a span's attributes are read only for the
keys some rule asks about, through a per-span cache (decoded attributes may be lazy mappings
that convert a value on first access; reading every attribute would cost more than mapping).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from otel_oracles.mapping._loader import ConventionSet
from otel_oracles.mapping._parsers import apply_parsers
from otel_oracles.mapping.config import SPAN_KINDS, Condition, Match, Rule, Source
from otel_oracles.model.span import SpanRecord, StatusCode

MISSING: Any = object()
"""Sentinel for "no value from this source" (``None`` may be a real attribute value)."""


class SpanView:
    """A span plus its direct children, with memoized attribute reads."""

    __slots__ = ("_cache", "children", "span")

    def __init__(self, span: SpanRecord, children: list[SpanRecord]) -> None:
        self.span = span
        self.children = children
        self._cache: dict[str, Any] = {}

    def get(self, key: str) -> Any:
        try:
            return self._cache[key]
        except KeyError:
            value = self.span.attributes.get(key, MISSING)
            self._cache[key] = value
            return value

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
        want = cond.exists
        return lambda v: (v.get(key) is not MISSING) == want
    if cond.regex is not None:
        rx = re.compile(cond.regex)
        return lambda v: isinstance(val := v.get(key), str) and rx.search(val) is not None
    accepted = cond.equals if isinstance(cond.equals, list) else [cond.equals]
    if all(isinstance(a, str) for a in accepted):
        accepted_set = frozenset(accepted)
        return lambda v: isinstance(val := v.get(key), str) and val in accepted_set
    return lambda v: v.get(key) in accepted


def compile_condition(cond: Condition) -> Predicate:
    if cond.attr is not None:
        return _attr_predicate(cond)
    if cond.span_name is not None:
        rx = re.compile(cond.span_name)
        return lambda v: rx.search(v.span.name) is not None
    if cond.scope is not None:
        rx = re.compile(cond.scope)
        return lambda v: rx.search(v.span.scope_name) is not None
    if cond.kind is not None:
        kinds = frozenset(SPAN_KINDS[k.lower()] for k in cond.kind)
        return lambda v: int(v.span.kind) in kinds
    if cond.status is not None:
        code = _STATUS[cond.status]
        return lambda v: int(v.span.status_code) == code
    assert cond.child is not None
    nested = compile_match(cond.child)
    return lambda v: any(nested(SpanView(c, [])) for c in v.children)


def compile_match(match: Match) -> Predicate:
    all_preds = [compile_condition(c) for c in match.all]
    any_preds = [compile_condition(c) for c in match.any]

    def predicate(view: SpanView) -> bool:
        for pred in all_preds:
            if not pred(view):
                return False
        return not any_preds or any(pred(view) for pred in any_preds)

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
        rx = re.compile(src.span_name)

        def from_name(v: SpanView) -> Any:
            m = rx.search(v.span.name)
            return m.group(1) if m and m.group(1) else MISSING

        return from_name
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
    parse: tuple[str, ...]


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


@dataclass(slots=True)
class CompiledSet:
    rules: list[CompiledRule]
    placeholders: frozenset[str]
    tool_call_finish_reasons: frozenset[str]
    files: list[str] = field(default_factory=list)


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
    for conv in conventions.files:
        placeholders.update(conv.redaction_placeholders)
        reasons.update(conv.tool_call_finish_reasons)
        for rule in conv.rules:
            fields = {
                name: [CompiledSource(compile_source(s), tuple(s.parse)) for s in sources]
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
                )
            )
    return CompiledSet(
        rules=rules,
        placeholders=frozenset(placeholders),
        tool_call_finish_reasons=frozenset(reasons),
        files=[c.name for c in conventions.files],
    )


def first_value(
    sources: list[CompiledSource], view: SpanView, placeholders: frozenset[str]
) -> tuple[Any, bool]:
    """(value, redacted): the first source with a usable value, in order. A placeholder
    (``__REDACTED__``, empty string...) is remembered but later sources are still tried; if
    nothing better turns up the field is ``None`` and flagged redacted."""
    redacted = False
    for src in sources:
        raw = src.extract(view)
        if raw is MISSING or raw is None:
            continue
        if isinstance(raw, str) and raw in placeholders:
            redacted = True
            continue
        value = apply_parsers(src.parse, raw) if src.parse else raw
        if value is None:
            continue
        return value, False
    return None, redacted


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
