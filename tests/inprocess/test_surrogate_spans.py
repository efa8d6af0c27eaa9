"""An application grading its own spans in-process hands the grader whatever ``str`` it put
on them, and the SDK accepts any: a name decoded with ``surrogateescape`` (bytes that are not
UTF-8, ``os.fsdecode``) holds a surrogate, which has no UTF-8 text. The SDK's OTLP encoder,
which the in-process path reads spans through, dropped such an attribute (logging a
traceback per attribute) and raised on a span name, status description or event name
holding one: the trace was counted in ``grading_errors`` and never graded. Each surrogate is
now written as its escape (``\\udcff``) before encoding, so the trace is graded and its
results show the text as the reports show it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from otel_oracles._native import escape_surrogates
from otel_oracles.emit import InMemoryEmitter
from otel_oracles.inprocess import GradingSpanProcessor, ProcessorLimits
from otel_oracles.model.result import RunReport
from otel_oracles.report import render_json

LONE = "\udcff"

CONTRACT = """\
id: surrogates
version: 1
invariants:
  - {type: tool_not_called, tool: "delete_*", name: no-delete}
  - {type: tool_errors, max: 0, name: no-tool-errors}
"""


def run_agent(tracer: Tracer) -> None:
    """An agent run whose names, attributes, event and status hold a surrogate."""
    root_attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": f"sup{LONE}"}
    tool_attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": f"delete_{LONE}",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.arguments": f'{{"path": "/tmp/{LONE}"}}',
        "error.type": f"Broken{LONE}",
        "tags": ("ok", f"bad{LONE}"),
    }
    root = tracer.start_as_current_span(f"invoke_agent sup{LONE}", attributes=root_attributes)
    step = tracer.start_as_current_span(f"execute_tool delete_{LONE}", attributes=tool_attributes)
    with root, step as tool:
        tool.add_event(f"retry{LONE}", {"why": f"timeout{LONE}"})
        tool.set_status(Status(StatusCode.ERROR, f"could not open /tmp/{LONE}"))


def test_spans_holding_surrogates_are_graded_with_their_text_escaped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT, encoding="utf-8")
    emitter = InMemoryEmitter()
    processor = GradingSpanProcessor(
        [contract], emitter=emitter, limits=ProcessorLimits(wait_millis=0)
    )
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = provider.get_tracer(f"agent{LONE}", attributes={"team": "support"})
    with caplog.at_level(logging.WARNING):
        run_agent(tracer)
        assert processor.force_flush(20_000)
    assert processor.stats().grading_errors == 0
    assert processor.stats().graded_traces == 1
    assert not [r for r in caplog.records if "encode" in r.getMessage()]  # nothing dropped
    ((verdict, trajectory),) = emitter.results
    assert verdict.agent_name == "sup\\udcff"
    messages = {r.name: r.message for r in verdict.results}
    assert not verdict.passed
    assert "delete_\\udcff" in messages["no-delete"]  # the tool was seen, named as shown
    assert "Broken\\udcff" in messages["no-tool-errors"]
    # Every writer can write it now (the reports' own tests cover each).
    assert "delete_\\\\udcff" in render_json(RunReport(verdicts=[verdict]))
    # The step as the reports name it, the rest of the span as recorded.
    (tool,) = [step for step in trajectory.steps if step.tool]
    assert tool.tool == "delete_\\udcff"
    # Arguments are JSON text: the escape is JSON's there, read back to the application's value.
    assert tool.arguments == {"path": f"/tmp/{LONE}"}
    assert tool.status == "error"
    assert tool.error_message == "could not open /tmp/\\udcff"
    provider.shutdown()


@pytest.mark.parametrize(
    "text",
    [
        "plain",
        "caf\u00e9 \u20ac \U0001f600",
        LONE,
        f"a{LONE}b",
        "\ud800",
        "\ud83d\ude00",  # a pair spelled as two surrogates stays two escapes
        f"\U0001f600{LONE}\u00e9\udfff",
        "",
    ],
)
def test_the_core_escaper_writes_what_backslashreplace_writes(text: str) -> None:
    """The in-process reader's escaper is the core's (``_native.escape_surrogates``, the one
    the reports and the emitter write with): each surrogate as ``backslashreplace`` writes it,
    every other character as it is, and text with a UTF-8 encoding handed back unchanged (the
    reader tells a span that needs a copy by the object coming back being a new one)."""
    escaped = escape_surrogates(text)
    assert escaped == text.encode("utf-8", "backslashreplace").decode("utf-8")
    holds = any("\ud800" <= c <= "\udfff" for c in text)
    assert (escaped is not text) == holds
