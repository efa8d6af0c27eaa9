"""The ``parent`` rule condition as convention files write it (``mapping/config.py``
``Condition.parent``, compiled by ``_compile.rule_table`` for the core's
``Condition::Parent``) and the ``run_limit_call`` rule option that uses it for smolagents'
forced final answer: an LLM span right under the agent's span, outside the ``Step N`` spans
its loop's calls run in, is the framework asking for an answer past its step limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.assemble import build_trace
from otel_oracles.errors import ConventionError
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.mapping.config import Condition
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import StepKind
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parents[1] / "testdata" / "traces"
TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
KIND = "openinference.span.kind"

ACME = """\
name: acme
priority: 90
rules:
  - id: forced
    step: generation
    match:
      all:
        - {scope: '^acme$'}
        - {attr: acme.kind, equals: llm}
        - parent:
            all:
              - {attr: acme.kind, equals: agent}
    run_limit_call: acme asked for an answer
    fields:
      model: {const: m}
  - id: llm
    step: generation
    match:
      all:
        - {scope: '^acme$'}
        - {attr: acme.kind, equals: llm}
    fields:
      model: {const: m}
  - id: agent
    step: agent
    match:
      all:
        - {scope: '^acme$'}
        - {attr: acme.kind, equals: agent}
  - id: step
    step: none
    match:
      all:
        - {scope: '^acme$'}
        - {attr: acme.kind, equals: step}
"""


def _span(span_id: str, parent: str, kind: str, start: int) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACE_ID,
        span_id=span_id,
        parent_span_id=parent,
        name=f"{kind} {span_id}",
        scope_name="acme",
        start_ns=start,
        end_ns=start + 1,
        attributes={"acme.kind": kind},
    )


@pytest.mark.parametrize(
    "inner",
    [
        "{field: output_messages, regex: x}",
        "{child: {all: [{attr: a, exists: true}]}}",
        "{parent: {all: [{attr: a, exists: true}]}}",
    ],
)
def test_a_parent_is_seen_alone(inner: str, tmp_path: Path) -> None:
    """Inside ``parent`` only the parent span's own attributes, name, kind, scope and status
    can be tested: anything else would silently never hold, so the file is refused."""
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: bad\nrules:\n  - id: r\n    step: generation\n    match:\n      all:\n"
        f"        - parent: {{all: [{inner}]}}\n"
    )
    with pytest.raises(ConventionError, match="parent"):
        load_conventions([path])


def test_a_condition_has_one_subject() -> None:
    with pytest.raises(ValueError, match="exactly one of"):
        Condition.model_validate(
            {"parent": {"all": [{"attr": "k", "exists": True}]}, "attr": "a", "exists": True}
        )


def test_a_model_call_under_the_agent_span_is_marked_by_its_place(tmp_path: Path) -> None:
    (tmp_path / "acme.yaml").write_text(ACME)
    conventions = load_conventions([tmp_path / "acme.yaml"])
    spans = [
        _span("a0", "", "agent", 0),
        _span("s1", "a0", "step", 10),
        _span("l1", "s1", "llm", 11),  # a loop step's call
        _span("l2", "a0", "llm", 20),  # the forced answer
        _span("l3", "ffffffffffffffff", "llm", 30),  # its parent never arrived
    ]
    trajectory = map_trace(build_trace(TRACE_ID, spans), conventions)
    marks = {
        s.source.span_id: s.attributes.get("run_limit")
        for s in trajectory.steps
        if s.kind == StepKind.GENERATION and s.source is not None
    }
    assert marks == {"l1": None, "l2": "acme asked for an answer", "l3": None}


@pytest.mark.parametrize("content", [True, False], ids=["on", "off"])
def test_smolagents_forced_answer_is_the_runs_last_call_and_marked(content: bool) -> None:
    name = "q_turn_limit" + ("" if content else ".nocontent") + ".otlp.json"
    problems: list[object] = []
    [trace] = read_traces([str(TRACES / "smolagents-openinference" / name)], problems)
    assert problems == []
    steps = map_trace(trace, load_conventions()).steps
    calls = [s for s in steps if s.kind == StepKind.GENERATION]
    assert [bool(s.attributes.get("run_limit")) for s in calls] == [False] * 4 + [True]
    mark = calls[-1].attributes["run_limit"]
    # With content the prompt itself marks it (run_limit_prompts); without, its place.
    assert ("got stuck" in mark) == content
