"""The ``cohere`` client's v2 chat API in a hand-written tool loop, traced by OpenLLMetry's
``opentelemetry-instrumentation-cohere`` (``run_openllmetry``, the ``cohere-openllmetry``
source) or by OpenLIT's ``openlit.init()`` (``run_openlit``, ``openlit-cohere``).

The loop follows Cohere's tool-use guide: ``ClientV2.chat`` with the scripted tools' schemas
(the v2 API takes the chat-completions ``{"type": "function", "function": ...}`` form), inside
the application's ``agent_run`` span; the assistant turn goes back with its ``tool_plan`` and
``tool_calls``, and each result as a ``role: tool`` message whose content is a list of
``{"type": "document", "document": {"data": <result JSON>}}`` items, the documented form (a
failed tool's ``{"error": ...}`` likewise). The model is ``fake_cohere.py`` on 127.0.0.1
(Cohere's own wire format). The instrumentation makes no tool spans (tool calls live in the
model spans only).
"""

from __future__ import annotations

import json
from typing import Any

from fake_cohere import MODEL, FakeCohere
from scenarios import TOOL_SCHEMAS, Scenario, Tools


def run_openllmetry(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """One scenario through ``cohere.ClientV2().chat`` under OpenLLMetry's Cohere
    instrumentation (its default span attributes; content switch
    ``TRACELOOP_TRACE_CONTENT``)."""
    from opentelemetry.instrumentation.cohere import CohereInstrumentor

    CohereInstrumentor().instrument(tracer_provider=tracer_provider)
    _loop(scenario, tracer_provider, tools, executed)


def run_openlit(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
) -> None:
    """The same loop under ``openlit.init()`` (its cohere instrumentor; content switch
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``)."""
    from fw_openai_agents import init_openlit

    init_openlit(tracer_provider, logger_provider)
    _loop(scenario, tracer_provider, tools, executed)


def _loop(scenario: Scenario, tracer_provider: Any, tools: Tools, executed: list[str]) -> None:
    """The tool loop itself, on whatever instrumentation the caller installed."""
    import cohere

    tracer = tracer_provider.get_tracer("capture.app")
    with FakeCohere(scenario) as base_url, tracer.start_as_current_span("agent_run"):
        client = cohere.ClientV2(api_key="capture-not-a-key", base_url=base_url)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": scenario.system},
            {"role": "user", "content": scenario.prompt},
        ]
        for _ in range(10):
            response = client.chat(
                model=MODEL,
                messages=messages,  # type: ignore[arg-type]
                tools=TOOL_SCHEMAS,  # type: ignore[arg-type]
                temperature=0.0,
            )
            message = response.message
            if not message.tool_calls:
                break
            messages.append(
                {
                    "role": "assistant",
                    "tool_plan": message.tool_plan,
                    "tool_calls": [
                        call.model_dump(exclude_none=True) for call in message.tool_calls
                    ],
                }
            )
            for call in message.tool_calls:
                assert call.function is not None and call.function.name is not None
                name = call.function.name
                executed.append(name)
                result = tools.call(name, json.loads(call.function.arguments or "{}"))
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call.id,
                        "content": [{"type": "document", "document": {"data": result}}],
                    }
                )
