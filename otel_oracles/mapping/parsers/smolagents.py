"""Calls recorded as bound arguments (``conventions/smolagents.yaml``, ``dspy.yaml``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otel_oracles.mapping.parsers._registry import Parser
from otel_oracles.mapping.parsers.scalars import (
    parse_json,
)


def parse_bound_call_arguments(values: Any) -> dict[str, Any] | None:
    """``attrs: [<call>, <parameters>]``: a bound call ``{"args": [...], "kwargs": {...}}``
    (JSON) whose positional arguments are named after the tool's declared parameters, in
    order (a ``{name: spec}`` mapping or a JSON schema's ``properties``), so a tool called
    positionally (smolagents' ``final_answer("...")`` in generated code) has the same
    arguments as one called by keyword. Positional arguments beyond the declared ones stay
    under ``args``; no value unless the first attribute is such a call."""
    if not isinstance(values, dict) or not values:
        return None
    call, *rest = (parse_json(v) for v in values.values())
    if not isinstance(call, dict) or not ({"args", "kwargs"} & call.keys()):
        return None
    kwargs = call["kwargs"] if isinstance(call.get("kwargs"), dict) else {}
    args = call["args"] if isinstance(call.get("args"), list) else []
    declared = rest[0] if rest and isinstance(rest[0], dict) else {}
    if isinstance(declared.get("properties"), dict):
        declared = declared["properties"]
    names = [n for n in declared if n not in kwargs]
    bound = dict(zip(names, args, strict=False))
    extra = args[len(bound) :]
    return {**bound, **kwargs, **({"args": extra} if extra else {})}


PARSERS: Mapping[str, Parser] = {
    "bound_call_arguments": parse_bound_call_arguments,
}
"""Registered names (as written in YAML ``parse:``) -> parser."""
