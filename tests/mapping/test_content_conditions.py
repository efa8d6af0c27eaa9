"""A rule condition over message content (``{field: output_messages, regex: ...}``) sees the
content wherever the rule's own sources read it: a span attribute, a span event's attribute,
log records attached to the span (their attributes or bodies). A tracer that writes the reply
as events instead of an attribute (another version, another setting) must not silently turn
a rule that recognises a step by its content off (DESIGN section 8): DSPy's ReAct steps,
known only by the reply's text, would then read as model calls that called no tool.

Proven on real captures that put the reply in each of those places; a capture without
content never matches (nothing to read), and an attribute a trace itself sends under the
key the content is handed to the core under is not read as content."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_oracles.errors import ConventionError
from otel_oracles.mapping import load_conventions
from otel_oracles.mapping._loader import ConventionSet
from otel_oracles.model.result import InputProblem
from otel_oracles.model.span import Trace
from otel_oracles.pipeline import read_traces
from tests.oracles.test_contracts_on_real_traces import TRACES
from tests.support.unknown_spans import without_attributes

PROBE = """\
name: content-probe
priority: 100
rules:
  - id: answer
    step: generation
    match:
      all:
        - {field: output_messages, regex: 'refund within 30 days'}
    extends: otel-genai/generation
"""
"""A rule that knows the model call giving the a_happy scenario's answer by its reply."""

DETAILS = "the attribute of a gen_ai.client.inference.operation.details log record"
SOURCES = {
    "openai-v2-events": DETAILS,
    "google-genai-events": DETAILS,
    "openllmetry-openai-events": "the bodies of gen_ai.choice log records",
    "openllmetry-anthropic-events": "the bodies of gen_ai.choice log records",
    "openlit-openai": "the span attribute, and the attribute of its log record",
    "openlit-dspy": "the span attribute, and the attribute of its log record",
}


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> ConventionSet:
    folder = tmp_path_factory.mktemp("conventions")
    (folder / "probe.yaml").write_text(PROBE)
    return load_conventions([folder])


def _capture(source: str, stem: str) -> list[Path]:
    folder = TRACES / source
    return [
        p for p in (folder / f"{stem}.otlp.json", folder / f"{stem}.logs.otlp.jsonl") if p.exists()
    ]


def _traces(paths: list[Path]) -> list[Trace]:
    problems: list[InputProblem] = []
    traces = list(read_traces([str(p) for p in paths], problems))
    assert problems == [], problems
    return traces


def _answer_calls(conventions: ConventionSet, traces: list[Trace]) -> list[str]:
    compiled = conventions.compiled()
    return [
        span.name
        for trace in traces
        for span, rule in zip(trace.spans, compiled.select(trace), strict=True)
        if rule is not None and rule.file == "content-probe"
    ]


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_a_content_condition_reads_the_reply_where_the_rule_reads_it(
    source: str, probe: ConventionSet, tmp_path: Path
) -> None:
    """One model call gave the answer, whichever place the tracer wrote its reply to; with
    the span attribute left out (a tracer writing the reply as events only), still that one."""
    paths = _capture(source, "a_happy")
    assert len(_answer_calls(probe, _traces(paths))) == 1, SOURCES[source]
    spans_file = paths[0]
    derived = without_attributes(
        spans_file, tmp_path / "events-only.jsonl", {"gen_ai.output.messages"}
    )
    assert len(_answer_calls(probe, _traces([derived, *paths[1:]]))) == 1


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_a_content_condition_never_holds_without_content(source: str, probe: ConventionSet) -> None:
    assert _answer_calls(probe, _traces(_capture(source, "a_happy.nocontent"))) == []


def test_an_attribute_spelling_the_content_key_is_not_content(probe: ConventionSet) -> None:
    """Trace data is untrusted: a span that sends the key the content is handed to the core
    under (its own attribute, with the answer's text) is read by its real content only."""
    traces = _traces(_capture("openai-v2-events", "a_happy.nocontent"))
    compiled = probe.compiled()
    assert compiled.content_keys
    for trace in traces:
        for span in trace.spans:
            span.attributes = {
                **span.attributes,
                **dict.fromkeys(compiled.content_keys, "refund within 30 days"),
            }
    assert _answer_calls(probe, traces) == []


@pytest.mark.parametrize(
    ("condition", "problem"),
    [
        ("{field: output_messages, equals: x}", "needs regex"),
        ("{field: no_such_field, regex: x}", "unknown field"),
        ("{child: {all: [{field: output_messages, regex: x}]}}", "cannot test a field"),
        ("{field: documents, regex: x}", "no sources for"),
    ],
)
def test_a_content_condition_is_checked_when_loading(
    condition: str, problem: str, tmp_path: Path
) -> None:
    (tmp_path / "bad.yaml").write_text(
        PROBE.replace("{field: output_messages, regex: 'refund within 30 days'}", condition)
    )
    with pytest.raises(ConventionError, match=problem):
        load_conventions([tmp_path])


@pytest.mark.parametrize("source", ["openlit-openai", "openlit-dspy"])
def test_a_redacted_attribute_leaves_the_reply_to_its_log_records(
    source: str, probe: ConventionSet
) -> None:
    """A tracer that redacts the reply in the span attribute (a placeholder there) but keeps
    it in the log record still shows the reply: the condition reads the next source, as the
    field reader does, rather than testing the placeholder and missing the step."""
    traces = _traces(_capture(source, "a_happy"))
    redacted = 0
    for trace in traces:
        for span in trace.spans:
            if "gen_ai.output.messages" in span.attributes:
                span.attributes = {**span.attributes, "gen_ai.output.messages": "__REDACTED__"}
                redacted += 1
    assert redacted
    assert len(_answer_calls(probe, traces)) == 1
