"""The compiled core's rule table (``_compile.rule_table``) selects the rule of each span as
the conventions' match conditions say: every condition kind, priority order, child
conditions, values that are not plain strings, and regexes run by ``safe_regex`` (its
errors reach the caller)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest

from otel_oracles import safe_regex
from otel_oracles.assemble import build_trace
from otel_oracles.mapping._compile import rule_table
from otel_oracles.mapping.config import Rule
from otel_oracles.model.span import SpanRecord

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


def _rules(*matches: dict[str, Any]) -> list[Rule]:
    return [
        Rule.model_validate({"id": f"r{i}", "step": "other", "match": m})
        for i, m in enumerate(matches)
    ]


def _span(span_id: str = "a1", parent: str = "", name: str = "op", **fields: Any) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE_ID, span_id=span_id, parent_span_id=parent, name=name, **fields
    )


def _select(rules: list[Rule], *spans: SpanRecord) -> list[int]:
    trace = build_trace(TRACE_ID, list(spans))
    by_id = dict(
        zip(
            (s.span_id for s in trace.spans),
            rule_table(rules).select(trace.spans, trace.children),
            strict=True,
        )
    )
    return [by_id[s.span_id] for s in spans]


@pytest.mark.parametrize(
    ("condition", "fields", "expected"),
    [
        ({"attr": "k", "equals": "chat"}, {"attributes": {"k": "chat"}}, 0),
        ({"attr": "k", "equals": ["a", "chat"]}, {"attributes": {"k": "chat"}}, 0),
        ({"attr": "k", "equals": "chat"}, {"attributes": {"k": ["chat"]}}, -1),
        ({"attr": "k", "equals": 1}, {"attributes": {"k": 1}}, 0),
        ({"attr": "k", "equals": 1}, {"attributes": {"k": True}}, 0),  # Python's ==
        ({"attr": "k", "equals": [1, "x"]}, {"attributes": {"k": "x"}}, 0),
        ({"attr": "k", "equals": 1}, {"attributes": {}}, -1),
        ({"attr": "k", "exists": True}, {"attributes": {"k": None}}, 0),
        ({"attr": "k", "exists": False}, {"attributes": {"k": None}}, -1),
        ({"attr": "k", "exists": False}, {}, 0),
        ({"attr": "k", "regex": "^ai\\."}, {"attributes": {"k": "ai.generate"}}, 0),
        ({"attr": "k", "regex": "^ai\\."}, {"attributes": {"k": 3}}, -1),
        ({"span_name": "(?i)^CHAT "}, {"name": "chat gpt-4o"}, 0),
        ({"span_name": "^chat (?=gpt)"}, {"name": "chat claude"}, -1),
        ({"scope": "openai\\.agents"}, {"scope_name": "openai.agents"}, 0),
        ({"scope": "openai\\.agents"}, {"scope_name": "langchain"}, -1),
        ({"kind": ["client", "Server"]}, {"kind": 2}, 0),
        ({"kind": ["client"]}, {"kind": 1}, -1),
        ({"status": "error"}, {"status_code": 2}, 0),
        ({"status": "ok"}, {"status_code": 2}, -1),
    ],
)
def test_each_condition_kind(
    condition: dict[str, Any], fields: dict[str, Any], expected: int
) -> None:
    assert _select(_rules({"all": [condition]}), _span(**fields)) == [expected]


def test_first_matching_rule_in_priority_order_and_any() -> None:
    rules = _rules(
        {
            "all": [{"attr": "op", "equals": "chat"}],
            "any": [{"kind": ["client"]}, {"status": "error"}],
        },
        {"all": [{"attr": "op", "exists": True}]},
    )
    chat = {"op": "chat"}
    assert _select(rules, _span(attributes=chat, kind=3)) == [0]
    assert _select(rules, _span(attributes=chat, status_code=2)) == [0]
    assert _select(rules, _span(attributes=chat, kind=1)) == [1]
    assert _select(rules, _span(attributes={"other": 1})) == [-1]


def test_child_conditions_look_at_direct_children_only() -> None:
    rules = _rules(
        {
            "all": [
                {"attr": "op", "equals": "tool"},
                {"child": {"all": [{"attr": "op", "equals": "agent"}]}},
            ]
        },
        {"all": [{"attr": "op", "exists": True}]},
    )
    tool = _span("a1", "", attributes={"op": "tool"})
    agent = _span("a2", "a1", attributes={"op": "agent"})
    assert _select(rules, tool, agent) == [0, 1]
    # The agent is the tool's grandchild: no direct child matches.
    middle = _span("a2", "a1")
    deep = _span("a3", "a2", attributes={"op": "agent"})
    assert _select(rules, tool, middle, deep) == [1, -1, 1]


def test_attribute_mappings_other_than_dicts_and_odd_strings() -> None:
    rules = _rules({"all": [{"attr": "k", "equals": "v"}]}, {"all": [{"span_name": "x"}]})

    class Lazy(Mapping[str, Any]):
        def __init__(self, data: dict[str, Any]) -> None:
            self.data = data

        def __getitem__(self, key: str) -> Any:
            return self.data[key]

        def __iter__(self) -> Any:
            return iter(self.data)

        def __len__(self) -> int:
            return len(self.data)

    assert _select(rules, _span(attributes=Lazy({"k": "v"}))) == [0]
    assert _select(rules, _span(attributes=MappingProxyType({"k": "v"}))) == [0]
    # A span name with a lone surrogate is no UTF-8: the regex still runs on it in Python.
    assert _select(rules, _span(name="x\udc80")) == [1]
    assert _select(rules, _span(name="\udc80")) == [-1]


def test_a_regex_over_its_budget_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safe_regex, "BUDGET_S", 0.05)
    table = rule_table(_rules({"all": [{"span_name": "(a|aa)+c"}]}))
    # The name holds the literals every match needs ("a", "c"), so the core cannot rule a
    # match out and Python's engine runs, backtracking.
    trace = build_trace(TRACE_ID, [_span(name="a" * 40 + "bc")])
    with pytest.raises(safe_regex.RegexBudgetExceeded):
        table.select(trace.spans, trace.children)
