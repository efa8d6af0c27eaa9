"""``bound_call_arguments``: a bound call ``{"args", "kwargs"}`` whose positional arguments
are named after the tool's declared parameters, so ``final_answer("x")`` and
``final_answer(answer="x")`` map to the same arguments."""

from __future__ import annotations

import json

from otel_oracles.mapping.parsers import builtin_parsers

PARSERS = builtin_parsers()


bind = PARSERS["bound_call_arguments"]
SMOL_PARAMS = json.dumps({"answer": {"type": "any"}, "note": {"type": "string"}})


def _call(*args: object, **kwargs: object) -> str:
    return json.dumps({"args": list(args), "sanitize_inputs_outputs": True, "kwargs": kwargs})


def test_positional_arguments_take_the_declared_names_in_order() -> None:
    values = {"input.value": _call("30 days [doc-42]."), "tool.parameters": SMOL_PARAMS}
    assert bind(values) == {"answer": "30 days [doc-42]."}


def test_keyword_and_positional_calls_give_the_same_arguments() -> None:
    by_keyword = bind({"input.value": _call(answer="x"), "tool.parameters": SMOL_PARAMS})
    assert by_keyword == bind({"input.value": _call("x"), "tool.parameters": SMOL_PARAMS})
    mixed = bind({"input.value": _call("x", note="n"), "tool.parameters": SMOL_PARAMS})
    assert mixed == {"answer": "x", "note": "n"}


def test_json_schema_properties_name_the_parameters() -> None:
    schema = json.dumps({"properties": {"query": {"type": "string"}}, "required": ["query"]})
    assert bind({"input.value": _call("refunds"), "p": schema}) == {"query": "refunds"}


def test_undeclared_positional_arguments_stay_under_args() -> None:
    assert bind({"input.value": _call("a", "b")}) == {"args": ["a", "b"]}
    one_param = json.dumps({"answer": {}})
    assert bind({"input.value": _call("a", "b"), "p": one_param}) == {"answer": "a", "args": ["b"]}


def test_anything_but_a_bound_call_is_no_value() -> None:
    assert bind({"input.value": "__REDACTED__", "tool.parameters": SMOL_PARAMS}) is None
    assert bind({"input.value": json.dumps({"query": "q"})}) is None
    assert bind({}) is None
    assert bind("not a dict") is None
