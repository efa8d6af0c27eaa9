"""Wrong-typed or malformed attributes (instrumentations emit them) never crash mapping:
what cannot be read stays None."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from otel_oracles.grade.evidence import final_output
from otel_oracles.mapping import load_conventions, map_trace
from otel_oracles.model.result import InputProblem
from otel_oracles.pipeline import read_traces

TRACES = Path(__file__).resolve().parent.parent / "testdata" / "traces"
ODD_VALUES: list[Any] = [
    None, 0, -1, 3.5, True, "", "{", "[", "null", "[1, 2]", '{"parts": "x"}',
    '[{"role": "user", "parts": "not a list"}]', '[{"role": 1, "parts": [1, "a", null]}]',
    [1, "two", None], {"a": {"b": []}}, b"\x00\xff", ["tool_calls"], [{"parts": [{}]}],
    "ResponseFunctionToolCall(arguments=", "ResponseFunctionToolCall(name=1)",
]  # fmt: skip
SOURCES = ["pydantic-ai", "openai-agents-otel-v2", "openinference-openai", "vercel-ai-sdk-otel",
           "openai-v2-latest", "openllmetry-openai-legacy"]  # fmt: skip


@pytest.mark.parametrize("source", SOURCES)
def test_every_attribute_replaced_by_odd_values_still_maps(source: str) -> None:
    conventions = load_conventions()
    rng = random.Random(source)
    for path in sorted((TRACES / source).glob("*_happy.otlp.json*"))[:1] + sorted(
        (TRACES / source).glob("h_coding_agent.otlp.json*")
    ):
        for _ in range(15):
            problems: list[InputProblem] = []
            for trace in read_traces([str(path)], problems):
                for span in trace.spans:
                    odd = {k: rng.choice(ODD_VALUES) for k in span.attributes}
                    odd.update({k: v for k, v in span.attributes.items() if rng.random() < 0.3})
                    span.attributes = odd
                trajectory = map_trace(trace, conventions)
                final_output(trajectory)
                trajectory.token_usage()
                assert trajectory.span_count == len(trace.spans)
