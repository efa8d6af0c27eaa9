"""The raw ``anthropic`` client in a hand-written tool loop, for the ``*-anthropic`` sources.

Like the raw OpenAI sources: an application ``agent_run`` span around a Messages API loop on
the scripted ``fake_anthropic.py`` server, tools answered with ``tool_result`` content blocks
(``is_error: true`` when the scripted tool failed), no tool spans of its own. Each source picks
the instrumentation that records the client: ``run_openinference``, ``run_openllmetry``,
``run_openllmetry_events`` or ``run_contrib`` (named as ``fw_anthropic:<function>`` in
``capture.py``'s ``SOURCES``). With ``stream=True`` (the ``*-anthropic-stream`` sources) each
call goes through the SDK's streaming helper, ``client.messages.stream(...)``, consuming the
text as it arrives and reading the message the SDK assembled from the deltas at the end, as
production agents do.
"""

from __future__ import annotations

import json
from typing import Any

from fake_anthropic import MODEL, FakeAnthropic
from scenarios import TOOL_SCHEMAS, Scenario, Tools

ANTHROPIC_TOOLS = [
    {
        "name": schema["function"]["name"],
        "description": schema["function"]["description"],
        "input_schema": schema["function"]["parameters"],
    }
    for schema in TOOL_SCHEMAS
]
"""The scenarios' tools in the Messages API's own tool format."""


def run_openinference(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """openinference-instrumentation-anthropic (Arize OpenInference conventions)."""
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    AnthropicInstrumentor().instrument(tracer_provider=tracer_provider)
    _loop(scenario, tracer_provider, tools, executed, stream)


def run_openllmetry(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """opentelemetry-instrumentation-anthropic (Traceloop OpenLLMetry), span attributes."""
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    AnthropicInstrumentor().instrument(tracer_provider=tracer_provider)
    _loop(scenario, tracer_provider, tools, executed, stream)


def run_openllmetry_events(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """The same OpenLLMetry instrumentation with ``use_attributes=False``: message content as
    log-based ``gen_ai.*`` events instead of span attributes."""
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    AnthropicInstrumentor(use_attributes=False).instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    _loop(scenario, tracer_provider, tools, executed, stream)


def run_contrib(
    scenario: Scenario,
    tracer_provider: Any,
    logger_provider: Any,
    tools: Tools,
    executed: list[str],
    stream: bool = False,
) -> None:
    """opentelemetry-instrumentation-genai-anthropic (python-contrib, opentelemetry-util-genai)."""
    from opentelemetry.instrumentation.genai.anthropic import AnthropicInstrumentor

    AnthropicInstrumentor().instrument(
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    _loop(scenario, tracer_provider, tools, executed, stream)


def _loop(
    scenario: Scenario, tracer_provider: Any, tools: Tools, executed: list[str], stream: bool
) -> None:
    """The tool loop: call the model, run each ``tool_use`` block, send the results back."""
    import anthropic

    tracer = tracer_provider.get_tracer("capture.app")
    with FakeAnthropic(scenario) as base_url:
        client = anthropic.Anthropic(base_url=base_url, api_key="capture-not-a-key", max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "user", "content": scenario.prompt}]
        with tracer.start_as_current_span("agent_run"):
            for _ in range(10):
                request: dict[str, Any] = {
                    "model": MODEL,
                    "max_tokens": 1024,
                    "system": scenario.system,
                    "messages": messages,
                    "tools": ANTHROPIC_TOOLS,
                }
                if scenario.reasoning:  # extended thinking on: the model answers with it
                    request["max_tokens"] = 4096
                    request["thinking"] = {"type": "enabled", "budget_tokens": 2048}
                if stream:
                    with client.messages.stream(**request) as events:
                        for _text in events.text_stream:
                            pass  # an app would show it as it arrives
                        response = events.get_final_message()
                else:
                    response = client.messages.create(**request)
                uses = [block for block in response.content if block.type == "tool_use"]
                if response.stop_reason != "tool_use" or not uses:
                    break
                messages.append(
                    {"role": "assistant", "content": [b.model_dump() for b in response.content]}
                )
                messages.append(
                    {"role": "user", "content": [_tool_result(tools, executed, u) for u in uses]}
                )


def _tool_result(tools: Tools, executed: list[str], use: Any) -> dict[str, Any]:
    """Run one requested tool; a failure goes back as ``is_error`` with the error text."""
    executed.append(use.name)
    content = tools.call(use.name, dict(use.input))
    parsed = json.loads(content)
    failed = isinstance(parsed, dict) and "error" in parsed
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": use.id, "content": content}
    if failed:
        block["is_error"] = True
    return block
