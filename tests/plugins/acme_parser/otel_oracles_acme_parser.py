"""Example parser plug-in: Acme Agents record a model call's messages as one transcript
string per span attribute, one message per line::

    user: What is the refund window?
    assistant: -> search_docs({"query": "refund window"}) id=call_1

A line ``<role>: <text>`` is a text part; ``<role>: -> <tool>(<JSON arguments>) id=<id>`` is
a tool call. Registered only through its entry point (``otel_oracles.parsers``);
otel-oracles never imports it by name.
"""

from __future__ import annotations

from typing import Any

from otel_oracles.mapping.parsers.messages import Message, text_part, tool_call_part


def parse_acme_transcript(value: Any) -> list[Message] | None:
    """The transcript as GenAI messages (consecutive lines of one role are one message);
    ``None`` for anything that is not such a transcript."""
    if not isinstance(value, str):
        return None
    messages: list[Message] = []
    for line in value.splitlines():
        role, sep, text = line.partition(": ")
        if not sep or not role.isidentifier():
            continue
        if text.startswith("-> "):
            name, _, rest = text[3:].partition("(")
            arguments, _, call_id = rest.rpartition(") id=")
            part = tool_call_part(call_id or None, name, arguments, True)
        else:
            part = text_part(text)
        if messages and messages[-1]["role"] == role:
            messages[-1]["parts"].append(part)
        else:
            messages.append({"role": role, "parts": [part]})
    return messages or None


def merge_transcripts(first: Any, second: Any) -> Any:
    """Not a parser: a parser takes one value."""
    return [first, second]
