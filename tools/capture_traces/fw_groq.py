"""The ``groq`` client in a hand-written tool loop, traced by
``openinference-instrumentation-groq`` (``run``, the ``groq-openinference`` source) or by
OpenLLMetry's ``opentelemetry-instrumentation-groq`` (``run_openllmetry``,
``groq-openllmetry``).

The loop is the raw OpenAI sources' loop on Groq's own SDK: ``client.chat.completions.create``
with the scripted tools' schemas, inside the application's ``agent_run`` span; a failed tool
goes back to the model as ``{"error": ...}``. Groq's API is OpenAI-compatible under
``/openai/v1``, so the client's ``base_url`` is the scripted ``fake_openai.py`` server's root
and the request lands on its ``.../chat/completions`` path. The instrumentation makes no tool
spans (tool calls live in the model spans only); neither does OpenLLMetry's.
"""

from __future__ import annotations

import json
from typing import Any

from fake_openai import FakeOpenAI
from scenarios import TOOL_SCHEMAS, Scenario, Tools


def run(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One scenario through ``groq.Groq().chat.completions.create`` under OpenInference."""
    from openinference.instrumentation.groq import GroqInstrumentor

    GroqInstrumentor().instrument(tracer_provider=tracer_provider)
    _loop(scenario, tracer_provider, tools, executed)


def run_openllmetry(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same loop under OpenLLMetry's Groq instrumentation (span attributes, its default;
    content switch ``TRACELOOP_TRACE_CONTENT``)."""
    from opentelemetry.instrumentation.groq import GroqInstrumentor

    GroqInstrumentor().instrument(tracer_provider=tracer_provider)
    _loop(scenario, tracer_provider, tools, executed)


def _loop(scenario: Scenario, tracer_provider: Any, tools: Tools, executed: list[str]) -> None:
    """The tool loop itself, on whatever instrumentation the caller installed."""
    import groq

    tracer = tracer_provider.get_tracer("capture.app")
    with FakeOpenAI(scenario) as base_url, tracer.start_as_current_span("agent_run"):
        client = groq.Groq(base_url=base_url.removesuffix("/v1"), api_key="capture-not-a-key")
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": scenario.system},
            {"role": "user", "content": scenario.prompt},
        ]
        for _ in range(10):
            response = client.chat.completions.create(
                model="llama-3.3-70b-versatile",
                messages=messages,
                tools=TOOL_SCHEMAS,
                temperature=0.0,
            )
            message = response.choices[0].message
            if not message.tool_calls:
                break
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                executed.append(call.function.name)
                result = tools.call(call.function.name, json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
