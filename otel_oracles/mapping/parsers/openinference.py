"""OpenInference's flattened attributes (``conventions/openinference.yaml``; also ``dspy.yaml``
and ``haystack.yaml``): ``llm.*_messages.N.message.*`` and ``retrieval.documents.N.document.*``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles._native import parse_openinference_messages as parse_openinference_messages
from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.messages import indexed, unflatten
from otel_oracles.mapping.parsers.scalars import parse_json

# ``openinference_messages`` (``llm.{input,output}_messages.N.message.*``, the prefix already
# stripped) is the compiled core's (native/core/src/parsers/openinference.rs, bound in
# native/python/src/parsers.rs): the keys unflattened and their indexed levels read in
# numeric order as ``messages.unflatten`` and ``messages.indexed`` read them (without changing
# an attribute value a key descends through), a ``tool`` message as one
# ``tool_call_response`` (its ``content``, else the text of its ``contents``; the call id
# from ``tool_call_id`` or a content's ``message.tool_call_id``, which BeeAI writes there),
# others as their ``content`` or the text parts of their ``contents``, then every
# ``tool_calls.N.tool_call`` (arguments ``{}`` when absent: OpenInference omits empty
# values; hiding content removes the whole message list instead).


def parse_openinference_documents(flat: Any) -> list[dict[str, Any]] | None:
    """``retrieval.documents.N.document.{id,score,content,metadata}``."""
    if not isinstance(flat, Mapping) or not flat:
        return None
    docs = []
    for node in indexed(unflatten(flat)):
        doc = node.get("document") if isinstance(node, dict) else None
        if isinstance(doc, dict):
            docs.append({k: parse_json(v) if k == "metadata" else v for k, v in doc.items()})
    return docs or None


PARSERS: Mapping[str, Parser] = {
    "openinference_messages": parse_openinference_messages,
    "openinference_documents": parse_openinference_documents,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
