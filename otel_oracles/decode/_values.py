"""Lazy attribute mappings and ``AnyValue`` conversion for both wire formats.

Decoding cost is dominated by creating Python objects, one per attribute and value; most
attributes of most spans are never read by a mapping rule or an oracle. So a decoded span
carries its attributes still in wire form and converts a value only when somebody reads it.
Both mappings are read-only ``Mapping[str, Any]``; ``dict(m)`` materializes one, and pickling
one (e.g. to hand a trace to a worker process) turns it into a plain ``dict``.

A malformed JSON value (``{"intValue": "abc"}``, a bare number where an ``AnyValue`` object
belongs, an unknown variant) reads as ``None`` and is reported once through the batch's
problem callback, naming the attribute; decoding never raises for it.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from otel_oracles.decode.config import MAX_ANY_VALUE_DEPTH

Report = Callable[[str], None]
Where = tuple[str, int, str]


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


# -- OTLP/JSON -----------------------------------------------------------------------------


class BadValue(ValueError):
    """A JSON ``AnyValue`` that does not follow the OTLP/JSON encoding."""


def _int64(x: Any) -> int:
    # OTLP/JSON writes 64-bit integers as decimal strings; numbers are tolerated.
    if type(x) is int:
        return x
    if type(x) is str:
        try:
            return int(x, 10)
        except ValueError:
            raise BadValue(f"intValue must be a decimal integer, got {x!r}") from None
    if type(x) is float and x.is_integer():
        return int(x)
    raise BadValue(f"intValue must be a decimal integer, got {x!r}")


_SPECIAL_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _double(x: Any) -> float:
    if type(x) is float or type(x) is int:
        return float(x)
    if type(x) is str:
        special = _SPECIAL_DOUBLES.get(x)
        if special is not None:
            return special
        try:
            return float(x)
        except ValueError:
            pass
    raise BadValue(f"doubleValue must be a number, got {x!r}")


def _string(x: Any) -> str:
    if type(x) is not str:
        raise BadValue(f"stringValue must be a string, got {_show(x)}")
    return x


def _bool(x: Any) -> bool:
    if type(x) is not bool:
        raise BadValue(f"boolValue must be true or false, got {_show(x)}")
    return x


def _bytes(x: Any) -> bytes:
    if type(x) is not str:
        raise BadValue(f"bytesValue must be a base64 string, got {_show(x)}")
    try:
        return base64.b64decode(x, validate=True)
    except (binascii.Error, ValueError):
        try:  # some writers use the URL-safe alphabet
            return base64.urlsafe_b64decode(x)
        except (binascii.Error, ValueError):
            raise BadValue(f"bytesValue must be base64, got {_show(x)}") from None


def _values_list(x: Any, variant: str) -> list[Any]:
    if type(x) is not dict:
        raise BadValue(f"{variant} must be an object with a 'values' list, got {_show(x)}")
    values = x.get("values", [])
    if type(values) is not list:
        raise BadValue(f"{variant}.values must be a list, got {_show(values)}")
    return values


def _array(x: Any, depth: int) -> list[Any]:
    return [json_any(v, depth) for v in _values_list(x, "arrayValue")]


def _kvlist(x: Any, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in _values_list(x, "kvlistValue"):
        if type(kv) is not dict or type(kv.get("key")) is not str:
            raise BadValue(f"kvlistValue entries must be {{key, value}} objects, got {_show(kv)}")
        out[kv["key"]] = json_any(kv.get("value", {}), depth)
    return out


def too_deep_value() -> BadValue:
    """The problem for an ``AnyValue`` nested past ``MAX_ANY_VALUE_DEPTH`` (both JSON paths)."""
    return BadValue(f"AnyValue nests more than {MAX_ANY_VALUE_DEPTH} arrays/kvlists deep")


_VARIANTS: dict[str, Callable[[Any], Any]] = {
    "stringValue": _string,
    "boolValue": _bool,
    "intValue": _int64,
    "doubleValue": _double,
    "bytesValue": _bytes,
    "string_value": _string,
    "bool_value": _bool,
    "int_value": _int64,
    "double_value": _double,
    "bytes_value": _bytes,
}
_NESTED: dict[str, Callable[[Any, int], Any]] = {
    "arrayValue": _array,
    "kvlistValue": _kvlist,
    "array_value": _array,
    "kvlist_value": _kvlist,
}


def _show(x: Any, limit: int = 60) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_any(value: Any, depth: int = 0) -> Any:
    """Convert an OTLP/JSON ``AnyValue`` object; raise ``BadValue`` when it is malformed or
    nests past ``MAX_ANY_VALUE_DEPTH`` (``depth``: the arrays/kvlists around ``value``).

    Values are converted lazily, when a mapping rule or an oracle reads them, deep in the
    grader's stack: without the bound a value a few hundred levels deep (still within
    orjson's limit) raised ``RecursionError`` there, in the middle of grading."""
    if type(value) is not dict:
        raise BadValue(
            f"expected an AnyValue object like {{'stringValue': ...}}, got {_show(value)}"
        )
    if len(value) == 1:
        ((variant, x),) = value.items()
        convert = _VARIANTS.get(variant)
        if convert is not None:
            return convert(x)
        nested = _NESTED.get(variant)
        if nested is None:
            raise BadValue(f"unknown AnyValue variant {variant!r}")
        if depth >= MAX_ANY_VALUE_DEPTH:
            raise too_deep_value()
        return nested(x, depth + 1)
    if not value:
        return None
    raise BadValue(f"an AnyValue holds exactly one variant, got keys {sorted(value)}")


_MISSING: Any = object()


class LazyAttributes(Mapping[str, Any]):
    """Read-only view of an OTLP attribute list that indexes on first read and converts one
    value at a time: grading reads a few keys of each span, so the rest never become Python
    objects. Subclasses say how to index (``_build``) and convert (``_convert``) their wire
    representation. ``where`` = ``(prefix, index, suffix)`` names the list inside its request
    and is formatted only when a problem is reported; ``report`` receives each problem once.
    """

    __slots__ = ("_index", "_raw", "_report", "_where")

    def __init__(self, raw: list[Any], where: Where, report: Report | None) -> None:
        self._raw = raw
        self._index: dict[str, Any] | None = None
        self._where = where
        self._report = report

    def _problem(self, message: str) -> None:
        if self._report is not None:
            prefix, index, suffix = self._where
            self._report(f"{prefix}[{index}]{suffix}: {message}")

    def _build(self) -> dict[str, Any]:
        raise NotImplementedError

    def _convert(self, key: str, raw: Any) -> Any:
        raise NotImplementedError

    def __getitem__(self, key: str) -> Any:
        index = self._index if self._index is not None else self._build()
        return self._convert(key, index[key])

    def get(self, key: str, default: Any = None) -> Any:
        index = self._index if self._index is not None else self._build()
        raw = index.get(key, _MISSING)
        return default if raw is _MISSING else self._convert(key, raw)

    def __contains__(self, key: object) -> bool:
        index = self._index if self._index is not None else self._build()
        return key in index

    def __iter__(self) -> Iterator[str]:
        index = self._index if self._index is not None else self._build()
        return iter(list(index))

    def __len__(self) -> int:
        index = self._index if self._index is not None else self._build()
        return len(index)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self.items()),))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.items())!r})"


class JsonAttributes(LazyAttributes):
    """Lazy view of a plain (orjson-decoded) OTLP/JSON ``attributes`` list."""

    __slots__ = ()

    def _build(self) -> dict[str, Any]:
        raw = self._raw
        try:
            index = {kv["key"]: kv["value"] for kv in raw}
            if all(type(k) is str for k in index):
                self._index = index
                return index
        except (TypeError, KeyError):
            pass
        # Slow path: something in the list is malformed; keep the good entries.
        index = {}
        for i, kv in enumerate(raw):
            if type(kv) is not dict or type(kv.get("key")) is not str:
                self._problem(f"attributes[{i}]: expected {{key, value}}, got {_show(kv)}")
                continue
            index[kv["key"]] = kv.get("value", {})
        self._index = index
        return index

    def _convert(self, key: str, raw: Any) -> Any:
        if type(raw) is dict and len(raw) == 1:
            string = raw.get("stringValue")
            if type(string) is str:  # the common case, without the dispatch
                return string
        try:
            return json_any(raw)
        except BadValue as exc:
            self._problem(f"attribute {key!r}: {exc}; read as null")
            # Remember the verdict so the problem is reported once.
            index = self._index
            assert index is not None
            index[key] = {}
            return None


def json_attributes_dict(raw: list[Any], where: str, problems: list[str]) -> dict[str, Any]:
    """Eager conversion, for lists shared by many records (a resource's attributes): done
    once per request, so its problems are reported when the request is decoded."""
    out: dict[str, Any] = {}
    for i, kv in enumerate(raw):
        if type(kv) is not dict or type(kv.get("key")) is not str:
            problems.append(f"{where}.attributes[{i}]: expected {{key, value}}, got {_show(kv)}")
            continue
        try:
            out[kv["key"]] = json_any(kv.get("value", {}))
        except BadValue as exc:
            problems.append(f"{where}: attribute {kv['key']!r}: {exc}; read as null")
            out[kv["key"]] = None
    return out


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
