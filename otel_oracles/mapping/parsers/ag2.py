"""AG2 Classic's own tool-execution results, as tracers that record them verbatim keep them
(``openinference-instrumentation-ag2``, ``conventions/ag2.yaml``, rule ``openinference_tool``).

AG2 Classic (the ``autogen`` package of AG2 0.x) runs a requested function in
``ConversableAgent.execute_function``, which never raises: it returns the pair
``(is_exec_success, {"name": ..., "role": "function", "content": ...})``, whose ``content``
is the function's return value made text with ``str()`` (a Python repr for a dict), or, when
the function raised, AG2's ``Error: <message>`` text. OpenInference's AG2 instrumentor writes
that pair as the TOOL span's ``output.value`` (a JSON array). Read as a whole, the result
would be the pair, whose documents or emptiness no check can see; this reader hands back the
function's own value, and a failure as ``{"error": <text>}``, since the text alone does not
say that the call failed where no error pattern matches it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.python_literals import parse_python_literal
from otel_oracles.mapping.parsers.scalars import parse_json_or_text, parse_string


def parse_ag2_function_result(value: Any) -> Any:
    """The function's value from an ``execute_function`` pair (already parsed from JSON):
    the ``content`` read back (JSON, or the Python repr ``str()`` made), ``{"error": text}``
    when the pair says the execution failed; ``None`` for anything that is not such a pair
    (so the next source is tried) or a pair without content."""
    if not isinstance(value, list) or len(value) != 2 or not isinstance(value[0], bool):
        return None
    succeeded, message = value
    if not isinstance(message, Mapping) or "content" not in message:
        return None
    content = message["content"]
    if content is None:
        return None
    if not succeeded:
        return {"error": parse_string(content)}
    return parse_python_literal(parse_json_or_text(content))


PARSERS: Mapping[str, Parser] = {
    "ag2_function_result": parse_ag2_function_result,
}
