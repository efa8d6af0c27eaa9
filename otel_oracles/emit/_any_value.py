"""``AnyValue`` exactly as the SDK's OTLP encoder builds it from a Python attribute value.

The emitter's own records are encoded by the native core (``otel_oracles._native``); this
is for the places that build SDK protobuf messages themselves (``inprocess``, which hands
captured records to the decoder as OTLP).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import (
    AnyValue,
    ArrayValue,
    KeyValue,
    KeyValueList,
)


def any_value(value: Any) -> AnyValue:
    """``AnyValue`` exactly as the SDK's OTLP encoder builds it for an attribute value."""
    if value is None:
        return AnyValue()
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, str):
        return AnyValue(string_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, Sequence):
        return AnyValue(array_value=ArrayValue(values=[any_value(v) for v in value]))
    if isinstance(value, Mapping):
        return AnyValue(
            kvlist_value=KeyValueList(
                values=[KeyValue(key=str(k), value=any_value(v)) for k, v in value.items()]
            )
        )
    raise TypeError(f"invalid attribute value type {type(value).__name__}")
