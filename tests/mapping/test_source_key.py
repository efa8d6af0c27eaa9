"""A source's ``key:`` picks one value out of the object its parsers produced (the target
agent in a delegation tool's JSON arguments); anything else is no value, so the next source
is tried, and a hidden (redacted) payload yields none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from otel_oracles.assemble._tree import build_trace
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.span import SpanRecord
from otel_oracles.model.step import Step

TRACE = "0" * 31 + "9"
RULES = """
name: keyed
priority: 50
rules:
  - id: delegate
    step: handoff
    match: {all: [{attr: kind, equals: delegate}]}
    fields:
      to_agent:
        - {attr: input.value, parse: json, key: coworker}
        - {attr: fallback.agent}
"""


def _handoff(tmp_path: Path, **attrs: Any) -> Step:
    (tmp_path / "keyed.yaml").write_text(RULES)
    span = SpanRecord(TRACE, "a" * 16, "", "delegate", start_ns=1, end_ns=2,
                      attributes={"kind": "delegate", **attrs})  # fmt: skip
    trajectory = map_trace(build_trace(TRACE, [span]), load_conventions([tmp_path]))
    (step,) = trajectory.handoffs()
    return step


def test_key_reads_one_value_of_the_parsed_object(tmp_path: Path) -> None:
    step = _handoff(tmp_path, **{"input.value": '{"task": "t", "coworker": "research_agent"}'})
    assert step.to_agent == "research_agent"


def test_missing_key_or_non_object_falls_through_to_the_next_source(tmp_path: Path) -> None:
    assert (
        _handoff(tmp_path, **{"input.value": '{"task": "t"}', "fallback.agent": "b"}).to_agent
        == "b"
    )
    assert _handoff(tmp_path, **{"input.value": "plain text"}).to_agent is None


def test_redacted_payload_yields_no_value(tmp_path: Path) -> None:
    assert _handoff(tmp_path, **{"input.value": "__REDACTED__"}).to_agent is None


ENCODED = """
name: encoded
priority: 60
rules:
  - id: tool
    step: tool_call
    match: {all: [{attr: kind, equals: tool}]}
    fields:
      tool: {attr: tool.name}
      result: {attr: out, parse: json}
"""


def _tool_result(tmp_path: Path, out: str) -> Step:
    (tmp_path / "encoded.yaml").write_text(ENCODED)
    span = SpanRecord(TRACE, "b" * 16, "", "tool", start_ns=1, end_ns=2,
                      attributes={"kind": "tool", "tool.name": "t", "out": out})  # fmt: skip
    (step,) = map_trace(build_trace(TRACE, [span]), load_conventions([tmp_path])).tool_calls()
    return step


def test_placeholder_unwrapped_by_a_parser_is_redaction(tmp_path: Path) -> None:
    """A JSON-encoded placeholder (MLflow writes every attribute as JSON) hides the value
    as the bare one does: no value, and a content field is flagged redacted."""
    assert _handoff(tmp_path, **{"input.value": '"[REDACTED]"'}).to_agent is None
    hidden = _tool_result(tmp_path, '"[REDACTED]"')
    assert hidden.result is None and "result" in hidden.redacted
    shown = _tool_result(tmp_path, '"shown"')
    assert shown.result == "shown" and "result" not in shown.redacted
