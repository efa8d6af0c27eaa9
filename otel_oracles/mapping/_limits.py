"""What an OpenTelemetry SDK's span limits left out of a trace, made visible to the checks.

Production deployments run with span limits, and a trace that hit them looks complete
unless the grader reads what the limits left behind (DESIGN section 8: a check passes only
when the data shows it should). Two kinds of loss are read here, after the trace-level
passes and before the steps are built (``apply_limits``).

**Values cut at a length.** SDKs cut every string attribute value at
``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`` (``OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT``), and a
collector's ``transform`` processor with ``truncate_all`` does the same, silently: nothing
marks the cut. A cut answer loses the citation at its end (``... 45 days of purchase
[doc-99].`` becomes ``... 45 days of pu``, and a check that finds no fabricated citation
passes), a cut tool result's JSON ends mid-way and no longer parses, a cut ``write_file``
argument holds half the file. The trace shows the cut by its length: every value the limit
reached is exactly the limit long, and the limit is the longest value the trace holds. So
the **cut length** of a trace is the length of its longest text values (strings holding a
space) among the attributes the mapping reads (``cut_length``) when at least
``MIN_CUT_VALUES`` different texts share it: in a trace nothing cut, different texts of
exactly the greatest length are a coincidence a real run's prompts and answers hardly make,
while a limit makes one of every value it reaches. Strings without a space (ids, names,
hashes) do not count: they come in one length by design; one longer than the texts rules a
cut out. Nor do texts that differ only in their digits (one error message with an attempt
counter, seen on Spring AI's failed tool calls: their ASCII digits are left out when texts
are compared). A content value of a step (messages,
arguments, results, documents, a structured answer) exactly that long is cut: it is dropped
(``None``) and its field flagged as not captured (``Step.redacted``), so what needs it is
missing evidence, as with content capture off, never judged on the part that survived. The
step records the cut length as ``values_cut_at`` (``inspect`` shows it). What the rule
cannot see: a trace with a single text past the limit (a long answer in an otherwise short
run) shows no cut length, and that text reads as whole.

**Attributes and events an SDK dropped.** At ``OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`` (128 by
default) the Python SDK evicts the oldest attribute and the JavaScript SDK drops the new
one; past ``OTEL_SPAN_EVENT_COUNT_LIMIT`` events are dropped. Both count what they left out
(``SpanRecord.dropped_attributes``, ``dropped_events``). OpenInference and OpenLLMetry
flatten every message into several attributes, so what goes is a message, or a tool call a
model asked for, while the list that is left looks whole. A step built from such a span
records the count as ``attributes_dropped`` / ``events_dropped``: its lists may be missing
items, so a model call's requests do not show which tools ran
(``grade/evidence.py``, ``tool_names``). The Java SDK also counts an attribute set again
under a key it already holds (Koog's spans report drops and lose nothing), so there a count
is a loss only on a span holding as many attributes as the most any span of its service
holds, the one place a limit can have stopped it (``lost_attributes``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from otel_oracles._native import LimitRules
from otel_oracles._native import cut_length as native_cut_length
from otel_oracles.mapping._compile import CompiledRule
from otel_oracles.model.span import SpanRecord, Trace

MIN_CUT_VALUES = 2
"""How many different values of the greatest length make that length the trace's cut."""

MIN_CUT_LENGTH = 16
"""Shorter limits are not looked for: short values of one length (ids, hashes, timestamps)
are common, and a limit that small leaves no content worth grading anyway."""

CONTENT_FIELDS = (
    "input_messages",
    "output_messages",
    "arguments",
    "result",
    "documents",
    "query",
)
"""The step fields holding content a cut value reaches."""


CONTENT_ATTRIBUTES = ("structured_output",)
"""Content a mapping keeps among a step's attributes (an agent's structured answer)."""

CUT_ATTRIBUTE = "values_cut_at"
"""The step attribute naming the cut length of the values dropped from the step."""


DROPPED_ATTRIBUTES = "attributes_dropped"
"""The step attribute holding how many attributes its span lost to a count limit."""

DROPPED_EVENTS = "events_dropped"
"""The step attribute holding how many events its span lost to a count limit."""

OVERWRITES_COUNTED = frozenset({"java"})
"""``telemetry.sdk.language`` of SDKs whose ``dropped_attributes_count`` also counts an
attribute set again under a key the span already holds (the Java SDK's ``AttributesMap``)."""


class _Draft(Protocol):
    span: SpanRecord | None
    rule: CompiledRule
    synthesized: bool
    fields: dict[str, Any]
    redacted: set[str]
    attributes: dict[str, Any]
    follows: list[Any]


_RULES = LimitRules(
    list(CONTENT_FIELDS),
    list(CONTENT_ATTRIBUTES),
    CUT_ATTRIBUTE,
    DROPPED_ATTRIBUTES,
    DROPPED_EVENTS,
    OVERWRITES_COUNTED,
    MIN_CUT_VALUES,
    MIN_CUT_LENGTH,
)
"""The rules below in the compiled core (``native/python/src/limits.rs``, ``LimitRules``):
one call per trace, the names and thresholds given once here."""


def apply_limits(trace: Trace, drafts: Sequence[_Draft]) -> None:
    """Make what the trace's limits left out visible on ``drafts`` and the synthesized calls
    after each (``follows``), in place: the cut length (``cut_length``), cut values dropped
    and flagged (``drop_cut_values``), and the counts of attributes and events lost recorded
    on the steps of the spans that lost them (``lost_attributes``; ``span.dropped_events``)."""
    _RULES.apply(trace.spans, drafts)


def lost_attributes(spans: Iterable[SpanRecord]) -> dict[str, int]:
    """Span id -> attributes lost, for the spans whose reported drops are a loss: every
    span reporting drops, but for an SDK that counts overwritten keys (``OVERWRITES_COUNTED``)
    only a span holding as many attributes as the most any span of its service
    (``service.name`` and ``telemetry.sdk.language`` of its resource) holds."""
    return _RULES.lost_attributes(spans)


def cut_length(drafts: Iterable[_Draft]) -> int | None:
    """The trace's cut length (see the module docstring), or ``None`` when it shows none.

    Read by the core (``native/python/src/limits.rs``; synthesized drafts and drafts without
    a span left out) from the values, as recorded, of the attributes the drafts' rules name
    as sources of their fields (``CompiledRule.source_scan``: attributes, flattened
    attributes under a prefix and span events' attributes; log records, bodies and log-based
    events, are left out: the span limits do not cut them): a limit cuts attribute values,
    and these are the ones the mapping reads (decoders convert values lazily: it converts
    none that no rule asks for); a cut JSON value its parser could not read (the AI SDK's
    prompt, cut mid-way) is in no field, yet shows the cut."""
    return native_cut_length(drafts, MIN_CUT_VALUES, MIN_CUT_LENGTH)


def drop_cut_values(drafts: Iterable[_Draft], length: int) -> None:
    """Drop every content value exactly ``length`` long (code points) from ``drafts`` (in
    place): the value becomes ``None`` where it sits, in ``dict`` values, ``list``s and
    ``tuple``s (a message keeps its role and tool calls, an arguments object its other keys,
    so a file edit's content or a command read from a cut value is none; a new container,
    a plain ``dict`` or a ``list``, only where one changed), the field is flagged redacted
    and the draft records ``values_cut_at``; a content attribute holding one is removed.
    Arguments that no longer parse stay as their text (``arguments_raw``), flagged: kept for
    the scans that look for what a call did (a ``curl`` in the part that survived is a
    network command seen), flagged so that nothing reads it as the call's whole input."""
    _RULES.drop_cut_values(drafts, length)
