"""Lazy attribute mappings and ``AnyValue`` conversion for protobuf bodies.

Decoding cost is dominated by creating Python objects, one per attribute and value; most
attributes of most spans are never read by a mapping rule or an oracle. So a decoded span
carries its attributes still in wire form and converts a value only when somebody reads it.
The mapping is read-only ``Mapping[str, Any]``; ``dict(m)`` materializes one, and pickling
one (e.g. to hand a trace to a worker process) turns it into a plain ``dict``. (OTLP/JSON
bodies are decoded by the compiled core into plain dicts, see ``_json``.)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

# -- protobuf ------------------------------------------------------------------------------


def pb_any(value: Any) -> Any:
    """Convert an ``AnyValue`` message to the plain Python value it carries."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [pb_any(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: pb_any(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, which)


class PbAttributes(Mapping[str, Any]):
    """Read-only view of an upb ``map<string, AnyValue>`` (see ``_lean``); converts on read.

    Lookups never insert (upb's ``map[key]`` on a message map would), and values are not
    cached: scalars convert in well under a microsecond and a cache costs a dict per span.
    """

    __slots__ = ("_map",)

    def __init__(self, upb_map: Any) -> None:
        self._map = upb_map

    def __getitem__(self, key: str) -> Any:
        raw = self._map.get(key)
        if raw is None:
            raise KeyError(key)
        return pb_any(raw)

    def get(self, key: str, default: Any = None) -> Any:
        raw = self._map.get(key)
        return default if raw is None else pb_any(raw)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._map

    def __iter__(self) -> Iterator[str]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self.items()),))

    def __repr__(self) -> str:
        return f"PbAttributes({dict(self.items())!r})"


def detach(span: Any) -> None:
    """Make a span record own its attribute values, so it no longer keeps alive the
    protobuf request it was decoded from.

    Why: a ``PbAttributes`` view references its whole parsed request (upb frees a request's
    memory only when nothing points into it). Offline assembly calls this for the spans of
    traces that stay open for long, so one long-running trace does not pin every request it
    has a span in. JSON records own their data already and are left alone.
    """
    if type(span.attributes) is PbAttributes:
        span.attributes = dict(span.attributes.items())
    if type(span.resource) is PbAttributes:
        span.resource = dict(span.resource.items())
    for event in span.events:
        if type(event.attributes) is PbAttributes:
            event.attributes = dict(event.attributes.items())
    for link in span.links:
        if type(link.attributes) is PbAttributes:
            link.attributes = dict(link.attributes.items())
