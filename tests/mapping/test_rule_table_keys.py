"""The compiled rule table lists a span's attribute keys by the key objects' identity
(``native/python/src/rules.rs`` ``SeenKeys``): a key ``str`` met before is not looked up in
Python again. Selection must not depend on it: fresh key objects per span, key objects freed
between spans (whose addresses a new object may take), more distinct keys than the map holds,
and keys that are not exact ``str``s all select as the keys' texts say."""

from __future__ import annotations

from typing import Any

from otel_oracles import safe_regex
from otel_oracles._native import RuleTable
from otel_oracles.assemble import build_trace
from otel_oracles.model.span import SpanRecord

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"

_Condition = tuple[str, Any, Any]


def _table() -> RuleTable:
    def search(index: int, text: str) -> bool:
        return safe_regex.search(["x"][index], text) is not None

    rules: list[tuple[list[_Condition], list[_Condition]]] = [
        ([("exists", 0, True)], []),  # has "agent.name"
        ([("equals", 1, ["chat"])], []),  # "op" == "chat"
    ]
    return RuleTable(rules, ["agent.name", "op"], [], ["x"], search)


def _fresh(text: str) -> str:
    """A new ``str`` object with this text (not the interned or cached one)."""
    return "".join(list(text))


def _select(table: RuleTable, attributes: dict[Any, Any]) -> int:
    span = SpanRecord(
        trace_id=TRACE_ID, span_id="a1", parent_span_id="", name="s", attributes=attributes
    )
    trace = build_trace(TRACE_ID, [span])
    (chosen,) = table.select(trace.spans, trace.children)
    return int(chosen)


def test_fresh_and_freed_key_objects_select_by_their_text() -> None:
    table = _table()
    # Each span's keys are new objects, dropped after the span: a freed key's address may
    # be reused by the next span's key of another text.
    for i in range(6000):
        if i % 3 == 0:
            expected, attributes = 0, {_fresh("agent.name"): "x"}
        elif i % 3 == 1:
            expected, attributes = 1, {_fresh("op"): "chat"}
        else:
            expected, attributes = -1, {_fresh(f"other.{i}"): "x", _fresh("op"): "embed"}
        assert _select(table, attributes) == expected, i
        del attributes


def test_keys_that_are_not_exact_strs_are_compared_by_value() -> None:
    class Key(str):
        pass

    table = _table()
    assert _select(table, {Key("op"): "chat"}) == 1
    assert _select(table, {Key("agent.name"): 1, "op": "chat"}) == 0
    assert _select(table, {Key("nothing"): 1}) == -1
