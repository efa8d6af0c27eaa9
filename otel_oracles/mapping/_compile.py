"""Compiling mapping files for the compiled core, once per ``ConventionSet``.

The conventions are read and validated in Python (error messages, plug-in parsers); what the
core evaluates per span is plain data made here: the rules' matches as a rule table
(``rule_table``: which rule a span matches) and their fields as read plans (``blueprint``:
per field its sources in order, with their parsers). Regexes mean what ``safe_regex`` runs
(the core answers a text itself only where its analysis proves the same answer), and
parsers other than the core's own (``json``, ``json_or_text``, ``genai_messages``,
``openinference_messages``) are called back in Python.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from otel_oracles import safe_regex
from otel_oracles._lazy_log import LazyLogger
from otel_oracles._native import (
    Drafter,
    FieldReader,
    RuleTable,
    SourceScan,
    TraceDrafter,
    parse_genai_messages,
    parse_json,
    parse_json_or_text,
    parse_openinference_messages,
    parse_python_literal,
    parse_request_tool_names,
    parse_streamed_partials,
    parse_string_list,
    parse_tool_names,
)
from otel_oracles.mapping._loader import ConventionSet, ToolKinds
from otel_oracles.mapping._tool_results import (
    ToolResultRules,
    tool_result_facts,
    tool_result_rules,
)
from otel_oracles.mapping.parsers._registry import ParserChain, ParserRegistry
from otel_oracles.mapping.parsers.scalars import parse_int, parse_string
from otel_oracles.model.span import SpanRecord, StatusCode, Trace

if TYPE_CHECKING:
    # The schema's models: a warm start builds its set from the kept blueprint and never
    # imports them (``mapping/__init__``).
    from otel_oracles.mapping.config import Condition, ConventionFile, Match, Rule, Source

log = LazyLogger(__name__)

CONTENT_FIELDS: frozenset[str] = frozenset(
    {
        "arguments", "result", "input_messages", "output_messages", "query", "documents",
        "output", "structured_output",
    }
)  # fmt: skip
"""Fields that content capture controls: a placeholder there is recorded in ``redacted``."""


NO_SOURCES = SourceScan(frozenset(), [], [])
"""Where a rule reads a span before ``compile_set`` says (nowhere)."""


# A plain class, not a dataclass: compared by identity and never printed, and the methods
# ``dataclasses`` generates, ``__init__`` too, are compiled from source at every start
# (``otel_oracles._frozen``).
class CompiledRule:
    """One rule, ready to run: ``file``/``rule_id`` name it in coverage reports."""

    __slots__ = (
        "agent_inside_is_delegation",
        "deferred",
        "delegate_works_inside",
        "delivers_answer",
        "error_keys",
        "file",
        "keep",
        "merged_model_calls",
        "nested_agent_is_handoff",
        "outcome_reads",
        "plan",
        "requests_from_next_input",
        "result_attrs",
        "result_error_keys",
        "result_from_messages",
        "results_show_failures",
        "rule_id",
        "run_limit_call",
        "source_attrs",
        "source_events",
        "source_prefixes",
        "source_scan",
        "step",
        "synthesize",
        "thoughts_unmarked",
    )
    file: str
    rule_id: str
    step: str
    keep: tuple[str, ...]
    synthesize: bool
    error_keys: tuple[str, ...]
    result_error_keys: tuple[str, ...]
    results_show_failures: bool
    nested_agent_is_handoff: bool
    delegate_works_inside: bool
    merged_model_calls: bool
    thoughts_unmarked: bool
    delivers_answer: bool
    run_limit_call: str | None
    agent_inside_is_delegation: bool
    result_from_messages: bool
    requests_from_next_input: bool
    plan: int
    """The number of the rule's read plan in ``CompiledSet.reader``."""
    deferred: int
    """The plan of the fields read only after the trace-level passes, and only if still
    needed: a non-agent step's ``agent_name``, which the enclosing agent's name replaces (see
    ``_mapper``); -1 when the rule has none."""
    result_attrs: tuple[str, ...]
    """The plain attributes the ``result`` field is read from, in order (a result captured as
    ``null`` there is an empty one: the core's ``TraceDrafter``)."""
    source_attrs: frozenset[str]
    """Every attribute a field is read from (``attr``, ``attrs``): with ``source_prefixes``
    and ``source_events``, where the rule reads a span (``_limits`` looks there for values an
    SDK limit cut). Set by ``compile_set``, since the sources are the rule's and the same for
    every span; a set, since a span holds a few of the many spellings a rule reads
    (``extends`` gathers them) and its attributes are tested against it."""
    source_prefixes: tuple[str, ...]
    """Prefixes of flattened attributes a field is read from (``attr_prefix``)."""
    source_events: tuple[tuple[frozenset[str], str | None], ...]
    """Span events a field is read from (log records left out): the event names and the
    attribute read, ``None`` for all of them."""
    source_scan: SourceScan
    """``source_attrs``, ``source_prefixes`` and ``source_events`` as the core reads them
    (``_limits.cut_length``)."""
    outcome_reads: tuple[tuple[str, bool], ...]
    """The ``outcome`` field as the read plan holds it: per run of consecutive sources that
    read an undeclared value alike (``Source.undeclared_unknown``), the plan field's name and
    that reading, in source order. The first run with a value gives the outcome, as the first
    usable source gives any field's value (``outcome_fields``)."""

    def __init__(
        self,
        file: str,
        rule_id: str,
        step: str,
        keep: tuple[str, ...],
        synthesize: bool,
        error_keys: tuple[str, ...],
        result_error_keys: tuple[str, ...] = (),
        results_show_failures: bool = True,
        nested_agent_is_handoff: bool = False,
        delegate_works_inside: bool = False,
        merged_model_calls: bool = False,
        thoughts_unmarked: bool = False,
        delivers_answer: bool = False,
        run_limit_call: str | None = None,
        agent_inside_is_delegation: bool = False,
        result_from_messages: bool = False,
        requests_from_next_input: bool = False,
        plan: int = -1,
        deferred: int = -1,
        result_attrs: tuple[str, ...] = (),
        source_attrs: frozenset[str] = frozenset(),
        source_prefixes: tuple[str, ...] = (),
        source_events: tuple[tuple[frozenset[str], str | None], ...] = (),
        source_scan: SourceScan = NO_SOURCES,
        outcome_reads: tuple[tuple[str, bool], ...] = (),
    ) -> None:
        self.file = file
        self.rule_id = rule_id
        self.step = step
        self.keep = keep
        self.synthesize = synthesize
        self.error_keys = error_keys
        self.result_error_keys = result_error_keys
        self.results_show_failures = results_show_failures
        self.nested_agent_is_handoff = nested_agent_is_handoff
        self.delegate_works_inside = delegate_works_inside
        self.merged_model_calls = merged_model_calls
        self.thoughts_unmarked = thoughts_unmarked
        self.delivers_answer = delivers_answer
        self.run_limit_call = run_limit_call
        self.agent_inside_is_delegation = agent_inside_is_delegation
        self.result_from_messages = result_from_messages
        self.requests_from_next_input = requests_from_next_input
        self.plan = plan
        self.deferred = deferred
        self.result_attrs = result_attrs
        self.source_attrs = source_attrs
        self.source_prefixes = source_prefixes
        self.source_events = source_events
        self.source_scan = source_scan
        self.outcome_reads = outcome_reads


# A plain class, not a dataclass: compared by identity and never printed, and the methods
# ``dataclasses`` generates, ``__init__`` too, are compiled from source at every start
# (``otel_oracles._frozen``).
class CompiledSet:
    __slots__ = (
        "content_keys",
        "drafter",
        "files",
        "final_answer_tools",
        "handoff_requests",
        "model_status",
        "placeholders",
        "reader",
        "rules",
        "run_limit_prompts",
        "table",
        "tool_call_finish_reasons",
        "tool_kinds",
        "tool_results",
        "trace_drafter",
    )
    rules: list[CompiledRule]
    placeholders: frozenset[str]
    tool_call_finish_reasons: frozenset[str]
    table: RuleTable
    """The rules' matches as the compiled core's rule table (``rule_table``): it selects
    each span's rule."""
    reader: FieldReader
    """The rules' read plans (``blueprint``): it reads a selected rule's fields."""
    drafter: Drafter
    """The per-span part of a draft (``TraceDrafter``) in the compiled core: the fields by
    the rule's read plan (``reader``), the status from the error signals and the fields
    normalized, in one call (``drafter``)."""
    run_limit_prompts: tuple[str, ...]
    """The files' ``run_limit_prompts`` (forced final-answer request texts), first-seen order."""
    files: list[str]
    tool_results: ToolResultRules
    """The files' ``tool_results`` / ``tool_outcomes``, merged."""
    content_keys: frozenset[str]
    """The attribute keys the content ``field`` conditions test stands under in the rule
    table (``ContentReads.keys``); empty when no rule has such a condition."""
    tool_kinds: dict[tuple[str, str], ToolKinds]
    final_answer_tools: tuple[str, ...]
    handoff_requests: tuple[str, ...]
    """The files' ``handoff_requests`` patterns (``_mapper._requested_handoffs``), each
    compiled on its first tool name by ``safe_regex`` (its cache), not here."""
    model_status: tuple[tuple[str, ...], tuple[str, ...]]
    """The set's ``tool_kinds()``, ``final_answer_tools()`` and ``model_status_errors()``
    (made here, from the blueprint's ``set``: ``ConventionSet`` asks for them), read per
    trace by ``map_trace``."""
    trace_drafter: TraceDrafter | None
    """The core's drafter of whole traces over these rules (``_mapper._trace_drafter``
    makes it on the set's first trace: it holds the mapper's ``Draft`` class and Python
    finish)."""

    def __init__(
        self,
        rules: list[CompiledRule],
        placeholders: frozenset[str],
        tool_call_finish_reasons: frozenset[str],
        table: RuleTable,
        reader: FieldReader,
        drafter: Drafter,
        run_limit_prompts: tuple[str, ...] = (),
        files: list[str] | None = None,
        tool_results: ToolResultRules | None = None,
        content_keys: frozenset[str] = frozenset(),
        tool_kinds: dict[tuple[str, str], ToolKinds] | None = None,
        final_answer_tools: tuple[str, ...] = (),
        handoff_requests: tuple[str, ...] = (),
        model_status: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
        trace_drafter: TraceDrafter | None = None,
    ) -> None:
        self.rules = rules
        self.placeholders = placeholders
        self.tool_call_finish_reasons = tool_call_finish_reasons
        self.table = table
        self.reader = reader
        self.drafter = drafter
        self.run_limit_prompts = run_limit_prompts
        self.files = [] if files is None else files
        self.tool_results = ToolResultRules() if tool_results is None else tool_results
        self.content_keys = content_keys
        self.tool_kinds = {} if tool_kinds is None else tool_kinds
        self.final_answer_tools = final_answer_tools
        self.handoff_requests = handoff_requests
        self.model_status = model_status
        self.trace_drafter = trace_drafter

    def select(self, trace: Trace) -> list[CompiledRule | None]:
        """Per span of the trace (in ``trace.spans`` order), the first rule (priority
        order) whose match holds, or ``None``: evaluated by the compiled core."""
        rules = self.rules
        return [
            rules[index] if index >= 0 else None
            for index in self.table.select(trace.spans, trace.children)
        ]


_CONTENT_KEY = "\x00content:{}"
"""The attribute key a ``field`` condition's content stands under in the rule table. A real
key may spell it too (trace data is untrusted): the core never reads a span's own attribute
under it."""


# A plain class, not a dataclass: compared by identity and never printed, and the methods
# ``dataclasses`` generates, ``__init__`` too, are compiled from source at every start
# (``otel_oracles._frozen``).
class ContentReads:
    """The content ``field`` conditions test (``Condition.field``), one read per distinct
    source list: the rule's own sources for that field, so a condition sees the content
    wherever the mapping reads it, a span attribute or events (span events, log records
    attached to the span). Each read is an attribute key of the rule table; the core works
    out a span's content under it with the field reader's raw read (the first source with a
    value that is no redaction placeholder, as text), when a condition first tests it, and
    never writes it into the trace."""

    __slots__ = ("_by_sources", "keys", "placeholders", "reads")
    placeholders: frozenset[str]
    """The conventions' redaction placeholders: a source holding one holds no content, so
    the next source is read (as the field reader does)."""
    reads: list[tuple[str, tuple[Source, ...]]]
    """Per read, its attribute key and its sources."""
    keys: frozenset[str]
    """The reads' attribute keys."""
    _by_sources: dict[str, int]

    def __init__(
        self,
        placeholders: frozenset[str] = frozenset(),
        reads: list[tuple[str, tuple[Source, ...]]] | None = None,
        keys: frozenset[str] = frozenset(),
        _by_sources: dict[str, int] | None = None,
    ) -> None:
        self.placeholders = placeholders
        self.reads = [] if reads is None else reads
        self.keys = keys
        self._by_sources = {} if _by_sources is None else _by_sources

    def key(self, sources: Sequence[Source]) -> str:
        """The attribute key of the read of ``sources`` (added on first use)."""
        ident = repr(list(sources))
        index = self._by_sources.get(ident)
        if index is None:
            index = self._by_sources[ident] = len(self.reads)
            self.reads.append((_CONTENT_KEY.format(index), tuple(sources)))
            self.keys = frozenset(key for key, _ in self.reads)
        return self.reads[index][0]

    def table_reads(self, keys: Mapping[str, int]) -> list[tuple[int, list[Origin]]]:
        """The reads as the core's ``RuleTable`` takes them: per read its key's number and
        the origins of its sources that can hold content (span attributes and events; a span
        name, status message, child attribute or constant is none)."""
        return [
            (keys[key], [_origin(s) for s in sources if _holds_content(s)])
            for key, sources in self.reads
        ]


def _holds_content(src: Source) -> bool:
    return (
        src.event is not None
        or src.attr is not None
        or src.attrs is not None
        or src.attr_prefix is not None
    )


def _json_text(value: Any) -> str:
    """The text a content condition tests for a structured value (an AnyValue attribute, a
    log body, several events)."""
    return json.dumps(value, ensure_ascii=False, default=str)


_STATUS = {"error": int(StatusCode.ERROR), "ok": int(StatusCode.OK), "unset": int(StatusCode.UNSET)}

TableCondition = tuple[str, Any, Any]
"""One condition as the core's table reads it: ``(tag, a, b)`` (see ``rule_table``)."""


def rule_table(
    rules: list[Rule],
    fields: Sequence[Mapping[str, list[Source]]] | None = None,
    content: ContentReads | None = None,
) -> RuleTable:
    """The matches of ``rules`` (priority order) as the compiled core's ``RuleTable``
    (``table_data``, then ``_table``)."""
    placeholders = content.placeholders if content is not None else frozenset()
    return _table(table_data(rules, fields, content), placeholders)


def table_data(
    rules: list[Rule],
    fields: Sequence[Mapping[str, list[Source]]] | None = None,
    content: ContentReads | None = None,
) -> dict[str, Any]:
    """The matches of ``rules`` (priority order) as the plain data of the compiled core's
    ``RuleTable`` (``_table`` makes the table of it; JSON can hold it, see ``blueprint``).

    Plain data: attribute keys and regexes are numbered; per rule ``(all, any)``, each
    condition ``(tag, a, b)``: ``exists`` (key, wanted), ``equals`` (key, texts),
    ``equals_host`` (key, number of a value list compared in Python: ``equals`` values that
    are not all strings), ``regex`` (key, regex), ``span_name`` / ``scope`` (regex),
    ``kinds`` (OTLP numbers), ``status`` (OTLP number), ``child`` (a nested ``(all, any)``).
    A ``field`` condition is a ``regex`` on the attribute key its content stands under
    (``ContentReads``: the core reads the content of a span there with the field reader's raw
    read; ``fields``: per rule its sources, ``extends`` applied).
    Regexes keep one meaning, Python's (``safe_regex``: its syntax and time budget). The
    core analyses each pattern when the table is built: for a pattern whose meaning it can
    prove (literals, ``^``/``$``, alternations and optional parts of them, simple classes,
    lookaheads) it answers every text itself; for the others it answers "no match" when a
    text lacks a literal every match needs, and calls ``search`` for the rest, once per
    distinct text (remembered). See docs/architecture.md, "Regex conditions in the core"."""
    from otel_oracles.mapping.config import SPAN_KINDS

    keys: dict[str, int] = {}
    patterns: dict[str, int] = {}
    host_lists: list[list[Any]] = []

    def key(name: str) -> int:
        return keys.setdefault(name, len(keys))

    def regex(pattern: str) -> int:
        return patterns.setdefault(pattern, len(patterns))

    def condition(cond: Condition, rule: int) -> TableCondition:
        if cond.field is not None:
            sources = fields[rule].get(cond.field) if fields is not None else None
            if not sources or content is None:
                raise ValueError(
                    f"rule {rules[rule].id!r} tests field {cond.field!r}, which it has no"
                    " sources for"
                )
            return ("regex", key(content.key(sources)), regex(cond.regex or ""))
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
        if cond.parent is not None:
            return ("parent", match(cond.parent, rule), None)
        assert cond.child is not None
        return ("child", match(cond.child, rule), None)

    def match(m: Match, rule: int) -> tuple[list[TableCondition], list[TableCondition]]:
        return [condition(c, rule) for c in m.all], [condition(c, rule) for c in m.any]

    data = [match(r.match, i) for i, r in enumerate(rules)]
    reads = None
    if content is not None and content.reads:
        reads = content.table_reads(keys)
    return {
        "rules": data,
        "keys": list(keys),
        "host_lists": host_lists,
        "regexes": list(patterns),
        "reads": reads,
    }


def _table(data: Mapping[str, Any], placeholders: frozenset[str]) -> RuleTable:
    """The ``RuleTable`` of ``table_data``'s plain data, freshly made or read back from JSON
    (the core takes a condition or a match as a list as well as a tuple: the rules are
    handed over as JSON gives them)."""
    texts: list[str] = data["regexes"]
    compiled: list[safe_regex.Pattern | None] = [None] * len(texts)

    def search(index: int, text: str) -> bool:
        """The engine's answer for a text the core leaves to it. A pattern is compiled on
        its first such text: the core answers most texts itself, so most of the table's
        patterns are never compiled in a run (their syntax was checked when the file was
        validated, see ``config.CHECKED``); ``safe_regex.search`` keeps its time
        budget for every one, compiled early or late."""
        rx = compiled[index]
        if rx is None:
            rx = compiled[index] = safe_regex.compile_pattern(texts[index])
        return safe_regex.search(rx, text) is not None

    content = None
    if data["reads"] is not None:
        reads = [(key, origins) for key, origins in data["reads"]]
        content = (reads, placeholders, _json_text)
    return RuleTable(data["rules"], data["keys"], data["host_lists"], texts, search, content)


def _resolved_fields(
    rule: Rule, conventions: ConventionSet, seen: tuple[str, ...] = ()
) -> dict[str, list[Source]]:
    """A rule's fields with ``extends`` applied (own fields replace inherited ones)."""
    if rule.extends is None or rule.extends in seen:
        return dict(rule.fields)
    base = conventions.rule(rule.extends)
    inherited = _resolved_fields(base, conventions, (*seen, rule.extends)) if base else {}
    return {**inherited, **rule.fields}


def _sources(fields: Mapping[str, list[Source]]) -> tuple[list[str], list[str], list[list[Any]]]:
    """Where a rule reads a span (``CompiledRule.source_*``), from its field sources as
    written, as plain data: attribute keys (sorted), prefixes, and per event source its
    names (sorted) and attribute."""
    keys: list[str] = []
    prefixes: list[str] = []
    events: list[tuple[frozenset[str], str | None]] = []
    for field_sources in fields.values():
        for source in field_sources:
            if source.event is not None:
                if not source.body:
                    events.append((frozenset(source.event), source.attr))
            elif source.attr is not None:
                keys.append(source.attr)
            elif source.attrs:
                keys.extend(source.attrs)
            elif source.attr_prefix is not None:
                prefixes.append(source.attr_prefix)
    return (
        sorted(set(keys)),
        list(dict.fromkeys(prefixes)),
        [[sorted(names), key] for names, key in dict.fromkeys(events)],
    )


def _compiled_rule(entry: Sequence[Any], scans: Sequence[_Scan]) -> CompiledRule:
    """The ``CompiledRule`` of a ``blueprint``'s rule entry: its values in the dataclass's
    order, lists for its tuples, the number of its sources' scan (``_scan``) for the
    ``source_*`` values. Positional: a ``CompiledRule(**entry)`` of a JSON object matched
    each key (JSON's texts are not interned) against every parameter name by comparing
    texts, ~17 k instructions a rule."""
    (
        file, rule_id, step, keep, synthesize, error_keys, result_error_keys, shows_failures,
        handoff, works_inside, merged, unmarked, delivers, run_limit_call, inside_delegation,
        from_messages, from_next_input, plan, deferred, result_attrs, scan, outcome_reads,
    ) = entry  # fmt: skip
    source_attrs, source_prefixes, source_events, source_scan = scans[scan]
    return CompiledRule(
        file, rule_id, step, tuple(keep), synthesize, tuple(error_keys),
        tuple(result_error_keys), shows_failures, handoff, works_inside, merged, unmarked,
        delivers, run_limit_call, inside_delegation, from_messages, from_next_input, plan,
        deferred, tuple(result_attrs), source_attrs, source_prefixes, source_events,
        source_scan, tuple((name, unknown) for name, unknown in outcome_reads),
    )  # fmt: skip


_Scan = tuple[
    frozenset[str], tuple[str, ...], tuple[tuple[frozenset[str], str | None], ...], SourceScan
]
"""A rule's ``source_attrs``, ``source_prefixes``, ``source_events`` and ``source_scan``."""


def _scan(data: Sequence[Any]) -> _Scan:
    """The ``CompiledRule.source_*`` values of ``_sources``' plain data."""
    attrs, prefixes, events = data
    keys = frozenset(attrs)
    return (
        keys,
        tuple(prefixes),
        tuple((frozenset(names), key) for names, key in events),
        SourceScan(keys, list(prefixes), [(list(names), key) for names, key in events]),
    )


def compile_set(conventions: ConventionSet) -> CompiledSet:
    """The compiled form of ``conventions``: its ``blueprint`` made into the core's objects
    (``build_set``)."""
    return build_set(blueprint(conventions), conventions.parsers)


def set_facts(files: Sequence[ConventionFile]) -> dict[str, Any]:
    """What ``files`` (priority order) say besides their rules, merged as the compiled set
    holds it, as plain data JSON can hold (a ``blueprint``'s ``set``): so a warm start builds
    the set without building its files (``_loader.load_conventions``). Their paths (priority
    order) and names; the redaction placeholders, tool-call finish reasons, control-flow
    exceptions (sorted); the finish-reason vocabulary (lower-cased spelling -> canonical
    reason, the highest-priority file winning a spelling two files define differently); the
    run-limit errors and prompts, the final-answer tools, handoff requests and the model
    errors' class names and patterns (each first-seen order, no repeats: a union, as the
    span that carries one may be mapped by another file than the one that knows the
    framework); the tool results (``tool_result_facts``); and the rules' tool kinds."""
    placeholders: set[str] = set()
    reasons: set[str] = set()
    vocabulary: dict[str, str] = {}
    for conv in files:
        placeholders.update(conv.redaction_placeholders)
        reasons.update(conv.tool_call_finish_reasons)
        for canonical, spellings in conv.finish_reasons.items():
            for spelling in (canonical, *spellings):
                vocabulary.setdefault(spelling.lower(), canonical)
            if canonical == "tool_call":
                reasons.update((canonical, *spellings))
    return {
        "sources": [c.source for c in files],
        "names": [c.name for c in files],
        "placeholders": sorted(placeholders),
        "finish_reasons": sorted(reasons),
        "vocabulary": vocabulary,
        "control_flow": sorted({n for c in files for n in c.control_flow_exceptions}),
        "run_limit_errors": list(dict.fromkeys(n for c in files for n in c.run_limit_errors)),
        "run_limit_prompts": list(dict.fromkeys(t for c in files for t in c.run_limit_prompts)),
        "tool_results": tool_result_facts(files),
        "tool_kinds": [
            [c.name, r.id, sorted(r.file_edit_tools), sorted(r.command_tools)]
            for c in files
            for r in c.rules
            if r.file_edit_tools or r.command_tools
        ],
        "final_answer_tools": list(dict.fromkeys(n for c in files for n in c.final_answer_tools)),
        "handoff_requests": list(dict.fromkeys(p for c in files for p in c.handoff_requests)),
        "model_errors": [
            list(dict.fromkeys(n for c in files for n in c.model_errors.status_errors)),
            list(
                dict.fromkeys(
                    c.model_errors.status_pattern for c in files if c.model_errors.status_pattern
                )
            ),
        ],
    }


def blueprint(conventions: ConventionSet) -> dict[str, Any]:
    """What compiling ``conventions`` works out from its rules, as plain data JSON can hold
    (``_cache`` keeps it, so a warm start skips this): per rule its settings, read plans and
    sources (``extends`` applied; ``_compiled_rule``), the read plans (parsers by their
    ``parse:`` names, a ``span_name`` source by its pattern; rules reading alike share one:
    ``extends`` makes many, 208 distinct of 408 in the bundled files) and the rule table's
    data (``table_data``). What depends on the installed parsers or is made of callables is
    made from it by ``build_set``, at every start. What the files say besides their rules
    is its ``set`` (``set_facts``)."""
    entries: list[list[Any]] = []
    rule_fields: list[dict[str, list[Source]]] = []
    facts = set_facts(conventions.files)
    plans: list[list[Any]] = []
    sources: list[list[Any]] = []
    scans: list[tuple[list[str], list[str], list[list[Any]]]] = []
    # Rules that inherit a field share its sources (the same list, ``_resolved_fields``), so
    # plans are told apart by identity (the rules, and so the lists, live as long as
    # ``conventions``); sources and scans by their data (``repr``: exact for the plain
    # values a file holds), as many files spell the same source.
    # (Identity first: the same ``Source`` needs no ``repr``.)
    numbers: dict[tuple[Any, ...], int] = {}
    source_numbers: dict[Any, int] = {}
    scan_numbers: dict[Any, int] = {}

    def source_of(src: Source) -> int:
        number = source_numbers.get(id(src))
        if number is None:
            data = [*_origin(src), list(src.parse), src.key]
            ident = repr(data)
            number = source_numbers.get(ident)
            if number is None:
                number = source_numbers[ident] = len(sources)
                sources.append(data)
            source_numbers[id(src)] = number
        return number

    def plan_of(fields: dict[str, list[Source]]) -> int:
        ident = tuple((name, id(field_sources)) for name, field_sources in fields.items())
        number = numbers.get(ident)
        if number is None:
            number = numbers[ident] = len(plans)
            plans.append(
                [
                    [name, name in CONTENT_FIELDS, [source_of(src) for src in field_sources]]
                    for name, field_sources in fields.items()
                ]
            )
        return number

    def scan_of(fields: dict[str, list[Source]]) -> int:
        same = tuple(id(field_sources) for field_sources in fields.values())
        number = scan_numbers.get(same)
        if number is None:
            data = _sources(fields)
            ident = repr(data)
            number = scan_numbers.get(ident)
            if number is None:
                number = scan_numbers[ident] = len(scans)
                scans.append(data)
            scan_numbers[same] = number
        return number

    for conv in conventions.files:
        for rule in conv.rules:
            fields = _resolved_fields(rule, conventions)
            rule_fields.append(fields)
            now = fields
            deferred = -1
            if rule.step != "agent" and "agent_name" in now:
                deferred = plan_of({"agent_name": now["agent_name"]})
                now = {name: sources for name, sources in now.items() if name != "agent_name"}
            outcome_reads: list[list[Any]] = []
            if "outcome" in now:
                runs = outcome_fields(now["outcome"])
                outcome_reads = [[name, unknown] for name, unknown, _ in runs]
                now = {k: v for k, v in now.items() if k != "outcome"}
                now.update((name, sources) for name, _, sources in runs)
            plan = plan_of(now)
            result_attrs = [
                s.attr for s in now.get("result", ()) if s.attr is not None and s.event is None
            ]
            synthesize = rule.synthesize_tool_calls
            entries.append(
                [
                    conv.name, rule.id, rule.step, list(rule.keep), synthesize.enabled,
                    list(synthesize.error_keys), list(rule.result_error_keys),
                    synthesize.results_show_failures, rule.nested_agent_is_handoff,
                    rule.delegate_works_inside, rule.merged_model_calls, rule.thoughts_unmarked,
                    rule.delivers_answer, rule.run_limit_call, rule.agent_inside_is_delegation,
                    rule.result_from_messages, rule.requests_from_next_input, plan, deferred,
                    result_attrs, scan_of(fields), outcome_reads,
                ]
            )  # fmt: skip
    content = ContentReads(frozenset(facts["placeholders"]))
    table = table_data(
        [rule for conv in conventions.files for rule in conv.rules], rule_fields, content
    )
    return {
        "rules": entries,
        "scans": scans,
        "plans": plans,
        "sources": sources,
        "table": table,
        "content_keys": sorted(content.keys),
        "set": facts,
    }


def build_set(plan: Mapping[str, Any], registry: ParserRegistry) -> CompiledSet:
    """The compiled set of a ``blueprint`` (made now, or read back from the cache): the
    core's rule table, field reader and drafter, the parsers ``registry`` gives the plans'
    ``parse:`` names, and what the files say besides their rules (its ``set``). Raises
    ``KeyError``, ``TypeError``, ``ValueError``, ``IndexError``, ``ArithmeticError`` or
    ``RecursionError`` for data of another shape."""
    facts = plan["set"]
    scans = [_scan(scan) for scan in plan["scans"]]
    rules = [_compiled_rule(entry, scans) for entry in plan["rules"]]
    frozen_placeholders = frozenset(facts["placeholders"])
    reader = FieldReader(
        plan["sources"],
        plan["plans"],
        functools.partial(_named_parser, registry),
        _first_group,
        frozen_placeholders,
        _parser_failed,
    )
    run_limit_errors = tuple(facts["run_limit_errors"])
    hooks = (
        parse_string,
        parse_int,
        output_messages,
        functools.partial(run_limit, names=run_limit_errors),
    )
    drafter = Drafter(
        reader,
        frozenset(facts["control_flow"]),
        bool(run_limit_errors),
        dict(facts["vocabulary"]),
        StatusCode.ERROR,
        hooks,
    )
    names, patterns = facts["model_errors"]
    return CompiledSet(
        rules=rules,
        placeholders=frozen_placeholders,
        tool_call_finish_reasons=frozenset(facts["finish_reasons"]),
        table=_table(plan["table"], frozen_placeholders),
        content_keys=frozenset(plan["content_keys"]),
        reader=reader,
        drafter=drafter,
        run_limit_prompts=tuple(facts["run_limit_prompts"]),
        files=list(facts["names"]),
        tool_results=tool_result_rules(facts["tool_results"]),
        tool_kinds={
            (file, rule): ToolKinds(frozenset(file_edit), frozenset(command))
            for file, rule, file_edit, command in facts["tool_kinds"]
        },
        final_answer_tools=tuple(facts["final_answer_tools"]),
        handoff_requests=tuple(facts["handoff_requests"]),
        model_status=(tuple(names), tuple(patterns)),
    )


# ---- what the drafter leaves to Python ------------------------------------------------------


def run_limit(fields: Mapping[str, Any], names: tuple[str, ...]) -> str | None:
    """The ``run_limit_errors`` entry a failed step's error is, if any: its type's last
    dotted part equals one, or its message holds one (plain substring search: linear in the
    untrusted message). Asked by the drafter before the fields are normalized."""
    etype = fields.get("error_type")
    short = etype.rsplit(".", 1)[-1] if isinstance(etype, str) else None
    message = fields.get("error_message")
    text = message if isinstance(message, str) else ""
    for name in names:
        if name == short or name in text:
            return name
    return None


def output_messages(output: Any) -> list[dict[str, Any]]:
    """The output messages an ``output`` field (an agent's or a run's output, not read as
    messages) stands for: the messages when its text is a JSON list of GenAI messages
    (``messages_written_as_text``), else one assistant message holding the text."""
    text = output if isinstance(output, str) else parse_string(output)
    return messages_written_as_text(text) or [
        {"role": "assistant", "parts": [{"type": "text", "content": text}]}
    ]


def messages_written_as_text(text: str | None) -> list[dict[str, Any]] | None:
    """``text`` as messages when it is a JSON list of GenAI messages (every item an object
    with a ``role`` and a ``parts`` list), else ``None``.

    Some tracers write a run's output messages into a generic output attribute (OpenInference's
    Vercel processor puts the merged run, tool results included, in ``output.value``). Read as
    one text, the tool results in it would be taken for the answer, and the ids the search
    returned for citations the answer made."""
    if not text or text[0] != "[":
        return None
    parsed = parse_json_or_text(text)
    if not (
        isinstance(parsed, list)
        and parsed
        and all(
            isinstance(m, dict) and "role" in m and isinstance(m.get("parts"), list) for m in parsed
        )
    ):
        return None
    messages = parse_genai_messages(parsed)  # the list already decoded, not the text again
    return messages or None


def outcome_fields(sources: list[Source]) -> list[tuple[str, bool, list[Source]]]:
    """The ``outcome`` sources as plan fields the reader fills one by one: each run of
    consecutive sources whose undeclared values read alike (unknown, or ignored) is a field
    of its own (``outcome#0``, ``outcome#1``...), so the mapper knows how the value it got
    was read, while the first source with a value still decides (``CompiledRule.outcome_reads``).
    """
    runs: list[tuple[str, bool, list[Source]]] = []
    for src in sources:
        unknown = src.undeclared_unknown
        if runs and runs[-1][1] == unknown:
            runs[-1][2].append(src)
        else:
            runs.append((f"outcome#{len(runs)}", unknown, [src]))
    return runs


Origin = tuple[str, Any, Any]
"""Where a source's raw value comes from, as the core reads it: ``(origin, a, b)``."""


def _named_parser(registry: ParserRegistry, name: str) -> Any:
    """What the field reader runs for the parser registered as ``name`` (``_parser``), asked
    by the core once per distinct name of a set's ``parse:`` lists; ``KeyError`` for a name
    not registered, as ``ParserRegistry.chain`` gives. The core resolves each source's list
    itself (none, one, or a chain of several: ``FieldReader``): resolving them here, one
    tuple and registry chain per source, was a quarter of building the set at every start
    (docs/performance-history.md, "Start-up: the set's sources resolved in the core")."""
    return _parser(registry[name])


_NATIVE_PARSERS: tuple[tuple[Any, str], ...] = (
    (parse_json, "json"),
    (parse_json_or_text, "json_or_text"),
    (parse_genai_messages, "genai_messages"),
    (parse_openinference_messages, "openinference_messages"),
    (parse_tool_names, "tool_names"),
    (parse_request_tool_names, "request_tool_names"),
    (parse_string_list, "string_list"),
    (parse_streamed_partials, "streamed_partials"),
    (parse_python_literal, "python_literal"),
)
"""The registered parsers that are the core's own functions: the reader calls them directly."""


def _parser(chain: Any) -> Any:
    """What the reader runs for a ``parse:`` chain: the name of the core's own parser when
    the chain is that one function (compared by identity: a plug-in's parser need not be
    hashable), a list of those names and Python callables for a chain of several (the core
    runs it as ``ParserRegistry.chain`` does: in order, ``None`` ending it), else the Python
    callable (or ``None``)."""
    if isinstance(chain, ParserChain):
        return [_parser(parse) for parse in chain.parsers]
    return next((name for fn, name in _NATIVE_PARSERS if chain is fn), chain)


def _origin(src: Source) -> Origin:
    if src.event is not None:
        names = list(src.event)
        if src.body:
            return ("event_body", names, None)
        if src.attr is not None:
            return ("event_attr", names, src.attr)
        return ("events", names, None)
    if src.attr is not None:
        return ("attr", src.attr, None)
    if src.attrs is not None:
        return ("attrs", list(src.attrs), None)
    if src.attr_prefix is not None:
        return ("prefix", src.attr_prefix, None)
    if src.span_name is not None:
        return ("span_name", src.span_name, None)  # its pattern (``_first_group``)
    if src.status_message:
        return ("status_message", None, None)
    if src.child_attr is not None:
        return ("child_attr", src.child_attr, None)
    return ("const", src.const, None)


def _first_group(pattern: str) -> Callable[[str], Any]:
    """The span name's first group of ``pattern``, or ``None`` (remembered per name: names
    repeat across spans). The pattern is compiled on its first name (``safe_regex``'s
    cache), not here: most of the bundled files' ``span_name`` sources never see a span in
    a given run, and compiling them all was most of what loading the conventions compiled
    (docs/performance-history.md, "Start-up: the conventions' patterns and the cache's hashing")."""

    @functools.lru_cache(maxsize=4096)
    def first_group(name: str) -> Any:
        m = safe_regex.search(pattern, name)
        return m.group(1) if m and m.group(1) else None

    return first_group


def _parser_failed(field_name: str, error: BaseException) -> None:
    """A parser's exception (a bug, or a plug-in's) is "no value" for that source, logged."""
    log.debug("parser for field %s failed", field_name, exc_info=error)


def read_fields(
    span: SpanRecord,
    children: list[SpanRecord],
    plan: int,
    compiled: CompiledSet,
    fields: dict[str, Any],
    redacted: set[str],
) -> None:
    """For every field of read plan ``plan``, the first source with a usable value, in
    order, into ``fields`` / ``redacted``, read by the compiled core (``FieldReader``). A
    placeholder (``__REDACTED__``, empty string...) is remembered but later sources are
    still tried; if nothing better turns up the field stays unset and, for a content
    field, is flagged redacted. A placeholder the parsers unwrap (MLflow JSON-encodes every
    attribute, so a masked payload is ``"[REDACTED]"`` with its quotes) counts the same."""
    compiled.reader.read(span, children, plan, fields, redacted)


def plain(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """A plain dict copy (for the few whole mappings the trajectory keeps)."""
    return {k: mapping[k] for k in mapping}
