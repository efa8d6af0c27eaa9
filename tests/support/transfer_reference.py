"""A plain-Python reference for the core's ``transfer_spans`` (the ``WireSpan`` a body's full
records stand for), and the hand-over that turns stand-ins back into full records.

Why here: ``serve``'s receiving process never builds full records (the core decodes a body
for transfer straight to its compact entries, read as ``_native.WireSpan``s), so nothing in
the package makes stand-ins from records. The tests still need what those stand-ins should
hold, worked out the obvious way from the records a full decode gives, to compare the
core's entries against; and what a grading worker makes of them, by the route it takes.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from otel_oracles._native import RecordBuilder
from otel_oracles.decode._transfer import RequestBody, service_only
from otel_oracles.model.span import EMPTY, NO_ITEMS, SESSION_ATTRIBUTES, LinkRecord, SpanRecord
from otel_oracles.server._processes import _build_records, _message, _WholeBodies


@dataclass(frozen=True, slots=True)
class ExpectedWireSpan:
    """The fields a ``WireSpan`` should read as."""

    body: RequestBody
    index: int
    trace_id: str
    span_id: str
    parent_span_id: str
    end_ns: int
    resource: Mapping[str, Any]
    scope_name: str
    start_ns: int
    links: list[LinkRecord]
    attributes: Mapping[str, Any]
    flags: int


def spans_for_transfer(spans: list[SpanRecord], body: RequestBody) -> list[ExpectedWireSpan]:
    """What the stand-ins of the records a body decoded to hold (positions = list order)."""
    return [
        ExpectedWireSpan(
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


def handed_over(spans: Sequence[Any], logs: Sequence[Any] = ()) -> tuple[list[Any], list[Any]]:
    """The records a grading worker builds for stand-ins, by serve's route: the receiving
    process's message (``_processes._message``: references into the bodies' parts), pickled,
    unpickled and built as a worker does (``_build_records``)."""
    msg = ("grade", [(0, "t", list(spans), list(logs), "complete", None)])
    _, items, parts = pickle.loads(_message(msg, lambda body: body.payload))
    ((_, _, built_spans, built_logs, _, _),) = _build_records(
        items, parts, RecordBuilder(), _WholeBodies()
    )
    return built_spans, built_logs


def _session_attributes(attributes: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``SESSION_ATTRIBUTES`` among ``attributes`` (a ``WireSpan`` keeps only these)."""
    found = {key: attributes[key] for key in SESSION_ATTRIBUTES if key in attributes}
    return found or EMPTY


def _bare_links(links: list[LinkRecord]) -> list[LinkRecord]:
    """Links without their attributes (which would keep views into the request alive)."""
    return [LinkRecord(ln.trace_id, ln.span_id) for ln in links] if links else NO_ITEMS
