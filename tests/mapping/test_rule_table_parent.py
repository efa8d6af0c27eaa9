"""The compiled rule table's ``parent`` condition (``native/core/src/rules.rs``
``Condition::Parent``): it holds when the span's direct parent, found in the trace by
``parent_span_id``, satisfies the nested match. A root, or a span whose parent is not in the
trace, never satisfies it (the rule fails closed), and the parent is seen without a parent of
its own (a grandparent test never holds), as a child is seen without children. The table is
built here from its plain data (``_compile.rule_table``'s form: ``(tag, a, b)`` conditions,
keys and regexes by number)."""

from __future__ import annotations

from typing import Any

from otel_oracles import safe_regex
from otel_oracles._native import RuleTable
from otel_oracles.assemble import build_trace
from otel_oracles.model.span import SpanRecord

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
KIND = "openinference.span.kind"

_Condition = tuple[str, Any, Any]


def _table(*rules: tuple[list[_Condition], list[_Condition]]) -> RuleTable:
    regexes = ["^smolagents$"]

    def search(index: int, text: str) -> bool:
        return safe_regex.search(regexes[index], text) is not None

    return RuleTable(list(rules), [KIND], [], regexes, search)


def _span(span_id: str, parent: str, kind: str, scope: str = "smolagents") -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE_ID,
        span_id=span_id,
        parent_span_id=parent,
        name=f"{kind.lower()} {span_id}",
        scope_name=scope,
        attributes={KIND: kind},
    )


def _select(table: RuleTable, *spans: SpanRecord) -> dict[str, int]:
    trace = build_trace(TRACE_ID, list(spans))
    chosen = table.select(trace.spans, trace.children)
    return dict(zip((s.span_id for s in trace.spans), chosen, strict=True))


UNDER_AGENT: _Condition = ("parent", ([("equals", 0, ["AGENT"])], []), None)
IS_LLM: _Condition = ("equals", 0, ["LLM"])

SPANS = (
    _span("a1", "", "AGENT"),
    _span("b1", "a1", "CHAIN"),
    _span("c1", "b1", "LLM"),  # a loop step's model call, under its step span
    _span("d1", "a1", "LLM"),  # the forced final answer, right under the agent
    _span("e1", "ffffffffffffffff", "LLM"),  # its parent never arrived
    _span("f1", "", "LLM"),  # a root
)


def test_a_parent_condition_holds_for_a_span_right_under_a_matching_span() -> None:
    table = _table(([("scope", 0, None), IS_LLM, UNDER_AGENT], []))
    assert _select(table, *SPANS) == {"a1": -1, "b1": -1, "c1": -1, "d1": 0, "e1": -1, "f1": -1}


def test_the_parent_condition_is_tested_on_the_parent_not_on_the_span() -> None:
    # Listed first (a rule run's lead is never a condition on another span), in `any`.
    first = _table(([UNDER_AGENT, IS_LLM], []), ([], [UNDER_AGENT]))
    assert _select(first, *SPANS) == {"a1": -1, "b1": 1, "c1": -1, "d1": 0, "e1": -1, "f1": -1}


def test_the_parent_is_seen_without_a_parent_of_its_own() -> None:
    grandparent: _Condition = ("parent", ([UNDER_AGENT], []), None)
    table = _table(([IS_LLM, grandparent], []))
    assert set(_select(table, *SPANS).values()) == {-1}


def test_a_parent_missing_from_the_trace_and_a_parent_of_another_scope() -> None:
    other_scope = _span("x1", "", "AGENT", scope="langchain")
    under_smolagents_agent: _Condition = (
        "parent",
        ([("scope", 0, None), ("equals", 0, ["AGENT"])], []),
        None,
    )
    table = _table(([IS_LLM, under_smolagents_agent], []))
    chosen = _select(table, other_scope, _span("y1", "x1", "LLM"), *SPANS)
    assert chosen["y1"] == -1 and chosen["d1"] == 0 and chosen["e1"] == -1
