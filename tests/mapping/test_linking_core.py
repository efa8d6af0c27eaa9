"""Tool-call linking in the compiled core (``native/python/src/linking.rs``) reads trace
content as Python reads it: a request's parts are the very objects of the model call's
output (a claim writes the call id into them), a mapping that is no plain ``dict`` answers
through its own ``get``, and a call id that cannot be a dict key (a list where a string
belongs) equals no step's id, so the request is linked by its tool's name instead."""

from __future__ import annotations

from typing import Any

import pytest

from otel_oracles._native import requested_calls
from otel_oracles.mapping import load_conventions
from otel_oracles.mapping._mapper import Draft, _link_tool_calls
from otel_oracles.model.span import SpanRecord


class _Part(dict[str, Any]):
    """A message part whose ``get`` answers differently from its items."""

    def get(self, key: str, default: Any = None) -> Any:
        return "tool_call" if key == "type" else super().get(key, default)


def _drafts(request: dict[str, Any], step_fields: dict[str, Any]) -> tuple[Draft, Draft]:
    compiled = load_conventions().compiled()
    rule = next(iter(compiled.rules))
    gen = Draft(kind="generation", span=None, rule=rule)
    gen.fields["output_messages"] = [{"role": "assistant", "parts": [request]}]
    step = Draft(kind="tool_call", span=None, rule=rule)
    step.fields.update(step_fields)
    return gen, step


def test_requested_calls_are_the_output_parts_read_through_their_own_get() -> None:
    asked = {"type": "tool_call", "name": "search", "id": "c1"}
    odd = _Part(type="text", name="lookup")  # its own ``get`` says it is a call
    rule = next(iter(load_conventions().compiled().rules))
    gen = Draft(kind="generation", span=None, rule=rule)
    gen.fields["output_messages"] = [
        {"role": "assistant", "parts": [asked, "not a part", {"type": "tool_call"}, odd]},
        {"role": "assistant", "parts": "not a list"},
    ]
    calls = requested_calls(gen)
    assert len(calls) == 2
    assert calls[0] is asked
    assert calls[1] is odd


def test_a_request_id_that_is_no_key_links_by_name() -> None:
    gen, step = _drafts({"type": "tool_call", "name": "search", "id": ["x"]}, {"tool": "search"})
    _link_tool_calls([gen, step], load_conventions().compiled())
    assert step.claimed
    assert step.fields["call_id"] == "['x']"
    assert gen.follows == []


def test_a_step_numbered_by_the_framework_gives_the_request_its_id() -> None:
    request: dict[str, Any] = {"type": "tool_call", "name": "search", "arguments": {"q": 1}}
    gen, step = _drafts(request, {"tool": "search", "call_id": "adk-1"})
    _link_tool_calls([gen, step], load_conventions().compiled())
    assert step.claimed
    assert request["id"] == "adk-1"  # written into the model call's own part
    assert step.fields["arguments"] == {"q": 1}


def test_a_request_no_step_ran_is_synthesized_where_the_rule_says_so() -> None:
    compiled = load_conventions().compiled()
    rule = next(r for r in compiled.rules if r.synthesize)
    span = SpanRecord(trace_id="t", span_id="s1", parent_span_id="", name="chat", end_ns=5)
    gen = Draft(kind="generation", span=span, rule=rule)
    gen.fields["output_messages"] = [
        {"role": "assistant", "parts": [{"type": "tool_call", "name": "search", "id": "c9"}]}
    ]
    other = Draft(kind="tool_call", span=None, rule=rule)
    other.fields["tool"] = "fetch"
    _link_tool_calls([gen, other], compiled)
    assert not other.claimed
    (made,) = gen.follows
    assert made.synthesized
    assert (made.fields["tool"], made.fields["call_id"]) == ("search", "c9")


class _Id(str):
    """A call id that is a ``str`` subclass: equal to the exact ``str`` of its text, as a
    ``dict`` finds it."""


@pytest.mark.parametrize("int_step_first", [True, False])
def test_call_ids_of_any_type_are_keyed_as_a_dict_keys_them(int_step_first: bool) -> None:
    # The core keys ids by their text while every one is an exact ``str``; an ``int`` id
    # or a ``str`` subclass must still find the step a ``dict`` would (met first or last).
    compiled = load_conventions().compiled()
    rule = next(iter(compiled.rules))
    gen = Draft(kind="generation", span=None, rule=rule)
    requests = [
        {"type": "tool_call", "name": "lookup", "id": _Id("c1"), "arguments": {"q": "c1"}},
        {"type": "tool_call", "name": "lookup", "id": 7, "arguments": {"q": 7}},
    ]
    gen.fields["output_messages"] = [{"role": "assistant", "parts": requests}]
    by_int = Draft(kind="tool_call", span=None, rule=rule)
    by_int.fields.update({"tool": "fetch", "call_id": 7})
    by_text = Draft(kind="tool_call", span=None, rule=rule)
    by_text.fields.update({"tool": "search", "call_id": "c1"})
    steps = [by_int, by_text] if int_step_first else [by_text, by_int]
    _link_tool_calls([gen, *steps], compiled)
    assert by_text.claimed and by_int.claimed  # by id: no step has the requests' tool name
    assert by_text.fields["arguments"] == {"q": "c1"}
    assert by_int.fields["arguments"] == {"q": 7}
    assert gen.follows == []
