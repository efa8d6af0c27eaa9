"""A plain-Python reference for the core's ``transfer_spans``: the ``WireSpan``s a body's full
records stand for.

Why here: ``serve``'s receiving process never builds full records (the core decodes a body
for transfer straight to its compact entries), so nothing in the package makes ``WireSpan``s
from records. The tests still need what those stand-ins should hold, worked out the obvious
way from the records a full decode gives, to compare the core's entries against.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.decode._transfer import RequestBody, WireSpan, service_only
from otel_oracles.model.span import EMPTY, NO_ITEMS, SESSION_ATTRIBUTES, LinkRecord, SpanRecord


def spans_for_transfer(spans: list[SpanRecord], body: RequestBody) -> list[WireSpan]:
    """``WireSpan``s for the records a body decoded to (positions = list order)."""
    return [
        WireSpan(
            body,
            i,
            s.trace_id,
            s.span_id,
            s.parent_span_id,
            s.end_ns,
            service_only(s.resource),
            s.scope_name,
            s.start_ns,
            _bare_links(s.links),
            _session_attributes(s.attributes),
            s.flags,
        )
        for i, s in enumerate(spans)
    ]


def _session_attributes(attributes: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``SESSION_ATTRIBUTES`` among ``attributes`` (a ``WireSpan`` keeps only these)."""
    found = {key: attributes[key] for key in SESSION_ATTRIBUTES if key in attributes}
    return found or EMPTY


def _bare_links(links: list[LinkRecord]) -> list[LinkRecord]:
    """Links without their attributes (which would keep views into the request alive)."""
    return [LinkRecord(ln.trace_id, ln.span_id) for ln in links] if links else NO_ITEMS
