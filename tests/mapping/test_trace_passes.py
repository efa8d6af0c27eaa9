"""The mapper's agent assignment and usage flags in the compiled core
(``native/python/src/passes.rs``) on the shapes the captured traces rarely hold: a parent
chain that loops (each draft takes the walk from where it starts), a delegation that scopes
the steps under it, a handoff without ``from_agent``, and nested model calls where a failed
attempt flags nothing."""

from __future__ import annotations

import copy
import sys
from typing import Any

from otel_oracles._native import assign_agents, flag_aggregated_usage
from otel_oracles.mapping import load_conventions
from otel_oracles.mapping._compile import CompiledRule, CompiledSet
from otel_oracles.mapping._mapper import Draft, _read_deferred, _trace_drafter
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import StepKind


def _span(span_id: str, parent: str) -> SpanRecord:
    return SpanRecord(
        trace_id="a" * 32, span_id=span_id, parent_span_id=parent, name=span_id, start_ns=1
    )


def _changed(rule: CompiledRule, **changes: Any) -> CompiledRule:
    """A copy of ``rule`` with ``changes`` (a plain slotted class: ``copy`` keeps its slots)."""
    copied = copy.copy(rule)
    for name, value in changes.items():
        setattr(copied, name, value)
    return copied


def _set() -> tuple[CompiledSet, CompiledRule]:
    compiled = load_conventions().compiled()
    rule = _changed(compiled.rules[0], deferred=-1, delegate_works_inside=False)
    return compiled, rule


def _run(drafts: list[Draft], compiled: CompiledSet) -> None:
    by_span = {d.span.span_id: d for d in drafts if d.span is not None}
    by_id = {d.span.span_id: d.span for d in drafts if d.span is not None}
    assign_agents(drafts, by_span, by_id, _read_deferred, compiled)


def test_a_parent_cycle_is_walked_from_each_draft() -> None:
    compiled, rule = _set()
    agent = Draft(kind="agent", span=_span("a1", "t1"), rule=rule)
    agent.fields["agent_name"] = "planner"
    tool = Draft(kind="tool_call", span=_span("t1", "a1"), rule=rule)
    _run([agent, tool], compiled)
    assert (agent.scope, "agent_name" in agent.fields) == ("", True)
    assert agent.fields["agent_name"] == "planner"
    assert (tool.scope, tool.fields.get("agent_name")) == ("a1", "planner")


def test_a_delegation_scopes_the_steps_under_it_and_a_handoff_gets_its_sender() -> None:
    compiled, rule = _set()
    delegating = _changed(rule, delegate_works_inside=True)
    agent = Draft(kind="agent", span=_span("a1", ""), rule=rule)
    agent.fields["agent_name"] = "router"
    delegation = Draft(kind="handoff", span=_span("h1", "a1"), rule=delegating)
    delegation.fields["to_agent"] = "billing"
    tool = Draft(kind="tool_call", span=_span("t1", "h1"), rule=rule)
    tool.fields["agent_name"] = "OpenAI Agent"  # a wrong name on the child span
    plain = Draft(kind="handoff", span=_span("h2", "a1"), rule=rule)
    unnamed = Draft(kind="agent", span=_span("a2", "a1"), rule=rule)
    inner = Draft(kind="generation", span=_span("g1", "a2"), rule=rule)
    _run([agent, delegation, tool, plain, unnamed, inner], compiled)
    assert (delegation.scope, delegation.fields["from_agent"]) == ("a1", "router")
    assert (tool.scope, tool.fields["agent_name"]) == ("h1", "billing")
    assert (plain.scope, plain.fields["from_agent"], plain.fields["agent_name"]) == (
        "a1",
        "router",
        "router",
    )
    # An agent without a name scopes its steps; the name comes from further up.
    assert (inner.scope, inner.fields["agent_name"]) == ("a2", "router")
    assert "agent_name" not in unnamed.fields


def test_a_model_call_with_model_calls_below_aggregates_and_a_failed_attempt_flags_none() -> None:
    _, rule = _set()
    outer = Draft(kind="generation", span=_span("g1", ""), rule=rule)
    agent = Draft(kind="agent", span=_span("a1", "g1"), rule=rule)
    middle = Draft(kind="generation", span=_span("g2", "a1"), rule=rule)
    failed = Draft(kind="generation", span=_span("g3", "g2"), rule=rule)
    failed.attributes["failed_attempt"] = True
    drafts = [outer, agent, middle, failed]
    by_span = {d.span.span_id: d for d in drafts if d.span is not None}
    by_id = {d.span.span_id: d.span for d in drafts if d.span is not None}
    flag_aggregated_usage(drafts, by_span, by_id)
    assert [d.attributes.get("usage_aggregated", False) for d in drafts] == [
        True,
        False,
        False,
        False,
    ]


def test_a_kind_equal_to_the_passes_kind_is_that_kind_whatever_object_holds_it() -> None:
    """The passes compare a draft's kind with theirs by identity first, then by text: a kind
    made at run time (no interned string) or a `StepKind` member reads as the same kind."""
    compiled, rule = _set()
    literal = "agent"
    made = "".join(["ag", "ent"])
    assert made == literal and made is not literal
    agent = Draft(kind=made, span=_span("a1", ""), rule=rule)
    agent.fields["agent_name"] = "planner"
    tool = Draft(kind=StepKind.TOOL_CALL, span=_span("t1", "a1"), rule=rule)
    other = Draft(kind="".join(["agen", "cy"]), span=_span("o1", "a1"), rule=rule)
    below = Draft(kind="tool_call", span=_span("t2", "o1"), rule=rule)
    _run([agent, tool, other, below], compiled)
    assert (tool.scope, tool.fields.get("agent_name")) == ("a1", "planner")
    # "agency" is no agent: the step under it is scoped by the agent further up.
    assert (below.scope, below.fields.get("agent_name")) == ("a1", "planner")


def test_a_scope_stored_in_a_drafts_memory_holds_the_new_one_and_releases_the_old() -> None:
    """``assign_agents`` stores a draft's scope in the draft's memory (``slots.rs``
    ``SlotLayout.set``), as ``setattr`` would: the new scope held once more, the one it
    replaces released; a draft of another class is set through its own ``__setattr__``."""
    compiled, rule = _set()
    _trace_drafter(compiled)  # the drafts' layout known, as when mapping

    class Watched(Draft):
        def __setattr__(self, name: str, value: object) -> None:
            if name == "scope":
                self.__dict__["scopes_set"] = self.__dict__.get("scopes_set", 0) + 1
            super().__setattr__(name, value)

    agent = Draft(kind="agent", span=_span("a1", ""), rule=rule)
    tool = Draft(kind="tool_call", span=_span("t1", "a1"), rule=rule)
    watched = Watched(kind="tool_call", span=_span("t2", "a1"), rule=rule)
    old = "".join(["scope ", "before"])  # an object no other holds
    tool.scope = old
    assert agent.span is not None
    new = agent.span.span_id
    old_count, new_count = sys.getrefcount(old), sys.getrefcount(new)
    _run([agent, tool, watched], compiled)
    assert tool.scope is new and watched.scope is new
    assert sys.getrefcount(old) == old_count - 1
    assert sys.getrefcount(new) == new_count + 2  # tool's scope and watched's
    assert watched.__dict__["scopes_set"] == 2  # its own ``__init__``'s, then the pass's
