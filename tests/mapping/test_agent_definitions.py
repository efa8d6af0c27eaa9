"""A ``create_agent`` span (GenAI semconv) records an agent being defined, not run: AutoGen
writes one per agent it constructs, each in a trace of its own. Such a trace is recognised
(no coverage gap) and is no subject for contracts, while the run's ``invoke_agent`` span stays
the agent step."""

from __future__ import annotations

from typing import Any

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import StepKind
from otel_oracles.pipeline import holds_agent_run

TRACE = "0" * 31 + "7"

# autogen-core 0.7.5's attributes on both spans.
AUTOGEN = {"gen_ai.system": "autogen", "gen_ai.agent.name": "support_agent"}


def _span(span_id: str, parent: str, name: str, **attrs: Any) -> SpanRecord:
    return SpanRecord(TRACE, span_id, parent, name, start_ns=1, end_ns=9, attributes=attrs)


def test_a_trace_of_agent_definitions_only_is_no_run() -> None:
    span = _span("a" * 16, "", "create_agent support_agent",
                 **{"gen_ai.operation.name": "create_agent", **AUTOGEN})  # fmt: skip
    t = map_trace(build_trace(TRACE, [span]), load_conventions())
    assert t.unmapped_spans == {}
    assert [s.kind for s in t.steps] == [StepKind.OTHER]
    assert t.steps[0].agent_name == "support_agent"
    assert not holds_agent_run(t)


def test_the_run_is_still_an_agent_step() -> None:
    spans = [
        _span("a" * 16, "", "invoke_agent support_agent",
              **{"gen_ai.operation.name": "invoke_agent", **AUTOGEN}),
        _span("b" * 16, "a" * 16, "create_agent helper",
              **{"gen_ai.operation.name": "create_agent", "gen_ai.agent.name": "helper"}),
    ]  # fmt: skip
    t = map_trace(build_trace(TRACE, spans), load_conventions())
    assert [s.agent_name for s in t.agents()] == ["support_agent"]
    assert holds_agent_run(t)
