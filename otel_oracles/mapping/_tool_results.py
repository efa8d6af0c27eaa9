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

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from otel_oracles import safe_regex
from otel_oracles.mapping.config import ConventionFile
from otel_oracles.mapping.parsers.python_literals import parse_python_literal
from otel_oracles.mapping.parsers.scalars import parse_json, parse_json_or_text, parse_string

PATTERN_WINDOW = 512
"""Characters of a text result the declared patterns see (anchored at its start)."""

_ERROR_TYPE_RX = safe_regex.compile_pattern(r"([A-Za-z_][\w.]*(?:Error|Exception))\b")


@dataclass(frozen=True, slots=True)
class ToolResultRules:
    """The files' ``tool_results`` and ``tool_outcomes``, merged and compiled once."""

    error_keys: tuple[str, ...] = ()
    error_patterns: tuple[safe_regex.Pattern, ...] = ()
    empty_patterns: tuple[safe_regex.Pattern, ...] = ()
    outcomes: tuple[tuple[str, str], ...] = ()
    """(lower-cased value, ``ok`` | ``error``)."""
    denied_patterns: tuple[safe_regex.Pattern, ...] = ()
    denied_outcomes: frozenset[str] = frozenset()
    """Lower-cased outcome values that say an approval step refused the call."""

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

    def error_in(self, result: Any) -> str | None:
        """The error a result carries (its message), or ``None``."""
        result = structured(result)
        if isinstance(result, dict):
            for key in self.error_keys:
                if result.get(key) is not None:
                    value = result[key]
                    return value if isinstance(value, str) else parse_string(value)
            return None
        if isinstance(result, str) and self.error_patterns:
            head = result[:PATTERN_WINDOW]
            if any(safe_regex.match(rx, head) for rx in self.error_patterns):
                return result
        return None

    def denial_in(self, result: Any) -> str | None:
        """The text of a result that is an approval step's refusal (``denied_pattern``: what
        the framework hands the model in place of a call it never ran), or ``None``."""
        if not self.denied_patterns:
            return None
        result = structured(result)
        if isinstance(result, dict):  # Google ADK: {"error": "This tool call is rejected."}
            result = next((result[k] for k in self.error_keys if result.get(k)), None)
        if isinstance(result, str):
            head = result[:PATTERN_WINDOW]
            if any(safe_regex.match(rx, head) for rx in self.denied_patterns):
                return result
        return None

    def is_denied_outcome(self, value: Any) -> bool:
        """Whether a tool's own outcome value says the call was refused (``denied``)."""
        text = outcome_text(value)
        return text is not None and text.strip().lower() in self.denied_outcomes

    def is_empty(self, result: Any) -> bool:
        """Structurally empty (``degraded_answer``'s definition: ``""``, ``[]``, ``{}``, an
        object whose every list is empty), or a text result matching a declared empty
        pattern. ``None`` is not captured, never empty."""
        result = structured(result)
        if result is None:
            return False
        if result in ("", [], {}):
            return True
        if isinstance(result, dict):
            # {"documents": [], "status": "..."}: every list it holds is empty.
            lists = [v for v in result.values() if isinstance(v, list)]
            return bool(lists) and not any(lists)
        if isinstance(result, str):
            head = result[:PATTERN_WINDOW]
            return not head.strip() or any(safe_regex.match(rx, head) for rx in self.empty_patterns)
        return False


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


def structured(result: Any) -> Any:
    """A result recorded as the text of an object or array, decoded: JSON, or the Python
    ``repr`` that instrumentations writing ``str(result)`` record (Agno's and LangChain's
    tool spans: ``{'documents': [], ...}``), so an error-shaped or empty result is seen
    whatever the serializer. A result that is one content block is that block's value
    (``unwrap_block``). Anything else is returned as it is."""
    if isinstance(result, str) and result.lstrip()[:1] in ("{", "["):
        result = parse_python_literal(parse_json(result))
    unwrapped = unwrap_block(result)
    return result if unwrapped is result else structured(unwrapped)


def message_result(value: Any) -> Any:
    """A tool result read from the model's messages: decoded from JSON text, and the value
    of its one content block when the instrumentation recorded the block list the client
    sent (``unwrap_block``), so the step's result is what the tool returned."""
    result = parse_json_or_text(value)
    unwrapped = unwrap_block(result)
    return result if unwrapped is result else parse_json_or_text(unwrapped)


def unwrap_block(result: Any) -> Any:
    """The value of a result that is exactly one content block: Bedrock Converse
    ``toolResult`` content as OpenLLMetry's Bedrock instrumentation records it
    (``[{"json": {...}}]`` / ``[{"text": "..."}]``), or an Anthropic / MCP text block
    (``[{"type": "text", "text": "..."}]``). The tool said ``{"error": ...}`` or
    ``{"documents": []}``, not "a list of one item". Only blocks with exactly these keys are
    unwrapped, so a tool's own one-item list (``[{"id": ..., "text": ...}]``) stays a list.
    A bare text block (``{"type": "text", "text": "..."}``, in no list) is unwrapped too: the
    OpenAI Agents SDK records the one text output of an MCP tool as that block, so an MCP
    tool's ``{"documents": []}`` or error text is seen through it. Anything else is returned
    as it is."""
    if is_text_block(result):
        return result["text"]
    call_result = _call_tool_result(result)
    if call_result is not None:
        return call_result
    if not isinstance(result, list) or len(result) != 1 or not isinstance(result[0], dict):
        return result
    block: dict[str, Any] = result[0]
    if block.keys() == {"json"}:
        return block["json"]
    text_block = block.keys() == {"text"} or is_text_block(block)
    if text_block and isinstance(block["text"], str):
        return block["text"]
    return result


_TEXT_BLOCK_KEYS = ({"type", "text"}, {"type", "text", "id"})
"""A text content block's keys: the MCP / Anthropic form, and LangChain's standard content
block, which adds its own ``id`` (``lc_...``; the langchain-mcp-adapters hand an MCP tool's
text on so)."""


def _call_tool_result(result: Any) -> Any:
    """What an MCP ``CallToolResult`` recorded whole says (``{"content": [...],
    "structuredContent": {...}, "isError": false}``, snake_case in the Python SDK's 2.x
    dump: ADK's ``gen_ai.tool.call.result``, LlamaIndex's tool output from
    llama-index-tools-mcp): ``{"error": <text>}`` for an ``isError`` result, else its
    structured content, else its one content block's value; ``None`` for anything else."""
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        return None
    failed = result.get("isError", result.get("is_error"))
    if not isinstance(failed, bool):
        return None
    content = unwrap_block(result["content"])
    if failed:
        return {"error": content}
    body = result.get("structuredContent", result.get("structured_content"))
    return body if isinstance(body, dict) else content


def is_text_block(block: Any) -> bool:
    """Exactly ``{"type": "text", "text": <str>}`` (LangChain's with its ``id`` too): a
    content block, not a tool's own object."""
    return (
        isinstance(block, dict)
        and block.keys() in _TEXT_BLOCK_KEYS
        and block["type"] == "text"
        and isinstance(block["text"], str)
    )


def tool_result_rules(files: Iterable[ConventionFile]) -> ToolResultRules:
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
    return ToolResultRules(
        error_keys=tuple(error_keys),
        error_patterns=tuple(safe_regex.compile_pattern(p) for p in errors),
        empty_patterns=tuple(safe_regex.compile_pattern(p) for p in empties),
        outcomes=tuple(outcomes.items()),
        denied_patterns=tuple(safe_regex.compile_pattern(p) for p in denials),
        denied_outcomes=frozenset(denied_outcomes),
    )


def error_type_of(message: str) -> str | None:
    """``SearchBackendError`` from ``Error: SearchBackendError: timeout`` (the first
    exception-looking name near the start), or ``None``."""
    m = safe_regex.search(_ERROR_TYPE_RX, message[:120])
    return m.group(1) if m else None
