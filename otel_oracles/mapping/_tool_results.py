"""A tool call's outcome from what the trace says beyond the span status.

Instrumentations disagree on where a tool failure shows: span status and ``exception`` events
(most), a status attribute of the tool's own (``gen_ai.tool.status`` in Strands), or only the
result the framework hands back to the model (``{"error": ...}`` objects, ``Error: ...``
strings from frameworks that catch the exception). And an empty result (``[]``, ``{}``,
``""``, ``No results found``) is a dependency that came back with nothing: a degraded answer
must be able to see it. The convention files declare the vocabulary (``tool_results``,
``tool_outcomes``); this module applies the union of their declarations to every tool step,
span-made or synthesized, so one rule covers every framework.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from otel_oracles import safe_regex
from otel_oracles._frozen import Frozen, set_field
from otel_oracles._native import RESULT_PATTERN_WINDOW, ResultRules
from otel_oracles._native import structured as structured
from otel_oracles._native import unwrap_block as unwrap_block
from otel_oracles.mapping.parsers.scalars import parse_json, parse_json_or_text, parse_string

if TYPE_CHECKING:
    from otel_oracles.mapping.config import ConventionFile

# The result rules are the compiled core's (native/python/src/results.rs), one call per tool
# result (``ToolResultRules.judge``), with the two readings of a result they rest on:
#
# - ``structured(result)``: a result recorded as the text of an object or array, decoded:
#   JSON, or the Python ``repr`` that instrumentations writing ``str(result)`` record (Agno's
#   and LangChain's tool spans: ``{'documents': [], ...}``), so an error-shaped or empty
#   result is seen whatever the serializer; a result that is one content block is that
#   block's value (``unwrap_block``), repeated until nothing changes. Anything else is
#   returned as it is.
# - ``unwrap_block(result)``: the value of a result that is exactly one content block:
#   Bedrock Converse ``toolResult`` content as OpenLLMetry's Bedrock instrumentation records
#   it (``[{"json": {...}}]`` / ``[{"text": "..."}]``), or an Anthropic / MCP text block
#   (``[{"type": "text", "text": "..."}]``). The tool said ``{"error": ...}`` or
#   ``{"documents": []}``, not "a list of one item". Only blocks with exactly these keys are
#   unwrapped, so a tool's own one-item list (``[{"id": ..., "text": ...}]``) stays a list. A
#   bare text block (``{"type": "text", "text": "..."}``, in no list; LangChain's standard
#   block adds its own ``id``, as the langchain-mcp-adapters hand an MCP tool's text on) is
#   unwrapped too: the OpenAI Agents SDK records the one text output of an MCP tool as that
#   block. An MCP ``CallToolResult`` recorded whole (``{"content": [...],
#   "structuredContent": {...}, "isError": false}``, snake_case in the Python SDK's 2.x dump:
#   ADK's ``gen_ai.tool.call.result``, LlamaIndex's tool output from llama-index-tools-mcp)
#   is what it says: ``{"error": <content>}`` for an ``isError`` result, else its structured
#   content, else its one content block's value. Anything else is returned as it is.
#
# Plain ``dict``, ``list`` and ``str`` objects are read by the core directly; any other
# object through the same Python operations (``get``, ``keys()``, ``==``), so a subclass
# answers as it did. The regexes are run by ``safe_regex.match`` (its engine and time budget).

PATTERN_WINDOW: int = RESULT_PATTERN_WINDOW
"""Characters of a text result the declared patterns see (anchored at its start)."""

_ERROR_TYPE_RX = r"([A-Za-z_][\w.]*(?:Error|Exception))\b"
"""Compiled on its first message by ``safe_regex`` (its cache), not at import."""


# A plain frozen class, not a dataclass: compared by identity, never printed, and the methods
# ``dataclasses`` generates are compiled from source at every start (``otel_oracles._frozen``).
class ToolResultRules(Frozen):
    """The files' ``tool_results`` and ``tool_outcomes``, merged and compiled once."""

    __slots__ = ("core", "denied_outcomes", "outcomes")
    core: ResultRules
    """``error_keys`` and the ``error_pattern``, ``empty_pattern`` and
    ``denied_pattern`` of every file, applied by ``judge`` (none when not given)."""
    outcomes: tuple[tuple[str, str], ...]
    """(lower-cased value, ``ok`` | ``error``)."""
    denied_outcomes: frozenset[str]
    """Lower-cased outcome values that say an approval step refused the call."""

    def __init__(
        self,
        core: ResultRules | None = None,
        outcomes: tuple[tuple[str, str], ...] = (),
        denied_outcomes: frozenset[str] = frozenset(),
    ) -> None:
        set_field(self, "core", _result_rules((), (), (), ()) if core is None else core)
        set_field(self, "outcomes", outcomes)
        set_field(self, "denied_outcomes", denied_outcomes)

    def outcome(self, value: Any) -> str | None:
        """``ok`` / ``error`` for a tool's own status value, ``None`` when not declared.
        A number or boolean is compared as its JSON text (``500``, ``true``)."""
        text = outcome_text(value)
        if text is None:
            return None
        key = text.strip().lower()
        return next((meaning for v, meaning in self.outcomes if v == key), None)

    def reading(self, value: Any, undeclared_unknown: bool) -> str | None:
        """What an ``outcome`` field's value says: ``ok`` / ``error`` for a declared value;
        for any other, ``unknown`` when its source reads undeclared values so
        (``Source.undeclared``: a status attribute of the tool's own, whose ``timeout``,
        ``cancelled`` or ``500`` is no success the grader may assume), else ``None``
        (nothing said: free text inside a payload)."""
        meaning = self.outcome(value)
        if meaning is None and undeclared_unknown:
            return "unknown"
        return meaning

    def judge(self, result: Any, failed: bool) -> tuple[str, Any] | None:
        """What a tool step's result (not ``None``) says, decoded once (``structured``):
        ``("denied", text)`` for an approval step's refusal (``denied_pattern``: what the
        framework hands the model in place of a call it never ran; in an object, the first
        truthy ``error_keys`` value, as Google ADK's ``{"error": "This tool call is
        rejected."}``); unless the span already ``failed``, ``("error", message)`` for an
        error-shaped result (an object's first ``error_keys`` value that is not ``None``, as
        text, or a text an ``error_pattern`` matches); ``("empty", None)`` for an empty one
        (``degraded_answer``'s definition: ``""``, ``[]``, ``{}``, an object whose every list
        is empty, a blank text or one matching an ``empty_pattern``); else ``None``. Patterns
        see a text's first ``PATTERN_WINDOW`` characters, anchored at its start. The compiled
        core's (``native/python/src/results.rs``)."""
        return self.core.judge(result, failed)

    def is_denied_outcome(self, value: Any) -> bool:
        """Whether a tool's own outcome value says the call was refused (``denied``)."""
        text = outcome_text(value)
        return text is not None and text.strip().lower() in self.denied_outcomes


def outcome_text(value: Any) -> str | None:
    """A status value as the vocabulary compares it: a text as it is, a number or boolean as
    its JSON text, anything else (objects, lists) as no text."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return None


def message_result(value: Any) -> Any:
    """A tool result read from the model's messages: decoded from JSON text, and the value
    of its one content block when the instrumentation recorded the block list the client
    sent (``unwrap_block``), so the step's result is what the tool returned. A result the
    framework JSON-encoded once more as a string (PraisonAI hands the model ``json.dumps`` of
    the text a tool returned: ``"{\\"error\\": ...}"``) is that string, read again: else an
    error object or an empty search would be an opaque text, read as a plain success (the
    ``json`` parser of tool-span results does the same for Koog's and Quarkus LangChain4j's
    doubly encoded ``gen_ai.tool.call.result``)."""
    if isinstance(value, str) and value.lstrip().startswith('"'):
        inner = parse_json(value)
        if isinstance(inner, str):
            value = inner
    result = parse_json_or_text(value)
    unwrapped = unwrap_block(result)
    return result if unwrapped is result else parse_json_or_text(unwrapped)


def _result_rules(
    error_keys: Iterable[str],
    errors: Iterable[str],
    empties: Iterable[str],
    denials: Iterable[str],
) -> ResultRules:
    """The core's rules over the patterns' texts: ``safe_regex.match`` compiles a pattern
    on its first result (its cache keeps it), so a run whose tool results never reach a
    pattern compiles none. Their syntax was checked when the files were validated
    (``config._check_regex``)."""
    return ResultRules(
        list(error_keys),
        list(errors),
        list(empties),
        list(denials),
        safe_regex.match,
        parse_string,
    )


def tool_result_facts(files: Iterable[ConventionFile]) -> list[Any]:
    """The files' ``tool_results`` / ``tool_outcomes`` merged, as plain data JSON can hold
    (a compiled set's blueprint keeps it: ``_compile.set_facts``): the error keys, the
    error, empty and denied patterns (first-seen order, no repeats), the denied outcomes
    (sorted) and the outcome values with their meaning (the highest-priority file wins a
    value two files define)."""
    error_keys: dict[str, None] = {}
    errors: dict[str, None] = {}
    empties: dict[str, None] = {}
    denials: dict[str, None] = {}
    denied_outcomes: set[str] = set()
    outcomes: dict[str, str] = {}
    for conv in files:
        declared = conv.tool_results
        error_keys.update(dict.fromkeys(declared.error_keys))
        if declared.error_pattern:
            errors[declared.error_pattern] = None
        if declared.empty_pattern:
            empties[declared.empty_pattern] = None
        if declared.denied_pattern:
            denials[declared.denied_pattern] = None
        denied_outcomes.update(v.strip().lower() for v in declared.denied_outcomes)
        for meaning, values in conv.tool_outcomes.items():
            for value in values:
                outcomes.setdefault(value.strip().lower(), meaning)
    return [
        list(error_keys),
        list(errors),
        list(empties),
        list(denials),
        sorted(denied_outcomes),
        [[value, meaning] for value, meaning in outcomes.items()],
    ]


def tool_result_rules(facts: Sequence[Any]) -> ToolResultRules:
    """The ``ToolResultRules`` of ``tool_result_facts``' data."""
    error_keys, errors, empties, denials, denied_outcomes, outcomes = facts
    return ToolResultRules(
        core=_result_rules(error_keys, errors, empties, denials),
        outcomes=tuple((value, meaning) for value, meaning in outcomes),
        denied_outcomes=frozenset(denied_outcomes),
    )


def error_type_of(message: str) -> str | None:
    """``SearchBackendError`` from ``Error: SearchBackendError: timeout`` (the first
    exception-looking name near the start), or ``None``."""
    m = safe_regex.search(_ERROR_TYPE_RX, message[:120])
    return m.group(1) if m else None
