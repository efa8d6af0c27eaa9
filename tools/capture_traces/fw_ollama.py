"""Ollama's Python client (``ollama``) in a hand-written tool loop against ``fake_ollama.py``,
traced by OpenLLMetry's ``opentelemetry-instrumentation-ollama`` (``run_openllmetry``, the
``ollama-openllmetry`` source) or OpenInference's ``openinference-instrumentation-ollama``
(``run_openinference``, ``ollama-openinference``).

The loop is the raw OpenAI sources' loop on Ollama's native API: ``Client.chat`` with the
scripted tools' schemas, inside the application's ``agent_run`` span; the assistant message
goes back into the history as the client returned it, and each tool's result follows as a
``role: tool`` message naming the tool (``tool_name``, as Ollama documents: its tool calls
carry no id); a failed tool goes back to the model as ``{"error": ...}``. Neither
instrumentation makes tool spans: the tool calls live in the model spans only.
"""

from __future__ import annotations

from typing import Any

from fake_ollama import MODEL, FakeOllama
from scenarios import TOOL_SCHEMAS, Scenario, Tools


def _loop(scenario: Scenario, tracer_provider: Any, tools: Tools, executed: list[str]) -> None:
    import ollama

    tracer = tracer_provider.get_tracer("capture.app")
    with FakeOllama(scenario) as host, tracer.start_as_current_span("agent_run"):
        client = ollama.Client(host=host)
        messages: list[Any] = [
            {"role": "system", "content": scenario.system},
            {"role": "user", "content": scenario.prompt},
        ]
        for _ in range(10):
            response = client.chat(
                model=MODEL,
                messages=messages,
                tools=TOOL_SCHEMAS,
                options={"temperature": 0.0},
                think=True if scenario.reasoning else None,  # a thinking model's ``thinking``
            )
            message = response.message
            if not message.tool_calls:
                break
            messages.append(message)
            for call in message.tool_calls:
                name = call.function.name
                executed.append(name)
                result = tools.call(name, dict(call.function.arguments))
                messages.append({"role": "tool", "content": result, "tool_name": name})


def run_openllmetry(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One scenario under OpenLLMetry's Ollama instrumentation (span attributes, its
    default; content switch ``TRACELOOP_TRACE_CONTENT``)."""
    from opentelemetry.instrumentation.ollama import OllamaInstrumentor

    OllamaInstrumentor().instrument(tracer_provider=tracer_provider)
    _loop(scenario, tracer_provider, tools, executed)


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One scenario under OpenInference's Ollama instrumentation (content switch
    ``OPENINFERENCE_HIDE_*``, read by its ``TraceConfig``)."""
    from openinference.instrumentation.ollama import OllamaInstrumentor

    OllamaInstrumentor().instrument(tracer_provider=tracer_provider)
    _loop(scenario, tracer_provider, tools, executed)
