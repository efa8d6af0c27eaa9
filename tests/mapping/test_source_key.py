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
